"""The lab's pilot nights: one sleep stage per 30 s epoch, the first epochs of each night.

The Tasks tools score them (labserver.tasks.jobs) and the Apps tools draw them (labserver.apps).
"""

from collections import Counter

EPOCH_SECONDS = 30
NIGHTS = {
    "P07": "W W N1 N2 N2 N3 N1 N3 N2 N2 REM REM N2 N1 N2 N3 N3 N2 REM W".split(),
    "P08": "W N1 N1 N2 N2 N2 N3 N3 N2 REM N2 N2 N3 N2 N1 REM REM N2 N2 W".split(),
}


def tally(stages: list[str], order: tuple[str, ...]) -> str:
    """How many epochs of each stage, in the given order, leaving out stages that never occur."""
    counts = Counter(stages)
    return ", ".join(f"{stage} {counts[stage]}" for stage in order if counts[stage])

"""The test run itself: `python -m bench.test_run_bench [--figures FILE]`.

Runs `make test` (the README's command) and prints where its time went, from the figures the run writes
(bench.test_times): wall time and CPU time, each worker's busy time, the longest files with their worker, the
slowest items, and the load average before and after. The ratio against a baseline is the run against its own
ideal: the test time spread evenly over the workers. A ratio near 1 means the work is well spread; well above 1, one long file
(a pole) keeps the run going while the other workers idle. `--figures FILE` prints a stored run's figures
without running anything (CI keeps artifacts/test-times.json).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.test_times import REPORT, summary_lines

ROOT = Path(__file__).resolve().parents[1]


def show(figures):
    workers = figures["workers"]
    ideal = figures["test_s"] / max(len(workers), 1)
    print(f"wall {figures['wall_s']:.0f} s for {figures['test_s']:.0f} s of test time on {len(workers)} workers; "
          f"an even spread would take {ideal:.0f} s: ratio {figures['wall_s'] / ideal:.2f}")
    for line in summary_lines(figures, shown_files=20):
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", type=Path, help="print a stored run's figures instead of running make test")
    args = parser.parse_args()
    if args.figures:
        show(json.loads(args.figures.read_text()))
        return 0
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    code = subprocess.run(["make", "test"], cwd=ROOT).returncode
    print(f"make test: exit {code}, {time.monotonic() - started:.0f} s in all (install and lint included); "
          f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    show(json.loads((ROOT / REPORT).read_text()))
    return code


if __name__ == "__main__":
    sys.exit(main())

"""`python -m bench.tap_bench`: what the stdio tap adds to a round trip.

The same bare loop (write a line, read a line) talks to the lab server directly and
through `python -m mcpwire.tap`, on `server/discover`, `tools/list` and a `tools/call`,
in alternating blocks so that drift on the machine hits both alike. Prints p50/p99 and
the ratio for every workload. Goal: the tapped p50 within 1.2x of the direct one.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from bench.mcpwire_bench import METHODS, BareStdio, goal, p50, report, time_calls

CALLS, WARMUP, ROUNDS = 50, 30, 30  # small blocks, many of them: drift on a two-core machine hits both alike
GOAL = 1.2


def main() -> int:
    started = time.perf_counter()
    lab = [sys.executable, "-m", "labserver"]
    with tempfile.TemporaryDirectory() as folder:
        session = Path(folder) / "session.jsonl"
        tapped = [sys.executable, "-m", "mcpwire.tap", "--out", str(session), "--", *lab]
        loops = {"direct": BareStdio(lab), "through the tap": BareStdio(tapped)}
        try:
            for loop in loops.values():
                loop.call("server/discover", {})  # the first reply waits for the server to load
            for method, params in METHODS:
                calls = {name: lambda loop=loop, m=method, p=params: loop.call(m, p) for name, loop in loops.items()}
                for call in calls.values():
                    time_calls(call, WARMUP)
                samples: dict[str, list[float]] = {name: [] for name in calls}
                for _ in range(ROUNDS):
                    for name, call in calls.items():
                        samples[name] += time_calls(call, CALLS)
                label = f"{method} {params['name']}" if method == "tools/call" else method
                report(f"stdio: {label} round trip", samples, "direct")
                ratio = p50(samples["through the tap"]) / p50(samples["direct"])
                goal(f"tap p50 within {GOAL}x of direct on {method} ({ratio:.2f}x)", ratio <= GOAL)
        finally:
            for loop in loops.values():
                loop.close()
        recorded = sum(1 for _ in session.open())
    print(f"\n(the tap recorded {recorded} exchanges; one run, {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

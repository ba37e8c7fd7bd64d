"""What a task poll costs the lab: tasks/get p50 against server/discover p50 on the same stdio lab.

Run: `python -m bench.tasks_bench`. `server/discover` is the cheapest request the lab answers; a
`tasks/get` also reads the task's row from the SQLite store in the notes folder. The two take turns
in blocks of calls on one lab, so a busy machine slows both alike; the ratio is the median of the
per-block p50 ratios. Measured twice: with one task in the store, then with 1,000.
The goal it checks: a poll costs less than twice the cheapest call, even with 1,000 tasks stored.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time

from labserver.tasks.store import TaskStore
from mcpwire import StdioWire, tasks

WARM_UP = 50
BLOCKS = 20
BLOCK_CALLS = 25
STORED = 1000
GOAL = 2.0


def p50(wire, method, params=None, meta=None):
    """The median seconds of BLOCK_CALLS sequential round trips of one request."""
    times = []
    for _ in range(BLOCK_CALLS):
        started = time.perf_counter()
        wire.request(method, params, meta=meta) if meta else wire.request(method, params)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(wire, task_id):
    """(tasks/get p50 s, server/discover p50 s, median of the per-block ratios)."""
    poll = ("tasks/get", {"taskId": task_id}, tasks.declare())
    for _ in range(WARM_UP):
        wire.request(*poll[:2], meta=poll[2])
        wire.request("server/discover")
    gets, discovers, ratios = [], [], []
    for _ in range(BLOCKS):
        gets.append(p50(wire, *poll))
        discovers.append(p50(wire, "server/discover"))
        ratios.append(gets[-1] / discovers[-1])
    return statistics.median(gets), statistics.median(discovers), statistics.median(ratios)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="tasks-bench-") as notes, StdioWire.labserver("--tasks", "--notes", notes) as lab:
        reply = lab.request("tools/call", {"name": "score_night", "arguments": {"night": "P07", "epochs": 1, "pause_ms": 0}},
                            meta=tasks.declare())
        task_id = reply.result["taskId"]
        tasks.follow(lab, task_id, deadline_s=30)
        rows = [("1 task in the store", *measure(lab, task_id))]
        store = TaskStore(notes)
        for _ in range(STORED - 1):
            store.create(owner="", tool="score_night", status_message="Seeded.", ttl_ms=600_000, poll_ms=1000,
                         worker="bench")
        rows.append((f"{store.count():,} tasks in the store", *measure(lab, task_id)))
    print(f"{'stdio lab, --tasks':<26} {'tasks/get p50':>14} {'server/discover p50':>20} {'ratio':>7}")
    for label, get, discover, ratio in rows:
        print(f"{label:<26} {get * 1000:>11.2f} ms {discover * 1000:>17.2f} ms {ratio:>7.2f}")
    worst = max(ratio for *_, ratio in rows)
    print(f"goal: a poll costs less than {GOAL:g}x server/discover: {'met' if worst < GOAL else 'NOT met'} ({worst:.2f}x)")
    return 0 if worst < GOAL else 1


if __name__ == "__main__":
    sys.exit(main())

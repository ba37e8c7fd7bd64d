"""Where a test run's time goes: a pytest plugin the root conftest registers on the controller.

xdist hands every worker's reports to the controller, each tagged with the worker that ran it, so one place
sees them all. At the end the run prints each worker's busy time, the files that took longest (with their
worker: `--dist loadfile` keeps a file on one worker, so a long file is a long pole) and the slowest items,
and writes the same figures to artifacts/test-times.json for `python -m bench.test_run_bench`.
"""

import json
import time
from collections import defaultdict
from pathlib import Path

REPORT = Path("artifacts/test-times.json")
SHOWN_FILES = 15
SHOWN_ITEMS = 20


def file_of(nodeid):
    return nodeid.split("::")[0]


class RunTimes:
    def __init__(self):
        self.started = time.monotonic()
        self.items = defaultdict(float)  # nodeid -> seconds over setup, call and teardown
        self.worker_of = {}

    def pytest_runtest_logreport(self, report):
        self.items[report.nodeid] += report.duration
        node = getattr(report, "node", None)
        self.worker_of[report.nodeid] = node.gateway.id if node is not None else "main"

    def figures(self):
        files = defaultdict(lambda: {"seconds": 0.0, "items": 0, "worker": ""})
        workers = defaultdict(float)
        for nodeid, seconds in self.items.items():
            entry = files[file_of(nodeid)]
            entry["seconds"] += seconds
            entry["items"] += 1
            entry["worker"] = self.worker_of[nodeid]
            workers[self.worker_of[nodeid]] += seconds
        by_time = sorted(files.items(), key=lambda pair: -pair[1]["seconds"])
        slowest = sorted(self.items.items(), key=lambda pair: -pair[1])[:SHOWN_ITEMS]
        return {
            "wall_s": round(time.monotonic() - self.started, 1),
            "test_s": round(sum(self.items.values()), 1),
            "workers": {name: round(seconds, 1) for name, seconds in sorted(workers.items())},
            "files": [{"file": name, **entry, "seconds": round(entry["seconds"], 1)} for name, entry in by_time],
            "slowest": [{"item": nodeid, "seconds": round(seconds, 1)} for nodeid, seconds in slowest],
        }

    def pytest_terminal_summary(self, terminalreporter):
        if not self.items:
            return
        figures = self.figures()
        REPORT.parent.mkdir(exist_ok=True)
        REPORT.write_text(json.dumps(figures, indent=1) + "\n")
        write = terminalreporter.write_line
        terminalreporter.section("where the time went")
        write(f"wall {figures['wall_s']:.0f} s, test time {figures['test_s']:.0f} s; busy per worker: "
              + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in figures["workers"].items()))
        write(f"longest files (of {len(figures['files'])}):")
        for entry in figures["files"][:SHOWN_FILES]:
            write(f"  {entry['seconds']:7.1f} s  {entry['worker']:>4}  {entry['items']:4} items  {entry['file']}")
        write(f"slowest {len(figures['slowest'])} items:")
        for entry in figures["slowest"]:
            write(f"  {entry['seconds']:7.1f} s  {entry['item']}")

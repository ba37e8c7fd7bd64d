"""Where a test run's time goes: a pytest plugin the root conftest registers on the controller.

xdist hands every worker's reports to the controller, each tagged with the worker that ran it, so one place
sees them all. At the end the run prints each worker's busy time, the files that took longest (with their
worker: `--dist loadfile` keeps a file on one worker, so a long file is a long pole) and the slowest items,
and writes the same figures to artifacts/test-times.json (or the file `TEST_TIMES` names) for
`python -m bench.test_run_bench`.

Beside each wall time stands the CPU time it cost: ItemCpu, registered in every process that runs tests,
adds to each report the CPU its phase used in that process (time.process_time) and in the processes it
started and waited for (resource.getrusage(RUSAGE_CHILDREN)). A child counts only once it has been waited
for, and then in the phase that waited: a kernel nbval starts for a notebook counts in the teardown of the
notebook's last cell, a server a module fixture starts in the teardown of the module's last item. Labs the
warm starter forks (labserver.warm) are its children, not the worker's: their CPU is not in any item's
figure, and the summary gives their total for the run apart.
"""

import json
import os
import resource
import time
from collections import defaultdict
from pathlib import Path

import pytest

REPORT = Path(os.environ.get("TEST_TIMES") or "artifacts/test-times.json")
SHOWN_FILES = 15
SHOWN_ITEMS = 20


def file_of(nodeid):
    return nodeid.split("::")[0]


def cpu_seconds():
    """This process's CPU and that of its children waited for so far."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def warm_labs_cpu():
    """CPU of the labs the warm starter forked and waited for, read from the starter's /proc entry; None off Linux."""
    try:
        children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
        for pid in children:
            if b"labserver.warm" in Path(f"/proc/{pid}/cmdline").read_bytes():
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # cutime, cstime
    except OSError:
        return None
    return None


class ItemCpu:
    """Adds cpu_s to each phase's report; xdist sends a report's attributes on to the controller."""

    def __init__(self):
        self.mark = cpu_seconds()

    def pytest_runtest_logstart(self):
        self.mark = cpu_seconds()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self):
        report = yield  # a failing hook's exception passes through here untouched
        now = cpu_seconds()
        report.cpu_s = now - self.mark
        self.mark = now
        return report


class RunTimes:
    def __init__(self):
        self.started = time.monotonic()
        self.cpu_started = cpu_seconds()
        self.items = defaultdict(float)  # nodeid -> seconds over setup, call and teardown
        self.cpu = defaultdict(float)  # nodeid -> CPU seconds over the same
        self.worker_of = {}

    def pytest_runtest_logreport(self, report):
        self.items[report.nodeid] += report.duration
        self.cpu[report.nodeid] += getattr(report, "cpu_s", 0.0)
        node = getattr(report, "node", None)
        self.worker_of[report.nodeid] = node.gateway.id if node is not None else "main"

    def figures(self):
        files = defaultdict(lambda: {"seconds": 0.0, "cpu_s": 0.0, "items": 0, "worker": ""})
        workers = defaultdict(float)
        for nodeid, seconds in self.items.items():
            entry = files[file_of(nodeid)]
            entry["seconds"] += seconds
            entry["cpu_s"] += self.cpu[nodeid]
            entry["items"] += 1
            entry["worker"] = self.worker_of[nodeid]
            workers[self.worker_of[nodeid]] += seconds
        by_time = sorted(files.items(), key=lambda pair: -pair[1]["seconds"])
        slowest = sorted(self.items.items(), key=lambda pair: -pair[1])[:SHOWN_ITEMS]
        warm = warm_labs_cpu()
        return {
            "wall_s": round(time.monotonic() - self.started, 1),
            "test_s": round(sum(self.items.values()), 1),
            "cpu_s": round(sum(self.cpu.values()), 1),
            "controller_cpu_s": round(cpu_seconds() - self.cpu_started, 1),
            "warm_labs_cpu_s": None if warm is None else round(warm, 1),
            "workers": {name: round(seconds, 1) for name, seconds in sorted(workers.items())},
            "files": [{"file": name, **entry, "seconds": round(entry["seconds"], 1), "cpu_s": round(entry["cpu_s"], 1)}
                      for name, entry in by_time],
            "slowest": [{"item": nodeid, "seconds": round(seconds, 1), "cpu_s": round(self.cpu[nodeid], 1)}
                        for nodeid, seconds in slowest],
        }

    def pytest_terminal_summary(self, terminalreporter):
        if not self.items:
            return
        figures = self.figures()
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(json.dumps(figures, indent=1) + "\n")
        terminalreporter.section("where the time went")
        for line in summary_lines(figures, SHOWN_FILES):
            terminalreporter.write_line(line)


def summary_lines(figures, shown_files):
    """The figures as the run and bench.test_run_bench print them: wall time and CPU time side by side."""
    warm = figures.get("warm_labs_cpu_s")
    yield (f"wall {figures['wall_s']:.0f} s, test time {figures['test_s']:.0f} s, CPU in the tests "
           f"{figures.get('cpu_s', 0):.0f} s" + ("" if warm is None else f" (+ {warm:.0f} s in warm-forked labs)")
           + "; busy per worker: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in figures["workers"].items()))
    yield f"longest files (of {len(figures['files'])}), wall and CPU:"
    for entry in figures["files"][:shown_files]:
        yield (f"  {entry['seconds']:7.1f} s  {entry.get('cpu_s', 0):7.1f} s cpu  {entry['worker']:>4}  "
               f"{entry['items']:4} items  {entry['file']}")
    yield f"slowest {len(figures['slowest'])} items, wall and CPU:"
    for entry in figures["slowest"]:
        yield f"  {entry['seconds']:7.1f} s  {entry.get('cpu_s', 0):7.1f} s cpu  {entry['item']}"

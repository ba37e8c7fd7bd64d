"""Run the official MCP conformance suite and print every check it made.

    python -m mcpwire.suite server --requirements 2026-07-28 --lab --conformance
    python -m mcpwire.suite server --scenario tools-list --url http://127.0.0.1:PORT/mcp
    python -m mcpwire.suite server --scenario tools-list --command "python my_server.py"
    python -m mcpwire.suite client --scenario tools_call --command "python -m mcpwire.conformance"

The suite is `@modelcontextprotocol/conformance` at exactly the version conformance/package-lock.json pins
(`make lab` installs it), run on the kit's own Node (`mcpwire.node`). Against a server the suite is the
client: it connects to a URL, given with `--url`, or read from the first stdout line of a server it starts
(`--command`, or `--lab FLAGS`: `python -m labserver --http FLAGS`, which prints its URL first). Against a
client the suite is the server: it starts `--command` with its own URL as the last argument (the suite
splits the command at spaces, so no part of it may hold one). `--requirements REVISION` runs what that
revision requires, `--scenario NAME` (repeatable) named scenarios. A named scenario runs at the suite's default
revision unless `--spec-version` names one: without `--spec-version 2026-07-28` the suite's client opens with the
legacy `initialize` handshake, which a server that speaks only 2026-07-28 refuses.

Each check prints as one line: its status, the suite's own check id, and its message. `--json` prints the
same as JSON. `--expected-failures FILE` is the suite's own baseline file: a `server:` and a `client:` list
of `scenario` or `scenario:check-id` entries. The suite judges a run against it (exit 1 on a failure the
file does not list, and on an entry that now passes: a stale entry must go), but under `--requirements` it
judges only the scenarios the revision scores; this runner applies the same rules to every scenario that
ran, extensions included, and exits 1 if either judgement fails. Without a file, every FAILURE or WARNING
counts as unexpected (the suite itself then fails a run on a FAILURE only).
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from . import node, process

KIT = Path(__file__).resolve().parents[1]
# A checkout has the suite beside mcpwire (`make lab` installs it there). Where the kit is an installed package, as
# in the Binder and hub image, binder/postBuild installs it from the same lock outside the home folder, and
# binder/start names that folder in MCP_CONFORMANCE_DIR.
SUITE = Path(os.environ.get("MCP_CONFORMANCE_DIR") or KIT / "conformance") / "node_modules" / ".bin" / "conformance"
NOT_PASSING = ("FAILURE", "WARNING")  # what the suite's baseline rules count as a failure
SEVERITY = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1}  # an id's verdict is its most severe occurrence
# A scenario's results folder: [server-]<scenario>-<start time, ISO 8601 with : and . as ->.
FOLDER = re.compile(r"^(?:server-)?(?P<scenario>.+)-(?P<start>\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z)$")


class SuiteError(Exception):
    """The suite could not run (not installed, bad arguments, a server that never printed its URL)."""


@dataclass
class Check:
    scenario: str
    id: str
    status: str  # SUCCESS, FAILURE, WARNING, SKIPPED or INFO
    message: str  # the failure's own message, else what the check verifies


@dataclass
class Scenario:
    name: str
    seconds: float | None  # None when the scenario never finished
    checks: list[Check]
    client_stderr: str = ""  # what a tested client printed on stderr (the suite keeps it as stderr.txt)

    def count(self, status):
        return sum(check.status == status for check in self.checks)


@dataclass
class Run:
    exit_code: int  # the suite's own
    scenarios: list[Scenario]
    unexpected: list[Check] = field(default_factory=list)  # failing checks the expected-failures file does not list
    stale: list[str] = field(default_factory=list)  # entries of that file that now pass
    output: str = ""  # what the suite printed

    @property
    def checks(self):
        return [check for scenario in self.scenarios for check in scenario.checks]

    def count(self, status):
        return sum(scenario.count(status) for scenario in self.scenarios)

    @property
    def ok(self):
        return self.exit_code == 0 and not self.unexpected and not self.stale


def read_results(folder):
    """Every scenario's checks from a results folder (the suite's `-o`), in the order the scenarios started."""
    started_at = []
    for found in sorted(Path(folder).rglob("*")):
        named = FOLDER.match(found.name) if found.is_dir() else None
        if not named:
            continue
        name = str(found.relative_to(folder).parent / named["scenario"]).removeprefix("./").replace("\\", "/")
        start = datetime.strptime(named["start"], "%Y-%m-%dT%H-%M-%S-%fZ").replace(tzinfo=timezone.utc).timestamp()
        written = found / "checks.json"
        if not written.exists():  # the suite made the folder, then the scenario crashed or timed out
            started_at.append((start, Scenario(name, None, [Check(name, name, "FAILURE", "the scenario wrote no checks.json")])))
            continue
        checks = [Check(name, raw["id"], raw["status"], raw.get("errorMessage") or raw.get("description", ""))
                  for raw in json.loads(written.read_text())]
        stderr = found / "stderr.txt"
        client_stderr = stderr.read_text(errors="replace") if stderr.exists() else ""
        started_at.append((start, Scenario(name, round(written.stat().st_mtime - start, 2), checks, client_stderr)))
    return [scenario for _, scenario in sorted(started_at, key=lambda pair: (pair[0], pair[1].name))]


def read_expected_failures(path, role):
    """The `role` ("server" or "client") list of the suite's expected-failures file."""
    listed = yaml.safe_load(Path(path).read_text()) or {}
    return [str(entry) for entry in listed.get(role) or []]


def judge(scenarios, entries):
    """The suite's baseline rules (its README, "Expected Failures"), applied to every scenario given.

    A `scenario` entry excuses the whole scenario; a `scenario:check-id` entry that one check, every occurrence
    of the id counting as its most severe one. Returns (unexpected failing checks, stale entries).
    """
    whole = {entry for entry in entries if ":" not in entry}
    by_check = {}
    for entry in entries:
        if ":" in entry:
            scenario, check_id = entry.split(":", 1)
            by_check.setdefault(scenario, set()).add(check_id)
    unexpected, stale = [], []
    for scenario in scenarios:
        failing = [check for check in scenario.checks if check.status in NOT_PASSING]
        if scenario.name in whole:
            if not failing:
                stale.append(scenario.name)
            continue
        excused = by_check.get(scenario.name, set())
        unexpected += [check for check in failing if check.id not in excused]
        stale += [f"{scenario.name}:{check_id}" for check_id in sorted(excused) if verdict(scenario, check_id) == "SUCCESS"]
    return unexpected, stale


def verdict(scenario, check_id):
    """The most severe status of every occurrence of `check_id` (INFO aside), None if it never ran."""
    statuses = [check.status for check in scenario.checks if check.id == check_id and check.status != "INFO"]
    return max(statuses, key=lambda status: SEVERITY.get(status, 0), default=None)


def scenario_names(role, requirements=None):
    """The suite's `role` ("server" or "client") scenarios, from `conformance list`: every one, or those a run of
    `requirements` runs (the scored ones, then those it runs without scoring, such as extensions)."""
    _installed()
    selection = ["--requirements", requirements] if requirements else [f"--{role}"]
    listed = subprocess.run(node.command("node", str(SUITE), "list", *selection), env=node.environment(),
                            capture_output=True, text=True, check=True).stdout
    heading = "Server scenarios" if role == "server" else "Client scenarios"
    names, section = [], ""
    for line in listed.splitlines():
        if line and not line.startswith(" "):
            section = line
        elif line.strip().startswith("- "):
            name, _, tags = line.strip()[2:].partition(" [")
            unscored_here = section.startswith("Run and reported") and tags == f"{role}]"
            if section.startswith(heading) or unscored_here:
                names.append(name)
    return names


def _installed():
    if not SUITE.exists():
        raise SuiteError(f"the conformance suite is not installed ({SUITE}): run `make lab` first")


def run_suite(role, target, scenarios=(), requirements=None, expected_failures=None, output_dir=None, timeout_ms=None,
              spec_version=None):
    """Run the suite once per scenario (or once for `requirements`) and read every check it wrote."""
    _installed()
    if bool(scenarios) == bool(requirements):
        raise SuiteError("give either scenarios or requirements")
    target_flag = "--url" if role == "server" else "--command"
    common = [target_flag, target, "-o", str(output_dir)]
    common += ["--expected-failures", str(expected_failures)] if expected_failures else []
    common += ["--timeout", str(timeout_ms)] if timeout_ms else []
    common += ["--spec-version", spec_version] if spec_version and not requirements else []
    runs = [["--requirements", requirements]] if requirements else [["--scenario", name] for name in scenarios]
    exit_code, output = 0, []
    for selection in runs:
        done = subprocess.run(node.command("node", str(SUITE), role, *selection, *common), env=node.environment(),
                              capture_output=True, text=True)
        exit_code = max(exit_code, done.returncode)
        output.append(done.stdout + done.stderr)
    found = read_results(output_dir)
    if not found:
        raise SuiteError(f"the suite ran no scenario (exit code {exit_code}):\n{''.join(output)[-2000:]}")
    entries = read_expected_failures(expected_failures, role) if expected_failures else []
    unexpected, stale = judge(found, entries)
    return Run(exit_code, found, unexpected, stale, "".join(output))


@contextmanager
def started(command, startup_timeout=30.0):
    """Start a server that prints its URL as its first stdout line; yield the URL; stop it (and its children)."""
    server = process.start(command)
    stdout_lines, stderr_lines = [], []
    printed = threading.Event()
    process.collect_lines(server.stdout, stdout_lines, on_line=lambda line: printed.set())
    process.collect_lines(server.stderr, stderr_lines)
    deadline = time.monotonic() + startup_timeout
    try:
        while not printed.wait(0.05):
            if server.poll() is not None or time.monotonic() > deadline:
                raise SuiteError(f"{shlex.join(command)} did not print its URL: {' | '.join(stderr_lines[-5:])}")
        yield stdout_lines[0].strip()
    finally:
        process.stop(server)


def lab_command(*flags):
    """`python -m labserver --http` with `flags`, stopped by closing its stdin."""
    return [sys.executable, "-m", "labserver", "--http", "--until-stdin-closes", *flags]


def server(*, url=None, command=None, lab=None, scenarios=(), requirements=None, expected_failures=None,
           output_dir=None, timeout_ms=None, spec_version=None):
    """Run the suite against a server: at `url`, or started from `command` (a list), or the lab with `lab` flags."""
    if sum(x is not None for x in (url, command, lab)) != 1:
        raise SuiteError("give one of url, command or lab")
    with _folder(output_dir) as folder:
        if url is not None:
            return run_suite("server", url, scenarios, requirements, expected_failures, folder, timeout_ms, spec_version)
        with started(command if command is not None else lab_command(*lab)) as started_url:
            return run_suite("server", started_url, scenarios, requirements, expected_failures, folder, timeout_ms,
                             spec_version)


def client(command, *, scenarios=(), requirements=None, expected_failures=None, output_dir=None, timeout_ms=None):
    """Run the suite against a client: the suite starts `command` (a string) once per scenario."""
    with _folder(output_dir) as folder:
        return run_suite("client", command, scenarios, requirements, expected_failures, folder, timeout_ms)


@contextmanager
def _folder(output_dir):
    if output_dir is not None:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        yield Path(output_dir).resolve()
    else:
        with tempfile.TemporaryDirectory(prefix="conformance-") as temporary:
            yield Path(temporary)


MARK = {"SUCCESS": "✓", "FAILURE": "✗", "WARNING": "!", "SKIPPED": "-", "INFO": "i"}


def report(run):
    """The run as text: every check under its scenario, then the totals and the judgement."""
    lines = []
    for scenario in run.scenarios:
        took = f"{scenario.seconds:.2f} s" if scenario.seconds is not None else "did not finish"
        lines.append(f"{scenario.name}  ({scenario.count('SUCCESS')} passed, {scenario.count('FAILURE')} failed, {took})")
        lines += [f"  {MARK.get(check.status, '?')} {check.status:<8} {check.id}: {check.message}" for check in scenario.checks]
        if scenario.client_stderr.strip() and any(check.status in NOT_PASSING for check in scenario.checks):
            lines += [f"  client stderr: {line}" for line in scenario.client_stderr.strip().splitlines()[-3:]]
    lines.append(f"Total: {run.count('SUCCESS')} passed, {run.count('FAILURE')} failed, {run.count('WARNING')} warnings "
                 f"in {len(run.scenarios)} scenarios; the suite exited {run.exit_code}")
    lines += [f"Not in the expected failures: {check.scenario}:{check.id}: {check.message}" for check in run.unexpected]
    lines += [f"Expected to fail but passes (remove it from the file): {entry}" for entry in run.stale]
    return "\n".join(lines)


def as_json(run):
    return json.dumps({**asdict(run), "ok": run.ok, "passed": run.count("SUCCESS"), "failed": run.count("FAILURE"),
                       "warnings": run.count("WARNING")}, indent=2, ensure_ascii=False)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m mcpwire.suite", description=__doc__.split("\n\n")[0])
    parser.add_argument("role", choices=["server", "client"], help="what is tested")
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--requirements", metavar="REVISION", help="what a revision requires, e.g. 2026-07-28")
    chosen.add_argument("--scenario", action="append", metavar="NAME", help="a scenario by name (repeatable)")
    parser.add_argument("--expected-failures", metavar="FILE", help="the suite's baseline of known failures (YAML)")
    parser.add_argument("-o", "--output-dir", metavar="DIR", help="keep each scenario's checks.json here")
    parser.add_argument("--timeout", metavar="MS", type=int, help="the suite's per-scenario timeout")
    parser.add_argument("--spec-version", metavar="REVISION",
                        help="(with --scenario) the revision the suite speaks, e.g. 2026-07-28")
    parser.add_argument("--json", action="store_true", help="print the run as JSON")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="(server) the URL of a server already running")
    target.add_argument("--command", help="(server) a server that prints its URL first; (client) the client")
    target.add_argument("--lab", nargs=argparse.REMAINDER, metavar="FLAGS",
                        help="(server) start `python -m labserver --http FLAGS`; the lab's flags follow it, last")
    args = parser.parse_args(argv)
    if args.role == "client" and args.command is None:
        parser.error("a client is tested with --command")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    options = {"scenarios": args.scenario or (), "requirements": args.requirements, "output_dir": args.output_dir,
               "expected_failures": args.expected_failures, "timeout_ms": args.timeout}
    try:
        if args.role == "client":
            run = client(args.command, **options)
        else:
            command = shlex.split(args.command) if args.command else None
            run = server(url=args.url, command=command, lab=args.lab, spec_version=args.spec_version, **options)
    except SuiteError as error:
        print(f"mcpwire.suite: {error}", file=sys.stderr)
        return 2
    print(as_json(run) if args.json else report(run))
    return 0 if run.ok else 1


if __name__ == "__main__":
    sys.exit(main())

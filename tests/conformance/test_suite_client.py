"""The official conformance suite on mcpwire's client (`python -m mcpwire.conformance`): what revision 2026-07-28
requires of a client (tools_call, request-metadata, every auth/* scenario of that revision, and the extensions
it runs without scoring), then every other auth/* scenario, judged against conformance/expected-failures.yml.
"""

import os
import sys
from pathlib import Path

import pytest

from mcpwire import suite

ROOT = Path(__file__).resolve().parents[2]
EXPECTED_FAILURES = ROOT / "conformance" / "expected-failures.yml"
# The suite splits the client's command at spaces: a path with a space in it is given relative to here.
PYTHON = os.path.relpath(sys.executable) if " " in sys.executable else sys.executable
CLIENT = f"{PYTHON} -m mcpwire.conformance"
# The suite starts every client scenario of a requirements run at once (39 clients); on two busy cores the last
# of them finished after 29 s, against the suite's default limit of 30 s per scenario.
TIMEOUT_MS = 180_000
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def judged(run):
    failing = {check.scenario for check in run.unexpected}
    said = {s.name: s.client_stderr.strip().splitlines()[-1:] for s in run.scenarios if s.name in failing}
    listed = "\n".join(f"  {check.scenario}:{check.id} ({check.status}): {check.message}" for check in run.unexpected)
    listed += "".join(f"\n  {name}: the client said {lines[0]!r}" for name, lines in said.items() if lines)
    assert not run.unexpected, f"failing checks conformance/expected-failures.yml does not list:\n{listed}"
    assert not run.stale, f"listed in conformance/expected-failures.yml but passing now (remove them): {run.stale}"
    assert run.exit_code == 0, run.output[-3000:]
    return [scenario.name for scenario in run.scenarios]


def test_mcpwires_client_passes_what_2026_07_28_requires(tmp_path):
    run = suite.client(CLIENT, requirements="2026-07-28", expected_failures=EXPECTED_FAILURES, output_dir=tmp_path,
                       timeout_ms=TIMEOUT_MS)
    ran = judged(run)
    assert sorted(ran) == sorted(suite.scenario_names("client", "2026-07-28"))
    assert {"tools_call", "request-metadata", "auth/metadata-default", "auth/dpop"} <= set(ran)


def test_mcpwires_client_on_every_other_auth_scenario(tmp_path):
    required = set(suite.scenario_names("client", "2026-07-28"))
    others = [name for name in suite.scenario_names("client") if name.startswith("auth/") and name not in required]
    assert others, "every auth/* scenario is in the 2026-07-28 run: this test has nothing left to run"
    run = suite.client(CLIENT, scenarios=others, expected_failures=EXPECTED_FAILURES, output_dir=tmp_path,
                       timeout_ms=TIMEOUT_MS)
    assert sorted(judged(run)) == sorted(others)

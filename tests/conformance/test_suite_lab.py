"""The official conformance suite on the lab: what revision 2026-07-28 requires of a server, and every Tasks
scenario, against `python -m labserver --http --conformance`, judged against conformance/expected-failures.yml.

A failing check the file does not list fails the test with the suite's check id and message; so does a listed
check that now passes (the entry must go). One run of the suite, with the kit's own Node (mcpwire.suite).
"""

from pathlib import Path

import pytest

from mcpwire import suite

ROOT = Path(__file__).resolve().parents[2]
EXPECTED_FAILURES = ROOT / "conformance" / "expected-failures.yml"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
TIMEOUT_MS = 120_000  # per scenario (the suite's default is 30 s): a busy test run must not fail a slow one


def describe(checks):
    return "\n".join(f"  {check.scenario}:{check.id} ({check.status}): {check.message}" for check in checks)


def test_the_lab_passes_what_2026_07_28_requires_and_every_tasks_scenario(tmp_path):
    run = suite.server(lab=["--conformance"], requirements="2026-07-28", expected_failures=EXPECTED_FAILURES,
                       output_dir=tmp_path, timeout_ms=TIMEOUT_MS)
    assert not run.unexpected, f"failing checks conformance/expected-failures.yml does not list:\n{describe(run.unexpected)}"
    assert not run.stale, f"listed in conformance/expected-failures.yml but passing now (remove them): {run.stale}"
    assert run.exit_code == 0, run.output[-3000:]
    ran = [scenario.name for scenario in run.scenarios]
    assert sorted(ran) == sorted(suite.scenario_names("server", "2026-07-28"))
    # The requirements run the Tasks extension's scenarios without scoring them; the judgement above covers them.
    tasks = [name for name in suite.scenario_names("server") if name.startswith("tasks-")]
    assert tasks and set(tasks) <= set(ran), f"Tasks scenarios the requirements run left out: {set(tasks) - set(ran)}"

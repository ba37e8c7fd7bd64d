"""mcpwire.suite, the kit's runner for the official conformance suite: how it reads the suite's results, judges
them against an expected-failures file by the suite's own rules, starts servers, and what it prints.

The last tests run the real suite (one scenario each) on the lab with no Node on PATH, and pin down the suite's
exit codes with --expected-failures: a failure the file does not list exits 1, and so does an entry that now
passes (a stale entry must be removed).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpwire import suite
from mcpwire.suite import Check, Scenario

START = "2026-12-06T07-27-59-335Z"  # the suite's folder-name form of 07:27:59.335 UTC


def write_result(folder, name, checks, seconds=None):
    """A results folder as the suite writes it; `seconds` sets checks.json's mtime that long after the start."""
    folder.mkdir(parents=True)
    if checks is not None:
        written = folder / "checks.json"
        written.write_text(json.dumps(checks))
        if seconds is not None:
            start = 1796542079.335  # 2026-12-06T07:27:59.335Z
            os.utime(written, (start + seconds, start + seconds))


def raw(check_id, status, message=None, description="what it checks"):
    entry = {"id": check_id, "name": check_id, "description": description, "status": status, "timestamp": "t"}
    return entry | ({"errorMessage": message} if message else {})


def test_a_server_results_folder_reads_as_scenarios_in_start_order_with_their_run_time(tmp_path):
    write_result(tmp_path / f"server-tools-list-{START}", "tools-list",
                 [raw("tools-list", "SUCCESS"), raw("tools-name-format", "WARNING", "a SHOULD")], seconds=1.25)
    write_result(tmp_path / "server-caching-2026-12-06T07-27-58-000Z", "caching", [raw("etag", "FAILURE", "no ETag")],
                 seconds=3)
    scenarios = suite.read_results(tmp_path)
    assert [s.name for s in scenarios] == ["caching", "tools-list"]  # caching started first
    assert scenarios[1].seconds == 1.25
    assert scenarios[1].checks == [Check("tools-list", "tools-list", "SUCCESS", "what it checks"),
                                   Check("tools-list", "tools-name-format", "WARNING", "a SHOULD")]
    assert scenarios[0].checks[0].message == "no ETag"  # a failure's own message, not what the check verifies


def test_a_client_scenario_with_a_slash_is_named_from_its_nested_folder_and_keeps_the_clients_stderr(tmp_path):
    write_result(tmp_path / "auth" / f"metadata-default-{START}", "auth/metadata-default", [raw("prm", "SUCCESS")])
    write_result(tmp_path / f"tools_call-{START}", "tools_call", [raw("tool-add-numbers", "FAILURE")])
    (tmp_path / f"tools_call-{START}" / "stderr.txt").write_text("starting\nno reply to id 1 within 10.0 s\n")
    scenarios = suite.read_results(tmp_path)
    assert [s.name for s in scenarios] == ["auth/metadata-default", "tools_call"]
    assert "  client stderr: no reply to id 1 within 10.0 s" in suite.report(suite.Run(1, scenarios))


def test_a_scenario_that_never_wrote_its_checks_is_a_failure_not_a_silence(tmp_path):
    write_result(tmp_path / f"server-tasks-lifecycle-{START}", "tasks-lifecycle", None)
    (scenario,) = suite.read_results(tmp_path)
    assert scenario.seconds is None
    assert scenario.checks == [Check("tasks-lifecycle", "tasks-lifecycle", "FAILURE", "the scenario wrote no checks.json")]


def scenario(name, *checks):
    return Scenario(name, 1.0, [Check(name, check_id, status, "m") for check_id, status in checks])


def test_judge_applies_the_suites_baseline_rules():
    ran = [
        scenario("a", ("a1", "SUCCESS"), ("a2", "FAILURE")),  # a2 not listed: unexpected
        scenario("b", ("b1", "FAILURE"), ("b2", "FAILURE")),  # listed whole: expected
        scenario("c", ("c1", "WARNING"), ("c2", "FAILURE")),  # c1 listed, c2 not: a warning counts as a failure
        scenario("d", ("d1", "SUCCESS"), ("d2", "INFO")),  # listed whole but passes: stale
        scenario("e", ("e1", "SUCCESS"), ("e1", "FAILURE"), ("e2", "SUCCESS"), ("e3", "SKIPPED")),
    ]
    unexpected, stale = suite.judge(ran, ["b", "c:c1", "d", "e:e1", "e:e2", "e:e3", "e:never-ran"])
    assert [(c.scenario, c.id) for c in unexpected] == [("a", "a2"), ("c", "c2")]
    # e1 failed once (its most severe occurrence), e3 was skipped, never-ran never ran: none of them is stale.
    assert stale == ["d", "e:e2"]


def test_the_expected_failures_file_is_read_per_role(tmp_path):
    listed = tmp_path / "expected.yml"
    listed.write_text("server:\n  # why\n  - server-stateless:sep-2575-x\nclient:\n  - auth/dpop\n")
    assert suite.read_expected_failures(listed, "server") == ["server-stateless:sep-2575-x"]
    assert suite.read_expected_failures(listed, "client") == ["auth/dpop"]
    listed.write_text("server:\n  - tools-list\n")
    assert suite.read_expected_failures(listed, "client") == []


def test_the_report_prints_every_check_with_the_suites_id_and_the_judgement():
    run = suite.Run(1, [scenario("tools-list", ("tools-list", "SUCCESS"), ("tools-name-format", "FAILURE"))],
                    unexpected=[Check("tools-list", "tools-name-format", "FAILURE", "m")], stale=["caching"])
    text = suite.report(run)
    assert "  ✓ SUCCESS  tools-list: m" in text and "  ✗ FAILURE  tools-name-format: m" in text
    assert "Total: 1 passed, 1 failed, 0 warnings in 1 scenarios; the suite exited 1" in text
    assert "Not in the expected failures: tools-list:tools-name-format: m" in text
    assert "Expected to fail but passes (remove it from the file): caching" in text
    as_json = json.loads(suite.as_json(run))
    assert (as_json["ok"], as_json["passed"], as_json["failed"]) == (False, 1, 1)
    assert as_json["scenarios"][0]["checks"][1] == {"scenario": "tools-list", "id": "tools-name-format",
                                                    "status": "FAILURE", "message": "m"}


def test_the_command_line_refuses_what_it_cannot_run(capsys):
    with pytest.raises(SystemExit):
        suite.parse_args(["server", "--requirements", "2026-07-28"])  # no server
    with pytest.raises(SystemExit):
        suite.parse_args(["client", "--scenario", "tools_call", "--url", "http://x/mcp"])
    assert "a client is tested with --command" in capsys.readouterr().err
    args = suite.parse_args(["server", "--scenario", "a", "--scenario", "b", "--lab", "--conformance", "--tasks"])
    assert (args.scenario, args.lab) == (["a", "b"], ["--conformance", "--tasks"])
    assert suite.parse_args(["server", "--scenario", "a", "--lab"]).lab == []


def test_a_server_that_never_prints_its_url_is_named(tmp_path):
    with pytest.raises(suite.SuiteError, match="did not print its URL: no port"):
        with suite.started([sys.executable, "-c", "import sys; print('no port', file=sys.stderr)"]):
            pass


def test_a_missing_suite_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setattr(suite, "SUITE", suite.KIT / "conformance" / "nowhere")
    with pytest.raises(suite.SuiteError, match="run `make lab` first"):
        suite.run_suite("server", "http://127.0.0.1:9/mcp", ["tools-list"], output_dir=tmp_path)


def test_a_spec_version_reaches_the_suite_with_named_scenarios_only(monkeypatch, tmp_path):
    # Without it the suite's client for a named scenario opens with the 2025 initialize handshake, which a server that
    # speaks only 2026-07-28 refuses (lesson 24's). Under --requirements the suite picks the revision itself.
    commands = []

    def fake_run(command, **kwargs):
        commands.append(command)
        folder = Path(command[command.index("-o") + 1]) / f"server-tools-list-2026-12-06T08-00-0{len(commands)}-000Z"
        folder.mkdir(parents=True)
        (folder / "checks.json").write_text('[{"id": "tools-list", "status": "SUCCESS", "description": "d"}]')
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(suite.subprocess, "run", fake_run)
    suite.run_suite("server", "http://127.0.0.1:9/mcp", ["tools-list"], output_dir=tmp_path / "a", spec_version="2026-07-28")
    suite.run_suite("server", "http://127.0.0.1:9/mcp", requirements="2026-07-28", output_dir=tmp_path / "b",
                    spec_version="2026-07-28")
    named, required = commands
    assert named[named.index("--spec-version") + 1] == "2026-07-28"
    assert "--spec-version" not in required
    assert suite.parse_args(["server", "--scenario", "a", "--spec-version", "2026-07-28", "--url", "u"]).spec_version == "2026-07-28"


def run_cli(tmp_path, *args):
    """`python -m mcpwire.suite ARGS` with a PATH that has no node on it (only sh): the kit's own Node runs the suite."""
    path = tmp_path / "path"
    path.mkdir(exist_ok=True)
    if not (path / "sh").exists():
        (path / "sh").symlink_to("/bin/sh")
    return subprocess.run([sys.executable, "-m", "mcpwire.suite", *args], capture_output=True, text=True,
                          env={**os.environ, "PATH": str(path)}, timeout=180)


@pytest.mark.slow
def test_a_real_scenario_on_the_lab_prints_the_suites_checks_with_no_node_on_path(tmp_path):
    done = run_cli(tmp_path, "server", "--scenario", "tools-list", "--json", "-o", str(tmp_path / "out"), "--lab")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run = json.loads(done.stdout)
    (listed,) = run["scenarios"]
    assert listed["name"] == "tools-list" and listed["seconds"] > 0
    assert {check["id"]: check["status"] for check in listed["checks"]}["tools-list"] == "SUCCESS"
    assert list((tmp_path / "out").glob("server-tools-list-*/checks.json"))  # -o keeps the suite's own files


@pytest.mark.slow
def test_the_suite_exits_1_on_an_unlisted_failure_and_on_a_stale_entry_and_0_when_the_file_matches(tmp_path):
    # Without --conformance the lab has no fixture tool named test_image_content: the check tools-call-image fails.
    expected = tmp_path / "expected.yml"
    expected.write_text("server: []\n")
    unlisted = run_cli(tmp_path, "server", "--scenario", "tools-call-image", "--expected-failures", str(expected), "--lab")
    assert unlisted.returncode == 1
    assert "Not in the expected failures: tools-call-image:tools-call-image: No image content found" in unlisted.stdout
    assert "the suite exited 1" in unlisted.stdout  # the suite's own verdict agrees
    expected.write_text("server:\n  - tools-call-image:tools-call-image\n  - tools-list\n")  # tools-list passes
    stale = run_cli(tmp_path, "server", "--scenario", "tools-call-image", "--scenario", "tools-list",
                    "--expected-failures", str(expected), "--lab")
    assert stale.returncode == 1
    assert "Not in the expected failures" not in stale.stdout
    assert "Expected to fail but passes (remove it from the file): tools-list" in stale.stdout
    assert "the suite exited 1" in stale.stdout  # a stale entry fails the suite's run too
    expected.write_text("server:\n  - tools-call-image:tools-call-image\n")
    matching = run_cli(tmp_path, "server", "--scenario", "tools-call-image", "--expected-failures", str(expected), "--lab")
    assert matching.returncode == 0, matching.stdout[-3000:]
    assert "the suite exited 0" in matching.stdout



def test_an_installed_kit_finds_the_suite_binder_installed(tmp_path):
    # Binder's image installs the kit as a package, with no conformance/ beside it: postBuild installs the suite
    # from the same lock into a folder of the environment, and binder/start names it in MCP_CONFORMANCE_DIR.
    shim = tmp_path / "node_modules" / ".bin" / "conformance"
    shim.parent.mkdir(parents=True)
    shim.symlink_to(suite.SUITE.resolve())
    listed = subprocess.run([sys.executable, "-c", "from mcpwire import suite; print(suite.SUITE); "
                             "print(suite.scenario_names('server', requirements='2026-07-28')[:1])"],
                            env={**os.environ, "MCP_CONFORMANCE_DIR": str(tmp_path)}, capture_output=True, text=True,
                            timeout=120, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    where, first = listed.stdout.splitlines()
    assert where == str(shim) and first != "[]", listed.stdout

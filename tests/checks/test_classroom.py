"""Grading where the work is pushed: the learner-repository workflows and what GitHub Classroom and GitLab read.

The workflows are validated offline (check-jsonschema's bundled schemas, zizmor's offline audits) as the kit's
own workflow is. The scores are checked in the shape Classroom's grading reporter reads (one runner per
exercise, base64 JSON of version 1). One slow test grades a learner who rewrote the checks to print ✓.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import nbformat
import pytest
import yaml
from check_jsonschema.cli.main_command import main as check_jsonschema_main
from click.testing import CliRunner

from checks import classroom

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GITHUB = ROOT / "ci-examples" / "github-classroom.yml"
GITLAB = ROOT / "ci-examples" / "gitlab-classroom.yml"
EXERCISES = sorted(path.stem for path in (ROOT / "solutions").glob("*.ipynb"))
FIRST = EXERCISES[0]


def check_jsonschema(schema: str, path: Path):
    return CliRunner().invoke(check_jsonschema_main, ["--builtin-schema", schema, str(path)])


def zizmor(path: Path) -> list:
    run = subprocess.run([BIN / "zizmor", "--offline", "--persona", "pedantic", "--format", "json", path],
                         capture_output=True, text=True, timeout=60)
    return json.loads(run.stdout)


def steps() -> list[dict]:
    return yaml.safe_load(GITHUB.read_text())["jobs"]["grade"]["steps"]


def step(name: str) -> dict:
    return next(s for s in steps() if s.get("name") == name)


def decoded(outputs: str) -> dict:
    pairs = (line.split("=", 1) for line in outputs.splitlines())
    return {key: json.loads(base64.b64decode(value)) for key, value in pairs}


@pytest.mark.parametrize("schema, path", [("vendor.github-workflows", GITHUB), ("vendor.gitlab-ci", GITLAB)],
                         ids=["github", "gitlab"])
def test_each_learner_workflow_matches_its_platforms_schema(schema, path):
    run = check_jsonschema(schema, path)
    assert run.exit_code == 0, run.output


def broken_copy(path: Path, tmp_path: Path, break_it) -> Path:
    document = yaml.safe_load(path.read_text())
    break_it(document)
    out = tmp_path / "broken.yml"
    out.write_text(yaml.safe_dump(document))
    return out


def test_each_schema_check_catches_a_broken_learner_workflow(tmp_path):
    github = broken_copy(GITHUB, tmp_path, lambda d: d["jobs"]["grade"].pop("runs-on"))
    run = check_jsonschema("vendor.github-workflows", github)
    assert run.exit_code == 1 and "runs-on" in run.output, run.output
    gitlab = broken_copy(GITLAB, tmp_path, lambda d: d["grade"].update(script="make -C kit", artifacts={"when": "sometimes"}))
    run = check_jsonschema("vendor.gitlab-ci", gitlab)
    assert run.exit_code == 1 and "sometimes" in run.output, run.output


def test_zizmor_finds_nothing_in_the_classroom_workflow_even_pedantic():
    assert zizmor(GITHUB) == []


def test_zizmor_catches_a_learner_controlled_value_in_a_run_line(tmp_path):
    unsafe = GITHUB.read_text().replace("cp learner/exercises/*.ipynb submissions/learner/",
                                        'cp learner/exercises/*.ipynb "submissions/${{ github.event.head_commit.message }}/"')
    path = tmp_path / "unsafe.yml"
    path.write_text(unsafe)
    assert any(finding["ident"] == "template-injection" for finding in zizmor(path))


def test_every_action_is_pinned_to_a_commit():
    uses = [s["uses"] for s in steps() if "uses" in s]
    assert uses and all(len(ref.split("@")[1]) == 40 for ref in uses), uses


def test_the_kit_comes_from_variables_the_learner_cannot_change_not_from_the_learners_checkout():
    kit = step("The instructor's kit, at the pinned commit")["with"]
    assert kit["repository"] == "${{ vars.MCP_KIT_REPOSITORY }}" and kit["ref"] == "${{ vars.MCP_KIT_COMMIT }}"
    assert kit["path"] == "kit"
    grade = step("Grade")
    assert grade["working-directory"] == "kit" and grade["run"] == ".venv/bin/python -m checks.grade ../submissions"
    gitlab = yaml.safe_load(GITLAB.read_text())["grade"]["script"]
    assert '"$MCP_KIT_COMMIT"' in gitlab[1] and gitlab.index("cd kit") < gitlab.index(".venv/bin/python -m checks.grade ../submissions")


def test_the_reporter_gets_one_runner_per_exercise_of_the_course():
    reporter = next(s for s in steps() if s.get("uses", "").startswith("classroom-resources/autograding-grading-reporter@"))
    runners = reporter["with"]["runners"].split(",")
    assert runners == [classroom.runner_id(e) for e in EXERCISES]
    assert reporter["env"] == {f"{r.upper()}_RESULTS": f"${{{{ steps.scores.outputs.{r} }}}}" for r in runners}
    assert step("Scores per exercise, for the reporter")["id"] == "scores"


def test_the_grades_are_kept_as_an_artifact_even_when_the_reporter_fails():
    upload = next(s for s in steps() if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()"
    assert {"submissions/grades.html", "submissions/grades.json"} <= set(upload["with"]["path"].split())
    gitlab = yaml.safe_load(GITLAB.read_text())["grade"]["artifacts"]
    assert gitlab["when"] == "always" and gitlab["reports"]["junit"] == "submissions/grades.xml"


ROWS = [
    {"learner": "ada", "exercise": FIRST, "check": "check_start_server", "verdict": "pass", "message": "✓ fine"},
    {"learner": "ada", "exercise": FIRST, "check": "check_first_frame", "verdict": "fail", "message": "✗ no id"},
    {"learner": "ada", "exercise": FIRST, "check": "check_send_one", "verdict": "not run", "message": "stopped"},
]


def test_a_score_per_exercise_in_the_reporters_shape():
    results = decoded(classroom.github_outputs(ROWS))
    assert list(results) == [classroom.runner_id(e) for e in EXERCISES]
    first = results[classroom.runner_id(FIRST)]
    assert first["version"] == 1 and first["status"] == "fail" and first["max_score"] == 3
    assert [(t["name"], t["status"], t["score"]) for t in first["tests"]] == [
        ("check_start_server", "pass", 1), ("check_first_frame", "fail", 0), ("check_send_one", "fail", 0)]
    assert first["tests"][1]["message"] == "✗ no id"


def test_an_exercise_with_no_notebook_scores_nothing_and_says_why():
    results = decoded(classroom.github_outputs(ROWS))
    other = results[classroom.runner_id(EXERCISES[1])]
    assert other["max_score"] > 0 and all(t["score"] == 0 for t in other["tests"])
    assert {t["message"] for t in other["tests"]} == {"no notebook for this exercise was graded"}


def test_a_notebook_error_is_an_error_for_the_reporter():
    rows = [{"learner": "ada", "exercise": FIRST, "check": "(notebook)", "verdict": "error", "message": "not a notebook"}]
    assert decoded(classroom.github_outputs(rows))[classroom.runner_id(FIRST)]["status"] == "error"


def test_junit_has_a_suite_per_exercise_and_a_case_per_check():
    suites = ElementTree.fromstring(classroom.junit_xml(ROWS).split("?>", 1)[1])
    assert [s.get("name") for s in suites] == EXERCISES
    first = suites[0]
    assert (first.get("tests"), first.get("failures"), first.get("errors")) == ("3", "2", "0")
    assert [case.find("failure") is None for case in first] == [True, False, False]


def test_the_command_line_writes_both_formats(tmp_path):
    grades = tmp_path / "grades.json"
    grades.write_text(json.dumps(ROWS))
    out = subprocess.run([sys.executable, "-m", "checks.classroom", "github", grades], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and decoded(out.stdout)[classroom.runner_id(FIRST)]["max_score"] == 3
    junit = tmp_path / "grades.xml"
    out = subprocess.run([sys.executable, "-m", "checks.classroom", "junit", grades, junit], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "<testsuites" in junit.read_text()
    out = subprocess.run([sys.executable, "-m", "checks.classroom", "xml", grades], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 2 and "checks.classroom" in out.stderr


# A learner rewrites every check of exercise 00 to print ✓, and submits the exercise untouched (stubs).
CHEAT = '''from checks.verdict import passed


def check_start_server(*args, **kwargs):
    passed("looks right")


def check_first_frame(*args, **kwargs):
    passed("looks right")


def check_send_one(*args, **kwargs):
    passed("looks right")
'''


def learner_repository(folder: Path) -> Path:
    """A learner's copy of the kit: the course, its stub exercise, and a checks/ rewritten to pass."""
    for package in ("checks", "labserver", "mcpwire", "solutions"):
        shutil.copytree(ROOT / package, folder / package, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "exercises").mkdir()
    shutil.copy(ROOT / "exercises" / f"{FIRST}.ipynb", folder / "exercises")
    (folder / "checks" / "ex00_first_look.py").write_text(CHEAT)
    return folder


def first_score(grades_json: Path) -> int:
    result = decoded(classroom.github_outputs(json.loads(grades_json.read_text())))[classroom.runner_id(FIRST)]
    return sum(test["score"] for test in result["tests"])


def graded(cwd: Path, submissions: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    run = subprocess.run([sys.executable, "-m", "checks.grade", str(submissions), "--cell-timeout", "120"], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_learner_who_rewrites_the_checks_to_pass_gets_no_points(tmp_path):
    learner = learner_repository(tmp_path / "learner")
    assert nbformat.read(learner / "exercises" / f"{FIRST}.ipynb", as_version=4)
    # The workflow's own collect step, run as it is written, from the job's folder.
    subprocess.run(["bash", "-euo", "pipefail", "-c", step("Collect the learner's notebooks")["run"]], cwd=tmp_path, check=True)
    graded(ROOT, tmp_path / "submissions")
    assert first_score(tmp_path / "submissions" / "grades.json") == 0
    # The same notebook graded with the learner's own copy of the checks would score every point: the cheat is real.
    trusting = tmp_path / "trusting"
    (trusting / "learner").mkdir(parents=True)
    shutil.copy(learner / "exercises" / f"{FIRST}.ipynb", trusting / "learner")
    graded(learner, trusting)
    assert first_score(trusting / "grades.json") == 3


def test_the_grader_prints_its_rows_as_json_for_a_hub_or_an_lms(tmp_path):
    (tmp_path / "dee").mkdir()
    (tmp_path / "dee" / f"{FIRST}.ipynb").write_text('{"cells": [')
    run = subprocess.run([sys.executable, "-m", "checks.grade", str(tmp_path), "--json"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    rows = json.loads(run.stdout)
    assert rows == [{"learner": "dee", "exercise": FIRST, "check": "(notebook)", "verdict": "error",
                     "message": rows[0]["message"]}] and rows[0]["message"].startswith("not a notebook")
    assert rows == json.loads((tmp_path / "grades.json").read_text()) and "graded 1 notebook" in run.stderr

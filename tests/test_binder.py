"""Hosting the kit: Binder (repo2docker), the learner install it uses, and the dev container.

What can be checked without Docker: the Dockerfile repo2docker renders (`--no-build`), the pins Binder
installs, and that the learner install (the lab lock, no test extra) really runs lesson 00.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
LESSON_00 = sorted((ROOT / "notebooks").glob("00-*.ipynb"))[0]


def locked_version(package: str) -> str:
    return re.search(rf"^{package}==([^ ;\\]+)", (ROOT / "requirements" / "lab.txt").read_text(), re.M).group(1)


def uv() -> str:
    """The uv `make` uses (one on PATH, or the one it bootstraps)."""
    run = subprocess.run(["make", "-s", "--no-print-directory", "uv-path"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return run.stdout.strip().splitlines()[-1]


def test_repo2docker_renders_a_dockerfile_that_installs_the_kit_from_binder(tmp_path):
    run = subprocess.run([Path(sys.executable).parent / "repo2docker", "--no-build", "--no-run", "--debug", str(ROOT)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    dockerfile = run.stdout + run.stderr
    assert '--file "binder/environment.yml"' in dockerfile, "conda reads binder/environment.yml"
    assert "RUN ./binder/postBuild" in dockerfile
    # binder/start wraps the notebook server: the same warm session for the labs as `make lab`.
    assert 'ENV R2D_ENTRYPOINT="${REPO_DIR}/binder/start"' in dockerfile
    # postBuild runs after the whole repository is copied in: it reads requirements/ and the package.
    assert dockerfile.index("COPY --chown=0:0 src/ ${REPO_DIR}/") < dockerfile.index("RUN ./binder/postBuild")


def test_binders_start_runs_the_notebook_server_in_a_warm_session():
    start = (BINDER / "start").read_text()
    assert os.access(BINDER / "start", os.X_OK)
    assert start.rstrip().splitlines()[-1] == 'exec python -m labserver.warm_session -- "$@"'


def test_binder_pins_the_python_and_jupyterlab_the_kit_is_locked_to():
    env = (BINDER / "environment.yml").read_text()
    assert f"- python={(ROOT / '.python-version').read_text().strip()}\n" in env
    assert f"- jupyterlab=={locked_version('jupyterlab')}\n" in env


def test_postbuild_installs_the_hub_lock_and_the_kit_without_the_test_extra():
    # The hub lock is the lab lock plus nbgitpuller and jupyterhub (tests/test_lock.py), so a class's hub image pulls
    # the course and has the `jupyterhub-singleuser` command a hub starts each learner's server with.
    post = (BINDER / "postBuild").read_text()
    assert os.access(BINDER / "postBuild", os.X_OK)
    assert "--require-hashes -r requirements/hub.txt" in post and "requirements/test.txt" not in post
    assert re.search(r"pip install .*--no-deps \.$", post, re.M) and "[test]" not in post
    assert "jupyter-settings/mcp-on-the-wire.json" in post, "Binder's lab asks no news question either"
    # Lesson 22's legacy server: its own venv from its own lock, never the kit's environment, outside the home
    # folder (a hub's volume covers it), named for the lesson by binder/start.
    assert 'legacy="$(python -c \'import sys; print(sys.prefix)\')/mcp-legacy-server"' in post
    assert 'python -m venv "$legacy"' in post
    assert '"$legacy/bin/python" -m pip install --no-cache-dir --require-hashes -r requirements/legacy.txt' in post
    # The conformance suite (lesson 24, exercise 24): from the same npm lock, with the lock's own Node, outside home.
    assert 'suite="$(python -c \'import sys; print(sys.prefix)\')/mcp-conformance"' in post
    assert 'cp conformance/package.json conformance/package-lock.json "$suite/"' in post
    assert 'python -m mcpwire.node npm --prefix "$suite" ci --ignore-scripts' in post
    start = (BINDER / "start").read_text()
    assert "export MCP_CONFORMANCE_DIR=\"$(python -c 'import sys; print(sys.prefix)')/mcp-conformance\"" in start
    assert "export MCP_LEGACY_PYTHON=\"$(python -c 'import sys; print(sys.prefix)')/mcp-legacy-server/bin/python\"" in start


def test_the_readme_badge_opens_lesson_00_on_binder():
    readme = (ROOT / "README.md").read_text()
    link = re.search(r"\[!\[Binder\]\([^)]*\)\]\((https://mybinder\.org/v2/gh/[^)]+)\)", readme)
    assert link, "a Binder launch badge in the README"
    urlpath = parse_qs(urlparse(link.group(1)).query)["urlpath"][0]
    assert urlpath == f"lab/tree/notebooks/{LESSON_00.name}"


def test_the_dev_container_runs_make_lab_and_forwards_its_port():
    text = (ROOT / ".devcontainer" / "devcontainer.json").read_text()
    config = json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))
    assert "python:3.11" in config["image"]
    assert ".venv/.lab-stamp" in config["postCreateCommand"], "the same install as make lab"
    port = int(re.search(r"--port=(\d+)", config["postAttachCommand"]).group(1))
    assert config["postAttachCommand"].startswith("make lab ") and config["forwardPorts"] == [port]


@pytest.mark.slow
def test_the_learner_install_runs_lesson_00(tmp_path):
    installer = uv()
    env = tmp_path / "learner"
    subprocess.run([installer, "venv", "--quiet", "--python", sys.executable, env], check=True, timeout=120)
    python = env / "bin" / "python"
    for args in (["--require-hashes", "-r", ROOT / "requirements" / "lab.txt"], ["--no-deps", ROOT]):
        subprocess.run([installer, "pip", "install", "--quiet", "--python", python, *args], check=True, timeout=600)
    tools = subprocess.run([python, "-c", "import importlib.util as u; print([m for m in ('pytest', 'nbval', 'playwright') if u.find_spec(m)])"],
                           capture_output=True, text=True, check=True)
    assert tools.stdout.strip() == "[]", "the learner install has no test tools"
    # What `make lab` does after installing: the lab server's modules compiled before the first timed call.
    subprocess.run([python, "-m", "labserver", "--help"], capture_output=True, check=True, timeout=300, cwd=tmp_path)
    executed = tmp_path / "00.ipynb"
    # No kernelspec from this machine's Jupyter folders: the kernel is the learner environment's Python.
    private = {**os.environ, "JUPYTER_DATA_DIR": str(tmp_path / "jupyter"), "JUPYTER_PATH": "", "PYTHONPATH": ""}
    run = subprocess.run([python, "-c", RUN_NOTEBOOK, str(LESSON_00), str(executed)],
                         capture_output=True, text=True, timeout=600, cwd=LESSON_00.parent, env=private)
    assert run.returncode == 0, run.stderr[-6000:]
    nb = nbformat.read(executed, as_version=4)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    assert "mcpwire" in run.stdout and str(ROOT) not in run.stdout, "the kit was imported from the installed copy"


# Runs the lesson with the learner environment's own kernel and says where it imported the kit from.
RUN_NOTEBOOK = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=120, kernel_name="python3").execute()
nbformat.write(nb, sys.argv[2])
import mcpwire; print("mcpwire from", mcpwire.__file__)
"""

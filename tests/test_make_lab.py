"""`make lab` opens JupyterLab on lesson 00, with the exercises one click away and no news prompt."""

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "make-lab-test"
pytestmark = pytest.mark.slow  # a real `make lab`: JupyterLab starting takes seconds


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("make-lab")
    port = free_port()
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
    }
    options = f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.token={TOKEN} --allow-root"
    process = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"LAB_OPTS={options}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/api/status", params={"token": TOKEN}, timeout=2).raise_for_status()
                break
            except httpx.HTTPError:
                assert process.poll() is None, "make lab exited before JupyterLab answered"
                time.sleep(0.3)
        else:
            pytest.fail("JupyterLab did not answer within 60 s")
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def names(base: str, path: str = "") -> set[str]:
    reply = httpx.get(f"{base}/api/contents/{path}", params={"token": TOKEN}, timeout=10)
    reply.raise_for_status()
    return {entry["name"] for entry in reply.json()["content"]}


def test_make_lab_serves_the_lessons_folder_with_the_exercises_inside(lab):
    top = names(lab)
    lessons = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert lessons and lessons <= top, "the file browser opens on the lessons"
    assert "exercises" in top
    assert {p.name for p in (ROOT / "exercises").glob("*.ipynb")} <= names(lab, "exercises")


def test_make_lab_opens_lesson_00(lab):
    reply = httpx.get(f"{lab}/", params={"token": TOKEN}, timeout=10)
    first = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))[0]
    assert reply.status_code == 302 and reply.headers["location"].split("?")[0] == f"/lab/tree/{first}"


def test_the_kits_lab_asks_no_news_question(lab):
    # JupyterLab asks about news while fetchNews is "none"; the kit's settings answer it, in the lab's
    # own prefix (this lab runs with an empty HOME, so no user setting is involved).
    reply = httpx.get(f"{lab}/lab/api/settings/@jupyterlab/apputils-extension:notification",
                      params={"token": TOKEN}, timeout=10)
    reply.raise_for_status()
    defaults = reply.json()["schema"]["properties"]
    assert defaults["fetchNews"]["default"] == "false" and defaults["checkForUpdates"]["default"] is False

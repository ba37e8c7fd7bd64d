"""`make lab` opens JupyterLab on the lessons, with the exercises one click away."""

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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
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

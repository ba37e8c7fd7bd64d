"""A real JupyterLab in Debian's Chromium, driven by Python playwright.

JupyterLab runs on 127.0.0.1 with a token, with every Jupyter and XDG directory
in a temporary HOME, on a copy of the demo notebook. Without /usr/bin/chromium the
test is skipped with a hint, except in CI (CI=true), where that is a failure.
"""

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
# Playwright's own browser download is not used (and fails offline); these flags suit a container.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]
HERE = Path(__file__).parent
ARTIFACTS = HERE.parent.parent / "artifacts"
LAB_START_TIMEOUT = 60


@pytest.fixture(scope="session")
def chromium():
    if not os.path.exists(CHROMIUM):
        message = (f"no Chromium at {CHROMIUM}: install Debian's chromium (`sudo apt-get install chromium`, "
                   "as .ci/run does) to run the browser tests")
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (CI=true: a missing browser is a failure)")
        pytest.skip(message)
    return CHROMIUM


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _private_env(home):
    """Every place Jupyter, IPython or XDG would write, inside `home`."""
    env = dict(os.environ)
    for name, folder in {"HOME": "", "XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share",
                         "XDG_CACHE_HOME": ".cache", "XDG_RUNTIME_DIR": "run", "JUPYTER_CONFIG_DIR": ".jupyter",
                         "JUPYTER_DATA_DIR": ".local/share/jupyter", "JUPYTER_RUNTIME_DIR": "run/jupyter",
                         "IPYTHONDIR": ".ipython", "JUPYTERLAB_SETTINGS_DIR": ".jupyter/lab/user-settings",
                         "JUPYTERLAB_WORKSPACES_DIR": ".jupyter/lab/workspaces"}.items():
        path = home / folder
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    env.pop("JUPYTER_PATH", None)
    # No news poll and no update check: the lab must not reach for the network or pop toasts over the widgets.
    settings = home / ".jupyter/lab/user-settings/@jupyterlab/apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    return env


def _wait_until_up(url, process, log):
    deadline = time.monotonic() + LAB_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"JupyterLab did not answer within {LAB_START_TIMEOUT} s:\n{log.read_text()[-3000:]}")


def running_lab(base, base_url="/"):
    """(URL, token) of a JupyterLab whose root holds a copy of each *_demo.ipynb here, served under `base_url`
    (a hub serves each learner's under /user/NAME/); stopped when the generator closes."""
    root = base / "notebooks"
    root.mkdir()
    for demo in HERE.glob("*_demo.ipynb"):
        shutil.copy(demo, root)
    port, token = _free_port(), secrets.token_hex(16)
    log = base / "jupyterlab.log"
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", "--allow-root",
               "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={root}", f"--ServerApp.base_url={base_url}"]
    with open(log, "w") as log_file:
        lab = subprocess.Popen(command, env=_private_env(base / "home"), cwd=root,
                               stdout=log_file, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}{base_url.rstrip('/')}"
        _wait_until_up(f"{url}/api/status?token={token}", lab, log)
        yield url, token
    finally:
        lab.terminate()  # the server shuts its kernels down; their lab servers see stdin close and exit
        try:
            lab.wait(timeout=15)
        except subprocess.TimeoutExpired:
            lab.kill()
            lab.wait()


@pytest.fixture(scope="module")
def lab_base_url():
    """The path JupyterLab is served under; a test module may override it (a hub serves a learner's under /user/NAME/)."""
    return "/"


@pytest.fixture(scope="module")
def jupyter_lab(chromium, tmp_path_factory, lab_base_url):
    """(base URL, token) of a JupyterLab whose root holds a copy of each *_demo.ipynb here."""
    yield from running_lab(tmp_path_factory.mktemp("lab"), lab_base_url)


@pytest.fixture(scope="module")
def browser_page(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            yield page
        finally:
            browser.close()


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS

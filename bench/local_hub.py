"""A JupyterHub on this machine, serving the kit as a class's hub does: the hub the tests and the bench drive.

    with LocalHub(folder) as hub:
        page.goto(hub.pull_link())   # the README's nbgitpuller link, pointed at this hub and a local copy of the course

What is the same as on a class's hub (ci-examples/z2jh-config.yaml, binder/): JupyterHub and its proxy,
configurable-http-proxy, at the versions the kit locks (requirements/test.txt; hub/package-lock.json, run by the
kit's own Node); each learner's server started as the image starts it (binder/start: the warm session around
`jupyterhub-singleuser`) and opening the values file's `defaultUrl`; the course pulled by the README's nbgitpuller
link into each learner's home. What stands in for Kubernetes: SimpleLocalProcessSpawner runs every learner's server
as this OS user, each with a home folder of its own (no container, no volume), and SharedPasswordAuthenticator
lets any learner name in with one password. The course is a git repository made from this checkout's HEAD, reached
by a file:// URL instead of GitHub. Everything binds 127.0.0.1 on free ports and lives in `folder`.
"""

import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import yaml

from mcpwire.node import NODE

ROOT = Path(__file__).resolve().parents[1]
VALUES = ROOT / "ci-examples" / "z2jh-config.yaml"
PROXY_SCRIPT = ROOT / "hub" / "node_modules" / "configurable-http-proxy" / "bin" / "configurable-http-proxy"
PASSWORD = "learners-of-the-wire"  # SharedPasswordAuthenticator wants 8 characters at least
START_TIMEOUT_S = 60
# Each learner's server waits on a loaded machine; a hub's defaults (60 s, 30 s) suit a quiet one.
SPAWN_TIMEOUT_S = 180
HUB_CONFIG = """\
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///{folder}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/jupyterhub_cookie_secret"
c.JupyterHub.cleanup_servers = True
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = {proxy_command!r}
c.ConfigurableHTTPProxy.pid_file = "{folder}/proxy.pid"
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = {password!r}
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{folder}/homes/{{username}}"
c.Spawner.cmd = {cmd!r}
c.Spawner.args = {args!r}
c.Spawner.default_url = {default_url!r}
c.Spawner.env_keep = ["PATH", "LANG", "LC_ALL"]
c.Spawner.environment = {environment!r}
c.Spawner.start_timeout = {spawn_timeout}
c.Spawner.http_timeout = {spawn_timeout}
# This spawner stops a server with SIGINT first, then SIGTERM: the warm session leaves SIGINT (a terminal's Ctrl-C)
# to JupyterLab's own process group and passes SIGTERM on, which is also what Kubernetes stops a pod with.
c.LocalProcessSpawner.interrupt_timeout = 0
"""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def values():
    """The Zero to JupyterHub values file's single-user section: what a class's hub runs."""
    return yaml.safe_load(VALUES.read_text())["singleuser"]


def course_folder():
    """The folder nbgitpuller pulls the course into, in each learner's home (the values file's defaultUrl names it)."""
    return values()["defaultUrl"].split("/")[3]


def readme_pull_link():
    """The nbgitpuller link the README hands out (with its HUB and OWNER placeholders)."""
    link = re.search(r"https://HUB/hub/user-redirect/git-pull\?\S+?(?=`)", (ROOT / "README.md").read_text())
    if link is None:
        raise RuntimeError("README.md has no nbgitpuller link (https://HUB/hub/user-redirect/git-pull?...)")
    return link.group(0)


def course_repository(folder):
    """A git repository holding this checkout's HEAD as branch `main`, named as the values file names the course
    folder, so that nbgitpuller pulls it into the same folder as it pulls the course from GitHub."""
    repo = folder / "course" / course_folder()
    subprocess.run(["git", "init", "--quiet", "--bare", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "fetch", "--quiet", str(ROOT), "HEAD:refs/heads/main"], check=True)
    return repo


class LocalHub:
    """A JupyterHub on 127.0.0.1 (see the module's doc): `url`, `course` (the file:// URL), `homes`, `log`."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.homes = self.folder / "homes"
        self.log = self.folder / "jupyterhub.log"
        self.process = None
        self.course = None

    def config(self):
        if not PROXY_SCRIPT.exists():
            raise RuntimeError(f"no configurable-http-proxy at {PROXY_SCRIPT.relative_to(ROOT)}: run `make hub-proxy`")
        bin_dir = Path(sys.executable).parent
        # As binder/start starts the image's server: the kit's warm session around the hub's command.
        cmd = [sys.executable, "-m", "labserver.warm_session", "--", str(bin_dir / "jupyterhub-singleuser")]
        args = ["--LabApp.expose_app_in_browser=True"]  # the tests read the page's notebook through window.jupyterapp
        if os.geteuid() == 0:
            args.append("--allow-root")  # a container's root; a class's image runs as a plain user
        environment = {"PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])}
        legacy = ROOT / ".venv-legacy" / "bin" / "python"
        if legacy.exists():  # lesson 22's legacy server, built outside the learners' homes as binder/postBuild does
            environment["MCP_LEGACY_PYTHON"] = str(legacy)
        return HUB_CONFIG.format(
            port=self.port, hub_port=free_port(), proxy_api_port=free_port(), folder=self.folder,
            proxy_command=[str(NODE), str(PROXY_SCRIPT)], password=PASSWORD, cmd=cmd, args=args,
            default_url=values()["defaultUrl"], environment=environment, spawn_timeout=SPAWN_TIMEOUT_S)

    def __enter__(self):
        self.course = course_repository(self.folder).as_uri()
        self.homes.mkdir(parents=True)
        config = self.folder / "jupyterhub_config.py"
        config.write_text(self.config())
        with open(self.log, "w") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=self.folder,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self.wait_until_up()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def wait_until_up(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyterhub exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/hub/api/", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"jupyterhub did not answer within {START_TIMEOUT_S} s:\n{self.log.read_text()[-3000:]}")

    def stop(self):
        """Stop the hub, which stops every learner's server and its proxy (cleanup_servers), then whatever is left
        of its process group, then any learner's process that outlived it (a server runs in a session of its own)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        left = self.learners_processes()
        for process in left:
            process.terminate()
        for process in psutil.wait_procs(left, timeout=10)[1]:
            process.kill()

    def learners_processes(self):
        """Every process whose HOME is a learner's home here: their servers, kernels and labs."""
        inside = str(self.homes) + os.sep
        return [process for process in psutil.process_iter(["environ"])
                if ((process.info["environ"] or {}).get("HOME", "") + os.sep).startswith(inside)]

    def pull_link(self):
        """The README's nbgitpuller link on this hub, pulling the local course instead of GitHub's."""
        parts = urllib.parse.urlsplit(readme_pull_link())
        query = urllib.parse.parse_qs(parts.query)
        query["repo"] = [self.course]
        return f"{self.url}{parts.path}?{urllib.parse.urlencode(query, doseq=True)}"

    def login_url(self, then):
        """The hub's login page, going on to `then` (a URL on this hub) once the learner is in."""
        path = urllib.parse.urlsplit(then)
        return f"{self.url}/hub/login?" + urllib.parse.urlencode({"next": f"{path.path}?{path.query}"})

    def log_in(self, page, learner, then):
        """Log `learner` in with the class's password in `page` and follow on to `then`."""
        page.goto(self.login_url(then))
        page.fill("#username_input", learner)
        page.fill("#password_input", PASSWORD)
        page.click("#login_submit")

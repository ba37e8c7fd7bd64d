"""Each lesson's Run All in a real JupyterLab in Chromium: `python -m bench.lesson_run_bench [NN ...] [--cold]`.

JupyterLab starts as `make lab` starts it (scripts/jupyter_lab.py, in a warm session: labserver.warm_session)
on a copy of the lessons. For each lesson: open it, wait for an idle kernel, Run All, and time until every
code cell has run and the kernel is idle again. One row per lesson, with the machine's load (1-minute
average) when it ended, since others may share the machine; a lesson over the goal also gets its slowest
cells (JupyterLab records each cell's timing; `--cells`: every lesson's). `--cold` runs every lesson again
with labs started cold and prints the ratio. Goal: every lesson under 20 s on two cores.

`--hub`: every lesson and exercise through a real JupyterHub instead (bench/local_hub.py: the course pulled by the
README's nbgitpuller link into a learner's home, JupyterLab behind the hub's proxy), each row with the error
outputs its Run All left and the requests its page made anywhere but the hub's own origin. Goal: 0 and 0. An
exercise's unanswered task raises NotImplementedError in a cell tagged `raises-exception`, which asks the kernel to
run the cells queued after it all the same: the bench counts those outputs apart (`stubs`). JupyterLab's Run All
command returns at the first error while the cells after it still run, so the bench waits until they have.
"""

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

from labserver.warm import WARM

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
GOAL_S = 20
KERNEL_READY = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""
RUN_ALL = """async () => {
  await window.jupyterapp.commands.execute('notebook:run-all-cells');
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  return cells.filter(c => c.model.type === 'code').map(c => c.model.executionCount);
}"""
CELL_TIMES = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter(c => c.model.type === 'code')
  .map(c => [c.model.sharedModel.getSource().split('\\n')[0], c.model.getMetadata('execution') || {}])"""
CLOSE = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.shutdown();
  panel.dispose();
}"""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_lab(folder, warm):
    port, token = free_port(), secrets.token_hex(8)
    home = folder / f"home-{'warm' if warm else 'cold'}"
    settings = home / "config" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"recordTiming": True}))  # for CELL_TIMES
    env = {**os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / "config"),
           "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "IPYTHONDIR": str(home / "ipython"), WARM: ""}
    lab = [sys.executable, str(ROOT / "scripts" / "jupyter_lab.py"), "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           f"--IdentityProvider.token={token}", "--allow-root", "--LabApp.expose_app_in_browser=True",
           f"--ServerApp.root_dir={folder / 'notebooks'}", "--LanguageServerManager.autodetect=False"]
    command = [sys.executable, "-m", "labserver.warm_session", "--", *lab] if warm else lab
    process = subprocess.Popen(command, env=env, cwd=folder / "notebooks", stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                return process, url, token
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("JupyterLab did not start")


class Run:
    """One lesson's Run All: seconds, whether every code cell ran, the load when it ended, its cells' seconds."""

    def __init__(self, seconds, ok, load, cells):
        self.seconds, self.ok, self.load, self.cells = seconds, ok, load, cells

    def slowest(self, count=3):
        return sorted(self.cells, key=lambda cell: -cell[2])[:count]


def cell_seconds(execution):
    """A cell's run time from JupyterLab's recorded timing (ISO stamps), or 0.0 when it was not recorded."""
    try:
        started = datetime.fromisoformat(execution["iopub.execute_input"].replace("Z", "+00:00"))
        ended = datetime.fromisoformat(execution["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return 0.0
    return (ended - started).total_seconds()


def shut_down_kernels(url, token):
    """Stop every kernel the lab still runs, so that no lesson's labs run on into the next one's time."""
    with urllib.request.urlopen(f"{url}/api/sessions?token={token}", timeout=30) as answer:
        sessions = json.load(answer)
    for session in sessions:
        request = urllib.request.Request(f"{url}/api/sessions/{session['id']}?token={token}", method="DELETE")
        urllib.request.urlopen(request, timeout=60).close()
    return len(sessions)


def run_all(page, url, token, name):
    # `reset`: a fresh workspace, or JupyterLab reopens the lessons opened before, each with a kernel of its own.
    page.goto(f"{url}/lab/tree/{name}?reset&token={token}")
    page.wait_for_function(KERNEL_READY, timeout=180_000, polling=100)
    started = time.monotonic()
    counts = page.evaluate(RUN_ALL)
    page.wait_for_function(KERNEL_READY, timeout=600_000, polling=100)
    seconds = time.monotonic() - started
    cells = [(number, first_line, cell_seconds(execution))
             for number, (first_line, execution) in enumerate(page.evaluate(CELL_TIMES), start=1)]
    page.evaluate(CLOSE)
    shut_down_kernels(url, token)
    return Run(seconds, all(counts), os.getloadavg()[0], cells)


# [tagged raises-exception, "name: value"] for every error output.
ERROR_OUTPUTS = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter(c => c.model.type === 'code')
  .flatMap(c => c.model.outputs.toJSON().filter(o => o.output_type === 'error')
    .map(o => [(c.model.getMetadata('tags') || []).includes('raises-exception'), o.ename + ': ' + o.evalue]))"""
# Whether the kernel is idle, and how many code cells have not run.
RUN_STATE = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const unrun = panel.content.widgets.filter(c => c.model.type === 'code' && !c.model.executionCount).length;
  return {idle: !!kernel && kernel.status === 'idle', unrun};
}"""
# Cells a failed cell leaves unrun (an error the kernel stops at) never run: the kernel idle this long means done.
STILL_IDLE_S = 3
EXECUTION_COUNTS = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter(c => c.model.type === 'code').map(c => c.model.executionCount)"""
CLOSE_ON_HUB = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.shutdown();
  panel.dispose();
  await window.jupyterapp.serviceManager.sessions.shutdownAll();
}"""
HUB_LEARNER = "ada"


class HubRun:
    """One notebook's Run All through the hub: seconds, whether every code cell ran, its error outputs (apart: those
    of unanswered tasks), the URLs its page asked for outside the hub's origin, the load when it ended."""

    def __init__(self, seconds, ok, errors, stubs, elsewhere, load):
        self.seconds, self.ok, self.errors, self.stubs, self.elsewhere, self.load = seconds, ok, errors, stubs, elsewhere, load


def wait_until_run_all_is_done(page, timeout=600):
    """Until every code cell has run and the kernel is idle, or the kernel stayed idle STILL_IDLE_S with cells unrun.
    The Run All command returns at the first error, and the kernel is idle for a moment between two queued cells."""
    deadline, idle_since = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        state = page.evaluate(RUN_STATE)
        if state["idle"] and not state["unrun"]:
            return
        idle_since = (idle_since or time.monotonic()) if state["idle"] else None
        if idle_since and time.monotonic() - idle_since > STILL_IDLE_S:
            return
        time.sleep(0.1)
    raise TimeoutError(f"Run All did not finish within {timeout} s")


def run_all_on_hub(page, hub, path, requested):
    """Run All of the notebook at `path` (inside the course folder) in the learner's JupyterLab on the hub."""
    from bench.local_hub import course_folder

    requested.clear()
    page.goto(f"{hub.url}/user/{HUB_LEARNER}/lab/tree/{course_folder()}/{path}?reset")
    page.wait_for_function(KERNEL_READY, timeout=180_000, polling=100)
    started = time.monotonic()
    page.evaluate(RUN_ALL)
    wait_until_run_all_is_done(page)
    seconds = time.monotonic() - started
    counts = page.evaluate(EXECUTION_COUNTS)
    outputs = page.evaluate(ERROR_OUTPUTS)
    page.evaluate(CLOSE_ON_HUB)
    origin = urllib.parse.urlsplit(hub.url).netloc
    elsewhere = [url for url in requested if urllib.parse.urlsplit(url).scheme not in ("data", "blob")
                 and urllib.parse.urlsplit(url).netloc != origin]
    errors = [text for stub, text in outputs if not stub]
    stubs = [text for stub, text in outputs if stub]
    return HubRun(seconds, all(counts), errors, stubs, elsewhere, os.getloadavg()[0])


def hub_main(args):
    """Every lesson and exercise (or those asked for) through a local JupyterHub; 0 when none left an error output
    or reached beyond the hub."""
    from playwright.sync_api import sync_playwright

    from bench.local_hub import LocalHub

    paths = sorted(f"{folder}/{p.name}" for folder in ("notebooks", "exercises") for p in (ROOT / folder).glob("*.ipynb")
                   if not args.lessons or p.name[:2] in args.lessons)
    print(f"{len(paths)} notebooks through a JupyterHub; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at the start",
          flush=True)
    runs = {}
    with tempfile.TemporaryDirectory() as tmp, LocalHub(Path(tmp)) as hub, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        requested = []
        context.on("request", lambda request: requested.append(request.url))
        context.on("page", lambda page: page.on("websocket", lambda ws: requested.append(ws.url)))
        page = context.new_page()
        started = time.monotonic()
        hub.log_in(page, HUB_LEARNER, then=hub.pull_link())
        page.wait_for_function(KERNEL_READY, timeout=300_000, polling=200)
        print(f"logged in, server started, course pulled, lesson 00 open: {time.monotonic() - started:.1f} s", flush=True)
        print(f"{'notebook':56} {'s':>6} {'errors':>6} {'stubs':>6} {'beyond':>6} {'load':>6}", flush=True)
        for path in paths:
            run = runs[path] = run_all_on_hub(page, hub, path, requested)
            flag = "" if run.ok else "  (a cell did not run)"
            print(f"{path:56} {run.seconds:6.1f} {len(run.errors):6} {len(run.stubs):6} {len(run.elsewhere):6} {run.load:6.1f}"
                  f"{flag}", flush=True)
            for error in run.errors:
                print(f"    error output: {error[:150]}", flush=True)
            for url in run.elsewhere[:5]:
                print(f"    beyond the hub: {url[:150]}", flush=True)
        browser.close()
    errors = sum(len(run.errors) for run in runs.values())
    elsewhere = sum(len(run.elsewhere) for run in runs.values())
    not_run = [path for path, run in runs.items() if not run.ok]
    stubs = sum(len(run.stubs) for run in runs.values())
    print(f"{len(runs)} notebooks: {errors} error outputs ({stubs} more from unanswered exercise tasks, tagged "
          f"raises-exception), {elsewhere} requests beyond the hub, {len(not_run)} with a cell that did not run; "
          f"slowest {max(run.seconds for run in runs.values()):.1f} s; load {os.getloadavg()[0]:.1f} at the end")
    return 0 if errors == elsewhere == len(not_run) == 0 else 1


def print_row(name, warm, cold=None, cells=False):
    flag = "" if warm.ok and (cold is None or cold.ok) else "  (a cell did not run)"
    compared = f" {cold.seconds:7.1f} {warm.seconds / cold.seconds:5.2f}x" if cold is not None else ""
    print(f"{name:40} {warm.seconds:7.1f} {warm.load:6.1f}{compared}{flag}", flush=True)
    if cells or warm.seconds >= GOAL_S:
        for number, first_line, seconds in warm.slowest():
            print(f"    code cell {number:>3}: {seconds:5.1f} s  {first_line[:60]}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson numbers (default: all)")
    parser.add_argument("--cold", action="store_true", help="also run every lesson with labs started cold")
    parser.add_argument("--cells", action="store_true", help="every lesson's slowest cells, not only a slow lesson's")
    parser.add_argument("--hub", action="store_true", help="every lesson and exercise through a local JupyterHub")
    args = parser.parse_args(argv)
    if args.hub:
        return hub_main(args)
    from playwright.sync_api import sync_playwright

    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")
                     if not args.lessons or p.name[:2] in args.lessons)
    print(f"{len(lessons)} lessons; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at the start", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(ROOT / "notebooks", folder / "notebooks", ignore=shutil.ignore_patterns("exercises"))
        if (ROOT / ".venv-legacy").exists():  # lesson 22 finds its legacy server beside notebooks/
            (folder / ".venv-legacy").symlink_to(ROOT / ".venv-legacy")
        times = {}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            if not args.cold:
                print(f"{'lesson':40} {'warm s':>7} {'load':>6}", flush=True)
            for warm in (True, False) if args.cold else (True,):
                process, url, token = start_lab(folder, warm)
                try:
                    for name in lessons:
                        times[(name, warm)] = run_all(page, url, token, name)
                        if warm and not args.cold:
                            print_row(name, times[(name, True)], cells=args.cells)
                finally:
                    os.killpg(process.pid, 15)
                    process.wait(timeout=30)
            browser.close()
    if args.cold:
        print(f"{'lesson':40} {'warm s':>7} {'load':>6} {'cold s':>7} {'ratio':>6}")
        for name in lessons:
            print_row(name, times[(name, True)], times[(name, False)], cells=args.cells)
    slowest = max(times[(name, True)].seconds for name in lessons)
    print(f"goal: every lesson's Run All under {GOAL_S} s, warm: {'met' if slowest < GOAL_S else 'NOT met'} "
          f"(slowest {slowest:.1f} s); load {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m labserver.warm_session -- COMMAND`: the warm starter a learner's JupyterLab session runs under.

What a learner would notice: a lab started from the session is forked by the session's starter (not imported
again), it still answers on its own stdio, `LABSERVER_WARM=` starts one cold, and the starter never outlives
the session, even one killed outright.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from labserver.warm import WARM

ROOT = Path(__file__).resolve().parents[2]

# Run inside the session: start a lab as a lesson does, ask it one question, and say who forked it.
PROBE = textwrap.dedent("""
    import json, os, subprocess, sys, time
    import psutil
    starter = next(p for p in psutil.Process().parent().children() if "labserver.warm" in " ".join(p.cmdline()))
    # JupyterLab starts at once and the starter imports the lab meanwhile; a learner's first lab comes later.
    deadline = time.monotonic() + 60
    while os.environ.get("LABSERVER_WARM") and not os.path.exists(os.environ["LABSERVER_WARM"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    before = {p.pid for p in starter.children()}
    lab = subprocess.Popen([sys.executable, "-m", "labserver"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    frame = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}
    lab.stdin.write(json.dumps(frame) + "\\n"); lab.stdin.flush()
    reply = json.loads(lab.stdout.readline())
    forked = [p.pid for p in starter.children() if p.pid not in before]
    lab.stdin.close(); code = lab.wait()
    print(json.dumps({"warm": os.environ.get("LABSERVER_WARM"), "starter": starter.pid, "forked": len(forked),
                      "answered": reply.get("id") == 1 and "result" in reply, "exit": code}))
""")


def session(*command, env=None):
    return subprocess.run([sys.executable, "-m", "labserver.warm_session", "--", *command], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_lab_started_in_the_session_is_forked_by_its_starter_and_answers():
    run = session(sys.executable, "-c", PROBE)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["warm"] and seen["warm"] != os.environ.get(WARM), "the session names a starter of its own"
    assert seen["forked"] == 1 and seen["answered"] and seen["exit"] == 0


def test_an_empty_labserver_warm_starts_the_lab_cold():
    run = session(sys.executable, "-c", "import os; os.environ['LABSERVER_WARM'] = ''\n" + PROBE)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["forked"] == 0 and seen["answered"] and seen["exit"] == 0


def test_the_session_exits_with_its_commands_code():
    assert session(sys.executable, "-c", "raise SystemExit(7)").returncode == 7


def test_no_command_is_refused():
    run = subprocess.run([sys.executable, "-m", "labserver.warm_session", "--"], capture_output=True, text=True)
    assert run.returncode == 2 and "warm_session" in run.stderr


def starter_of(wrapper: subprocess.Popen) -> psutil.Process:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [p for p in psutil.Process(wrapper.pid).children() if "labserver.warm" in " ".join(p.cmdline())]
        if found and os.path.exists(found[0].cmdline()[-1]):
            return found[0]
        time.sleep(0.1)
    pytest.fail("the session's starter did not come up")


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_the_starter_ends_with_the_session_even_one_killed_outright(how):
    wrapper = subprocess.Popen([sys.executable, "-m", "labserver.warm_session", "--", "sleep", "600"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    starter = starter_of(wrapper)
    socket_path = starter.cmdline()[-1]
    (command,) = [p for p in psutil.Process(wrapper.pid).children() if p.pid != starter.pid]
    os.kill(wrapper.pid, how)
    wrapper.wait(timeout=30)
    starter.wait(timeout=30)  # raises if it outlives the session
    assert not starter.is_running()
    if how == signal.SIGKILL:  # nobody was left to clean up but the starter itself
        assert not os.path.exists(socket_path)
        command.kill()  # a command orphaned by a killed session is its own


def test_make_lab_runs_jupyterlab_in_a_warm_session_unless_told_not_to():
    dry = subprocess.run(["make", "-n", "lab"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "-m labserver.warm_session -- " in dry and "scripts/jupyter_lab.py" in dry
    cold = subprocess.run(["make", "-n", "lab", "WARM_LABS=0"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "warm_session" not in cold and "scripts/jupyter_lab.py" in cold

"""The learner's wait, measured from outside: `python -m bench.make_lab_bench [--runs N]`.

A second `make lab` (everything installed) timed the way a newcomer sees it: from typing the command to
JupyterLab answering `/api/contents`, against plain `jupyter lab` with the same options, and `make lab
WARM_LABS=0`. Then where the time goes (make's own checks, JupyterLab's import with and without the IRI
grammar scripts/jupyter_lab.py skips), and a lab's first answer, cold and forked from a warm session.
"""

import argparse
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from labserver.warm import WARM, warm_starter

ROOT = Path(__file__).resolve().parents[1]
PY = ROOT / ".venv" / "bin" / "python"
TOKEN = "bench"
DISCOVER = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}})


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def served_after(command, env):
    """Seconds from starting `command` until /api/contents answers 200; then stop it and its group."""
    port = free_port()
    options = f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.token={TOKEN} --allow-root"
    command = [part.replace("OPTIONS", options) for part in command]
    if "make" not in command[0]:
        command = [*command[:-1], *options.split()]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        while time.monotonic() - started < 120:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/contents", params={"token": TOKEN}, timeout=1).status_code == 200:
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"{' '.join(command)} did not serve within 120 s")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def cpu_of(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic() - started, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def first_answer(env):
    started = time.monotonic()
    lab = subprocess.Popen([str(PY), "-m", "labserver"], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    lab.stdin.write(DISCOVER + "\n")
    lab.stdin.flush()
    lab.stdout.readline()
    seconds = time.monotonic() - started
    lab.stdin.close()
    lab.wait()
    return seconds


def median(values):
    return statistics.median(values)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="make-lab-bench-"))
    env = {key: value for key, value in os.environ.items() if key != WARM}
    env.update(HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"))
    print(f"{args.runs} runs each, median; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}", flush=True)
    subprocess.run(["make", "-s", "lab", "-n"], cwd=ROOT, check=True, capture_output=True)  # stamps up to date
    served = {
        "make lab (warm session, trimmed start)": ["make", "--no-print-directory", "lab", "LAB_OPTS=OPTIONS"],
        "make lab WARM_LABS=0": ["make", "--no-print-directory", "lab", "WARM_LABS=0", "LAB_OPTS=OPTIONS"],
        "baseline: jupyter lab, same options": [str(ROOT / ".venv" / "bin" / "jupyter"), "lab",
                                                "--ServerApp.root_dir=notebooks", "--LanguageServerManager.autodetect=False",
                                                "OPTIONS"],
    }
    times = {name: median([served_after(command, env) for _ in range(args.runs)]) for name, command in served.items()}
    baseline = times["baseline: jupyter lab, same options"]
    print("second `make lab`, typing to /api/contents answering:")
    for name, seconds in times.items():
        print(f"  {name:42} {seconds:5.2f} s  {seconds / baseline:4.2f}x")
    print("where the time goes (wall, CPU):")
    checks = [cpu_of(["make", "-n", "lab"]) for _ in range(args.runs)]
    print(f"  make's own checks (make -n lab)             {median([w for w, _ in checks]):5.2f} s, {median([c for _, c in checks]):5.2f} s")
    for name, code in [("import JupyterLab (jupyter lab)", "from jupyterlab.labapp import main"),
                       ("import JupyterLab (scripts/jupyter_lab.py)",
                        "import sys; sys.modules['rfc3987_syntax'] = None; from jupyterlab.labapp import main")]:
        spent = [cpu_of([str(PY), "-c", code]) for _ in range(args.runs)]
        print(f"  {name:42} {median([w for w, _ in spent]):5.2f} s, {median([c for _, c in spent]):5.2f} s")
    cold = median([first_answer({**env, WARM: ""}) for _ in range(args.runs)])
    with warm_starter():
        warm = median([first_answer({**env, WARM: os.environ[WARM]}) for _ in range(args.runs)])
    print(f"a lab's first answer (start to server/discover reply): cold {cold:.2f} s, warm {warm:.2f} s, "
          f"{warm / cold:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

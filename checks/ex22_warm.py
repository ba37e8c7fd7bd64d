"""Warm starts for the reference servers of exercise 22's check, as labserver.warm gives the lab (standard library only).

A cold reference server imports its SDK at every start: 1 to 2 s of CPU, and more than 10 s on a busy machine, longer
than a right report's probe may wait. A starter imports a server's modules once and forks a fresh server for each
start, which runs `python -m MODULE ARGS` there with the stdin, stdout, stderr, folder and environment it was handed.
It is labserver.warm's starter with another main, loaded from its file: the legacy starter runs in .venv-legacy/,
where the kit is not installed. The check's recorder (checks/ex22_recorder.py) hands each server its pipes.

`python ex22_warm.py LABSERVER_WARM_FILE SOCKET MODULE...` is a starter; it ends when its stdin closes.
"""

import atexit
import contextlib
import importlib
import importlib.util
import runpy
import select
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

READY_WAIT_S = 120  # a starter imports the SDK before it listens: seconds on a busy machine


def load_labserver_warm(path):
    spec = importlib.util.spec_from_file_location("labserver_warm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_module(argv):
    """What `python -m MODULE ARGS` does, in a process that imported MODULE already."""
    sys.argv = list(argv)
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)


def serve(labserver_warm_file, path, modules):
    warm = load_labserver_warm(labserver_warm_file)
    del sys.path[0]  # checks/, this script's folder: `python -m` would not see it
    for module in modules:
        importlib.import_module(module)  # the slow import, paid once
    warm.serve(path, main=run_module)


class Starter:
    """A starter for one Python and the modules it imports, kept for the kernel's life: the kernel holds its stdin."""

    def __init__(self, python, modules):
        from labserver import warm

        self.folder = tempfile.mkdtemp(prefix="field-trip-warm-")
        self.path = str(Path(self.folder) / "starter")
        self.process = subprocess.Popen([str(python), __file__, warm.__file__, self.path, *modules],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.listening = None
        self.asked = threading.Lock()
        atexit.register(self.stop)

    def ready(self, timeout=READY_WAIT_S):
        """Wait until the starter listens; False if it ended first or took longer (its servers then start cold)."""
        with self.asked:
            if self.listening is None:
                readable, _, _ = select.select([self.process.stdout], [], [], timeout)
                self.listening = bool(readable) and self.process.stdout.readline() == b"ready\n"
            return self.listening

    def warm(self, module, *args):
        """What the recorder needs to start `python -m module args` from this starter."""
        return {"socket": self.path, "argv": [module, *args]}

    def stop(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(5)
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], sys.argv[3:])

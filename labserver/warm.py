"""Warm starts: one process imports the lab once and forks a fresh lab for each start.

Importing the SDK costs a lab about 1.4 s of CPU at every start; a test run starts hundreds,
and a learner several in every lesson. When `LABSERVER_WARM` names the socket of a warm
starter (`python -m labserver.warm SOCKET`, which `warm_starter()` runs for pytest, the
grader's sandboxes and a learner's JupyterLab session), `python -m labserver`
hands its stdin, stdout, stderr, arguments, folder and environment to that starter and
stays as a small stand-in: the forked lab serves the same descriptors with the same code,
the stand-in passes on the signals it gets and exits the way the lab did, and a stand-in
killed outright (SIGKILL) takes the lab with it. An empty `LABSERVER_WARM` starts labs cold;
tests that watch the lab's own process (its memory, a SIGKILL mid-write) start it cold.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path

WARM = "LABSERVER_WARM"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
MESSAGE = 1 << 20
SESSION = object()  # marks the starter's stdin among what it watches


def start_warm(argv: list[str]) -> int | None:
    """Run the lab in the warm starter `LABSERVER_WARM` names; its exit code, or None to start cold."""
    path = os.environ.get(WARM)
    if not path:
        return None
    link = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        link.connect(path)
    except OSError:
        link.close()
        return None  # no starter there (any more): a cold start still works
    # A signal ignored here (SIG_IGN is inherited across exec) stays ignored in the lab, as in a cold start.
    ignored = [signum for signum in FORWARDED if signal.getsignal(signum) == signal.SIG_IGN]
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "ignored": ignored}).encode()
    socket.send_fds(link, [request], [0, 1, 2])
    # The lab holds the only copies now, so a closed stdin or stdout means what it would in a cold start.
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)
    pid = int(link.recv(64))
    for signum in set(FORWARDED) - set(ignored):
        signal.signal(signum, lambda signum, _: _signal(pid, signum))
    status = link.recv(64)
    code = os.waitstatus_to_exitcode(int(status)) if status else 1
    if code < 0:  # die of the same signal, as the lab did
        if -code != signal.SIGKILL:  # the one signal no handler can catch, nor be reset from
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


def serve(path: str, main=None) -> None:
    """The warm starter: import the lab once, then fork one lab per stand-in that connects.

    It ends when its stdin closes: whoever started it holds the other end, so a starter never outlives its
    session, even one killed outright. The labs it forked keep running, each with its own stand-in.
    `main(argv)` runs another server instead of the lab (its caller imported that server already):
    exercise 22's check starts the reference servers this way (checks/ex22_warm.py).
    """
    if main is None:
        from labserver import cli  # the slow import, paid once

        main = cli.main

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path + ".binding")
    listener.listen(64)
    os.rename(path + ".binding", path)  # the path appears only once it listens: a stand-in never races it
    print("ready", flush=True)
    watching = selectors.DefaultSelector()
    watching.register(listener, selectors.EVENT_READ)
    watching.register(sys.stdin.fileno(), selectors.EVENT_READ, SESSION)
    while True:
        for key, _ in watching.select():
            if key.data is SESSION:
                if not os.read(key.fd, 512):
                    with contextlib.suppress(OSError):
                        os.unlink(path)
                    return
            elif key.fileobj is listener:
                _fork_one(listener, watching, main)
            else:
                pid, link = key.data
                _, status = os.waitpid(pid, 0)
                watching.unregister(key.fd)
                os.close(key.fd)
                with contextlib.suppress(OSError):
                    link.send(str(status).encode())
                link.close()


def _fork_one(listener, watching, lab_main):
    link, _ = listener.accept()
    try:
        request, fds, _, _ = socket.recv_fds(link, MESSAGE, 3)
    except OSError:
        link.close()
        return
    if len(fds) != 3 or not request:
        for fd in fds:
            os.close(fd)
        link.close()
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _become_the_lab(link, json.loads(request), fds, listener, watching, lab_main)
    for fd in fds:
        os.close(fd)
    link.send(str(pid).encode())
    watching.register(os.pidfd_open(pid), selectors.EVENT_READ, (pid, link))


def _become_the_lab(link, request, fds, listener, watching, lab_main):
    code = 1
    try:
        for key in list(watching.get_map().values()):
            if key.fileobj is not listener and key.data is not SESSION:  # the session's stdin is replaced below
                os.close(key.fd)
                key.data[1].close()
        watching.close()
        listener.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["labserver", *request["argv"]]
        # The dispositions a fresh `python -m labserver` would start with, not the starter's: a starter run
        # from a shell that ignores SIGINT (a background job) would otherwise hand that on to every lab.
        for signum in FORWARDED:
            fresh = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, signal.SIG_IGN if signum in request["ignored"] else fresh)
        # Linux may hand a signal sent to the process to any thread that does not block it; one handed to
        # the watcher would wait unseen while the main thread sleeps in its event loop. The watcher is
        # started with them blocked (a thread inherits the mask), and the main thread takes them again.
        unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
        threading.Thread(target=_die_with_the_stand_in, args=(link,), daemon=True).start()
        signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
        code = _exit_code(lab_main, request["argv"])
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _exit_code(lab_main, argv):
    """What `python -m labserver` would have exited with."""
    try:
        lab_main(argv)
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - reported the way the interpreter reports it
        traceback.print_exc()
        return 1
    return 0


def _die_with_the_stand_in(link):
    """A stand-in killed outright cannot pass the signal on: its link closing is the sign."""
    with contextlib.suppress(OSError):
        while link.recv(64):
            pass
    os.kill(os.getpid(), signal.SIGKILL)


@contextlib.contextmanager
def warm_starter(ready_first=True):
    """Run a warm starter for the time of the block, with `LABSERVER_WARM` naming it.

    With ready_first=False the block starts at once, while the starter still imports the lab: a lab
    started before it listens starts cold, as `start_warm` falls back when nobody answers the socket.
    """
    folder = Path(tempfile.mkdtemp(prefix="labserver-warm-"))
    path = str(folder / "starter")
    starter = subprocess.Popen([sys.executable, "-m", "labserver.warm", path], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE if ready_first else subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    before = os.environ.get(WARM)
    try:
        if not ready_first or starter.stdout.readline() == b"ready\n":
            os.environ[WARM] = path
        yield path
    finally:
        if before is None:
            os.environ.pop(WARM, None)
        else:
            os.environ[WARM] = before
        starter.kill()
        starter.wait()
        starter.stdin.close()
        if starter.stdout:
            starter.stdout.close()
        with contextlib.suppress(OSError):
            os.unlink(path)
            folder.rmdir()


if __name__ == "__main__":
    serve(sys.argv[1])

"""Shared pieces of the hardening tests, plus checks of the pieces themselves.

The other test_hardening_* files import from here: a peak-memory meter for a
process, a list of this test process's live children, a snapshot of a folder
tree, and tiny misbehaving servers (stdio one-liners and an HTTP script).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

from labserver.notes import seed_folder
from mcpwire import process

MB = 1024 * 1024


class PeakRss:
    """How far a process's resident memory rises above its level when the with-block starts.

    On Linux the kernel's high-water mark (VmHWM) is reset on entry and read on exit,
    which catches even a spike between two samples; memory is also sampled every
    millisecond, which is all there is elsewhere.
    """

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.start = self.peak = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._kernel_mark = False

    def __enter__(self) -> PeakRss:
        self.start = self.peak = self.process.memory_info().rss
        try:
            Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")
            self._kernel_mark = True
        except OSError:
            pass
        self._sampler.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sampler.join()
        if self._kernel_mark and self.process.is_running():
            status = Path(f"/proc/{self.process.pid}/status").read_text()
            kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
            self.peak = max(self.peak, kib * 1024)

    def _sample(self) -> None:
        while not self._stop.wait(0.001):
            with contextlib.suppress(psutil.Error):
                self.peak = max(self.peak, self.process.memory_info().rss)

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.start) / MB


def live_children() -> set[int]:
    """Pids of this process's descendants that are still running (zombies do not count)."""
    found = set()
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.status() != psutil.STATUS_ZOMBIE:
                found.add(child.pid)
    return found


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under folder (symlinks as their target path), by relative path."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = str(path.relative_to(folder))
        if path.is_symlink():
            found[relative] = b"-> " + os.fsencode(os.readlink(path))
        elif path.is_file():
            found[relative] = path.read_bytes()
        else:
            found[relative] = b"<dir>"
    return found


class Sandbox:
    """A notes folder with a canary folder beside it and a working directory for the server.

    The canary holds a note-like file and the notes folder a symlink to it, so an
    escape through a path or a followed link would show in `outside_notes()`.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.notes, self.canary, self.cwd = root / "notes", root / "canary", root / "cwd"
        seed_folder(self.notes)
        self.canary.mkdir()
        self.cwd.mkdir()
        (self.canary / "secret.md").write_text("---\nid: secret\ntitle: Secret\n---\nnot for the lab server\n")
        (self.notes / "leak.md").symlink_to(self.canary / "secret.md")
        self.before = self.outside_notes()

    def outside_notes(self) -> dict[str, bytes]:
        return {name: data for name, data in snapshot(self.root).items() if name.split(os.sep)[0] != "notes"}


def python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


# Fake stdio servers, each reads a request line first.
# It reads both requests before it gives up, so neither write can find the pipe already closed.
DIES_AFTER_READING = python("import sys; sys.stdin.readline(); sys.stdin.readline(); sys.stderr.write('giving up\\n'); "
                            "sys.exit(3)")
KILLS_ITSELF = python("import os, signal, sys; sys.stdin.readline(); os.kill(os.getpid(), signal.SIGKILL)")
NEVER_ANSWERS = python("import sys; sys.stdin.read()")
BINARY_GARBAGE = python(
    r"""
    import sys
    sys.stdin.readline()
    sys.stdout.buffer.write(b'\x00\xff\xfe garbage \x80\n{"jsonrpc":"2.0","id":999,"result":{}}\n{"id":1}\n')
    sys.stdout.flush()
    sys.stdin.read()
    """
)
ENDLESS_LINE = python(
    """
    import os, sys
    sys.stdin.readline()
    chunk = b"x" * (1 << 20)
    while True:
        os.write(1, chunk)
    """
)
CLOSES_STDOUT = python("import os, sys, time; sys.stdin.readline(); os.close(1); time.sleep(60)")

FAKE_HTTP_SERVER = textwrap.dedent(
    """
    import os, socket, sys, time
    mode = sys.argv[1]
    listener = socket.create_server(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", flush=True)
    while True:
        connection, _ = listener.accept()
        connection.recv(1 << 16)
        if mode == "dies":
            os._exit(3)
        elif mode == "garbage":
            connection.sendall(b"\\x00\\xff this is not HTTP\\r\\n\\r\\n")
            connection.close()
        elif mode == "silent":
            time.sleep(3600)
        elif mode == "flood":
            connection.sendall(b"HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\n\\r\\n")
            try:
                while True:
                    connection.sendall(b"x" * (1 << 20))
            except OSError:
                connection.close()
    """
)


@contextlib.contextmanager
def fake_http_server(mode: str, folder: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """Run FAKE_HTTP_SERVER in `mode` (a child process without a stdin pipe); yield its URL and process."""
    script = folder / "fake_http_server.py"
    script.write_text(FAKE_HTTP_SERVER)
    server = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE)
    try:
        yield server.stdout.readline().decode().strip(), server
    finally:
        process.stop(server, 0.5)
        server.stdout.close()


# --- the pieces themselves ------------------------------------------------------------------


def test_peak_rss_sees_a_short_spike_in_another_process():
    child = subprocess.Popen(
        python("import sys, time; sys.stdin.readline(); x = bytearray(60 * 1024 * 1024); del x; time.sleep(30)"),
        stdin=subprocess.PIPE,
    )
    try:
        time.sleep(0.3)
        with PeakRss(child.pid) as meter:
            child.stdin.write(b"go\n")
            child.stdin.flush()
            time.sleep(0.5)
        assert meter.growth_mb > 50
    finally:
        process.stop(child, 0.2)


def test_live_children_sees_a_child_until_it_is_stopped():
    child = subprocess.Popen(NEVER_ANSWERS, stdin=subprocess.PIPE)
    assert child.pid in live_children()
    process.stop(child, 1.0)
    assert child.pid not in live_children()


def test_snapshot_notices_a_new_file_and_a_changed_link(tmp_path):
    (tmp_path / "a").write_text("1")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    before = snapshot(tmp_path)
    (tmp_path / "b").write_text("2")
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "b")
    after = snapshot(tmp_path)
    assert set(after) - set(before) == {"b"} and after["link"] != before["link"]

"""Reading a server's stdout for whoever is waiting, without a thread in between.

A caller waiting for its reply reads the pipe itself: no second thread has to
wake up and hand the reply over, which is most of a round trip's overhead on a
cheap method. When several callers wait (threads), one reads and files every
line it gets, for everyone, and the others sleep until something is filed for
them or the reader's turn is free. When nobody has waited for a while, a
background thread reads instead, so notifications keep arriving, the server
never blocks on a full pipe, and the end of the stream is noticed.

Every line is handed to `file(line)` (bytes, or `lines.Oversized`) with `lock`
held, and `end()` is called once at the end of the stream; `lock` (an RLock) also
guards whatever they change. Neither may raise.

A round trip on a cheap method is a few hundred microseconds, and each Python
call on the way costs a little of it (more when the server has just run on the
same core and the caches are cold), so the caller's path is kept short.
"""

import math
import os
import select
import threading
import time
import weakref

from .lines import LineSplitter

IDLE_S = 0.05  # how long nobody must have waited before the background thread reads


class PipeReader:
    def __init__(self, stream, file, end, *, limit=None):
        self.lock = threading.RLock()  # a plain `with` on it: a Condition's would run Python code every time
        self._filed = threading.Condition(self.lock)  # callers sleep here while another one reads
        self._idle = threading.Condition(self.lock)  # only the background thread sleeps here: no wake-up per reply
        self.ended = False
        self._stream = stream
        self._fd = stream.fileno()
        self._file = file
        self._end = end
        self._splitter = LineSplitter(limit)
        self._reading = None  # None, "caller" or "background": who is in select()/read() now
        self._waiting = 0
        self._last_wait = time.monotonic()
        self._wake_r, self._wake_w = os.pipe()
        self._caller_poll = select.poll()  # made once: a select() per read builds and returns three lists
        self._caller_poll.register(self._fd, select.POLLIN)
        weakref.finalize(self, _close, self._wake_r, self._wake_w)  # once nobody can write to them any more
        self._thread = threading.Thread(target=self._background, daemon=True, name="mcpwire-stdout")
        self._thread.start()

    def wait_until(self, done, timeout):
        """Read and file lines until `done()` (called with the lock held) is true, the stream ends, or time is up.

        Returns `done()`. Call it with `lock` held.
        """
        deadline = time.monotonic() + timeout
        self._waiting += 1
        try:
            while not done():
                left = deadline - time.monotonic()
                if self.ended or left <= 0:
                    return done()
                if self._reading is None:
                    self._read_once("caller", left)
                    continue
                if self._reading == "background":
                    os.write(self._wake_w, b"!")  # it lets go of the pipe as soon as it sees this
                self._filed.wait(left)
            return True
        finally:
            self._waiting -= 1
            self._last_wait = time.monotonic()

    def join(self, timeout):
        """Wait (without the lock) for the background thread, which ends with the stream."""
        self._thread.join(timeout)

    def _read_once(self, who, timeout):
        """One select() and read() outside the lock, then file what came (call with the lock held).

        Only the background thread also watches the wake-up pipe: a caller has no one to wake it.
        """
        self._reading = who
        self.lock.release()
        data = None
        try:
            if who == "caller":
                # In milliseconds, rounded up (no busy loop near the deadline), at most a day (a C int).
                if self._caller_poll.poll(math.ceil(min(timeout, 86400) * 1000)):  # POLLIN, or POLLHUP at the end
                    data = os.read(self._fd, 1 << 16)
            else:
                ready, _, _ = select.select([self._fd, self._wake_r], [], [], timeout)
                if self._wake_r in ready:
                    os.read(self._wake_r, 512)
                if self._fd in ready:
                    data = os.read(self._fd, 1 << 16)
        except (OSError, ValueError):  # closed under us: the same as its end
            data = b""
        finally:
            self.lock.acquire()
            self._reading = None
        if data:
            for line in self._splitter.feed(data):
                self._file(line)
        elif data is not None:
            self._take_end()
        if self._waiting > (who == "caller"):  # someone besides the reader sleeps in _filed.wait()
            self._filed.notify_all()

    def _take_end(self):
        last = self._splitter.end()
        if last is not None:
            self._file(last)
        self.ended = True
        self._end()

    def _background(self):
        with self.lock:
            while not self.ended:
                quiet = time.monotonic() - self._last_wait
                if self._waiting or self._reading is not None:
                    self._idle.wait(IDLE_S)
                elif quiet < IDLE_S:
                    self._idle.wait(IDLE_S - quiet)
                else:
                    self._read_once("background", None)


def _close(*fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass

"""The stdio transport by hand: one JSON line per message on the server's stdin/stdout.

A reader thread files every line that comes back: replies by id (they can arrive
out of order), notifications in arrival order, stderr apart (it is only logging).
"""

import io
import json
import sys
import threading
import time
import weakref
from collections import deque

from . import frames, process
from .errors import ServerExited, WireTimeout
from .reply import Reply
from .transcript import Exchange, Transcript


class _Pending:
    """A line we wrote and the reply we are still expecting for it."""

    def __init__(self, frame_id, method, line, payload, progress_token):
        self.id = frame_id
        self.method = method
        self.line = line
        self.payload = payload
        self.progress_token = progress_token
        self.started = time.perf_counter()
        self.down = []  # (line bytes, payload text) of tied notifications, then the reply
        self.notes = []
        self.reply = None
        self.abandoned = False

    def describe(self):
        return f"id {self.id!r} ({self.method})" if self.method else f"id {self.id!r}"


def _method_of(line):
    try:
        method = json.loads(line).get("method")
    except (ValueError, AttributeError):
        return None
    return method if isinstance(method, str) else None


def _progress_token(frame):
    meta = (frame.get("params") or {}).get("_meta") if isinstance(frame.get("params"), dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


def _pump(wire_ref, stdout):
    """The reader thread: file each stdout line with its wire, until EOF (or the wire is gone)."""
    stdout = io.BufferedReader(stdout, 1 << 16)
    for line in iter(stdout.readline, b""):
        wire = wire_ref()
        if wire is None:
            return
        wire._file(line)
        del wire
    wire = wire_ref()
    if wire is not None:
        wire._stdout_ended()


class StdioWire:
    """A server process we talk to over stdin/stdout. Use it as a context manager."""

    transport = "stdio"

    def __init__(self, command, *, timeout=10.0, cwd=None, env=None):
        self.command = list(command)
        self.timeout = timeout
        self.transcript = Transcript()
        self.notifications = []
        self.stderr_lines = []
        self._next_id = 1
        self._changed = threading.Condition()
        self._write_lock = threading.Lock()
        self._unanswered = {}        # id -> deque of _Pending, oldest first
        self._unanswered_null = deque()  # raw sends an id-less error reply may answer
        self._uncollected = {}       # id -> deque of _Pending that `wait` has not returned yet
        self._by_token = {}          # progressToken -> _Pending
        self._unread = deque()       # messages nobody was waiting for, for `read`
        self._stdout_closed = False
        self._process = process.start(self.command, cwd=cwd, env=env)
        self._finalizer = process.reap_on_collect(self, self._process)
        self._stderr_thread = process.collect_lines(self._process.stderr, self.stderr_lines)
        # The reader holds only a weak reference, so a forgotten wire can be collected (and its server reaped).
        self._reader = threading.Thread(target=_pump, args=(weakref.ref(self), self._process.stdout), daemon=True)
        self._reader.start()

    @classmethod
    def labserver(cls, *extra_args, **kwargs):
        """The bundled notes lab server: `python -m labserver ...`."""
        return cls([sys.executable, "-m", "labserver", *extra_args], **kwargs)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._process.returncode is not None else "open"
        return f"<StdioWire {' '.join(self.command[1:]) if self.command[0] == sys.executable else ' '.join(self.command)} ({state})>"

    @property
    def returncode(self):
        return self._process.poll()

    # --- sending -------------------------------------------------------------

    def request(self, method, params=None, *, timeout=None, **frame_kwargs):
        """Build a 2026-07-28 request with the next free id, send it, return its Reply."""
        frame_kwargs.setdefault("id", self._next_id)
        return self.send(frames.request(method, params, **frame_kwargs), timeout=timeout)

    def notify(self, method, params=None, **frame_kwargs):
        """Send a notification (nothing comes back)."""
        self.send(frames.notification(method, params, **frame_kwargs))

    def send(self, frame, *, timeout=None):
        """Write a frame; a request waits for its reply, a notification returns None."""
        self.write(frame)
        if "id" not in frame:
            return None
        return self.wait(frame["id"], timeout=timeout)

    def send_all(self, frames_, *, timeout=None):
        """Write every frame first, then collect the replies (in the order the frames were written)."""
        for frame in frames_:
            self.write(frame)
        return [self.wait(frame["id"], timeout=timeout) for frame in frames_ if "id" in frame]

    def write(self, frame):
        """Write one frame as one line without waiting; collect its reply later with `wait(id)`."""
        payload = frames.dumps(frame)
        method = frame.get("method")
        if "id" not in frame:
            self._write_line(payload + "\n", None)
            return
        self._write_line(payload + "\n", _Pending(frame["id"], method, None, payload, _progress_token(frame)))

    def send_raw(self, text, *, newline=True, timeout=2.0):
        """Write exactly `text` (str or bytes; plus a newline unless newline=False), even if it is malformed.

        Returns the reply that arrived within `timeout` seconds (matched by the id, if
        one can be read from the text, or an id-less error reply), or None for silence.
        """
        if isinstance(text, bytes):
            text = text.decode("utf-8", "surrogateescape")
        frame_id, method, has_id = None, None, False
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            method = parsed.get("method") if isinstance(parsed.get("method"), str) else None
            frame_id = parsed.get("id")
            has_id = isinstance(frame_id, (int, str)) and not isinstance(frame_id, bool)
        pending = _Pending(frame_id if has_id else None, method, None, text, None)
        self._write_line(text + ("\n" if newline else ""), pending, by_id=has_id, by_null=True, collect=False)
        return self._wait_for(pending, timeout, raise_on_timeout=False)

    def _write_line(self, line, pending, *, by_id=True, by_null=False, collect=True):
        data = line.encode("utf-8", "surrogateescape")  # surrogateescape: raw bytes that are not UTF-8 go out as-is
        with self._changed:
            if pending is not None:
                pending.line = data
                if by_id:
                    self._unanswered.setdefault(pending.id, deque()).append(pending)
                if collect:
                    self._uncollected.setdefault(pending.id, deque()).append(pending)
                if by_null:
                    self._unanswered_null.append(pending)
                if pending.progress_token is not None:
                    self._by_token[pending.progress_token] = pending
                if isinstance(pending.id, int) and not isinstance(pending.id, bool) and pending.id >= self._next_id:
                    self._next_id = pending.id + 1
            else:
                self.transcript.append(Exchange("stdio", _method_of(line), None, data, b"", [line.rstrip("\n")]))
            try:
                with self._write_lock:
                    self._process.stdin.write(data)
            except (OSError, ValueError):
                if pending is not None:
                    self._give_up(pending)
                failed = True
            else:
                failed = False
        if failed:
            raise self._exited("could not write to the server: it has exited")

    # --- receiving -----------------------------------------------------------

    def wait(self, frame_id, *, timeout=None):
        """The reply to the oldest request written with this id (raises WireTimeout if none comes)."""
        with self._changed:
            queue = self._uncollected.get(frame_id)
            if not queue:
                raise KeyError(f"no request with id {frame_id!r} was written on this wire")
            pending = queue[0]
        try:
            return self._wait_for(pending, timeout)
        finally:
            with self._changed:
                if queue and queue[0] is pending:
                    queue.popleft()

    def read(self, timeout=1.0):
        """The next message nobody was waiting for (a listen notification, a stray reply), or None."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self._unread:
                left = deadline - time.monotonic()
                if left <= 0 or self._stdout_closed:
                    return None
                self._changed.wait(left)
            return self._unread.popleft()

    def _wait_for(self, pending, timeout, raise_on_timeout=True):
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        with self._changed:
            while pending.reply is None:
                left = deadline - time.monotonic()
                if self._stdout_closed:
                    break
                if left <= 0:
                    self._give_up(pending)
                    if raise_on_timeout:
                        raise WireTimeout(f"no reply to {pending.describe()} within {timeout} s")
                    return None
                self._changed.wait(left)
            if pending.reply is not None:
                return pending.reply
            self._give_up(pending)
        if not raise_on_timeout:
            return None
        raise self._exited(f"the server closed stdout before replying to {pending.describe()}")

    def _give_up(self, pending):
        """Stop expecting a reply: record what was written (and any notifications), so byte counts stay exact.

        A reply that still comes later is filed as unsolicited and shows up in `read()`.
        """
        if pending.abandoned:
            return
        pending.abandoned = True
        queue = self._unanswered.get(pending.id)
        if queue and pending in queue:
            queue.remove(pending)
        if pending in self._unanswered_null:
            self._unanswered_null.remove(pending)
        if self._by_token.get(pending.progress_token) is pending:
            del self._by_token[pending.progress_token]
        self._record(pending)

    def _record(self, pending):
        self.transcript.append(Exchange(
            "stdio", pending.method, pending.id, pending.line, b"".join(d for d, _ in pending.down),
            [pending.payload], [t for _, t in pending.down],
            elapsed_ms=(time.perf_counter() - pending.started) * 1000))

    def _exited(self, message):
        try:
            code = self._process.wait(timeout=2)
        except Exception:
            code = None
        time.sleep(0.05)  # let the stderr thread catch the last lines
        return ServerExited(f"{message} (exit code {code})", code, self.stderr_lines[-5:])

    def _stdout_ended(self):
        with self._changed:
            self._stdout_closed = True
            self._changed.notify_all()

    def _file(self, line):
        body = line.rstrip(b"\n")
        reply = Reply.from_bytes(body)
        message = reply.message
        text = body.decode("utf-8", "replace")
        with self._changed:
            if isinstance(message, dict) and ("result" in message or "error" in message):
                pending = self._take_pending(message.get("id"))
                if pending is not None:
                    self._complete(pending, line, text, reply)
                else:
                    self._unsolicited(line, text, reply)
            elif isinstance(message, dict) and "method" in message:
                self.notifications.append(message)
                token = (message.get("params") or {}).get("progressToken") if isinstance(message.get("params"), dict) else None
                owner = self._by_token.get(token) if token is not None else None
                if owner is not None:
                    owner.down.append((line, text))
                    owner.notes.append(message)
                else:
                    self._unsolicited(line, text, reply)
            else:
                self._unsolicited(line, text, reply)
            self._changed.notify_all()

    def _take_pending(self, reply_id):
        if reply_id is None:
            pending = self._unanswered_null.popleft() if self._unanswered_null else None
            if pending is not None and pending.id is not None:
                self._unanswered[pending.id].remove(pending)
            return pending
        queue = self._unanswered.get(reply_id)
        if not queue:
            return None
        pending = queue.popleft()
        if pending in self._unanswered_null:
            self._unanswered_null.remove(pending)
        return pending

    def _complete(self, pending, line, text, reply):
        pending.down.append((line, text))
        reply.notifications = pending.notes
        reply.method = pending.method
        pending.reply = reply
        if self._by_token.get(pending.progress_token) is pending:
            del self._by_token[pending.progress_token]
        self._record(pending)

    def _unsolicited(self, line, text, reply):
        message = reply.message if isinstance(reply.message, dict) else {}
        self.transcript.append(Exchange("stdio", message.get("method"), message.get("id"), b"", line, [], [text]))
        self._unread.append(reply)

    # --- shutdown ------------------------------------------------------------

    def close(self, grace=5.0):
        """Close stdin (the server answers what it has read, then exits), wait `grace` s, then escalate.

        Returns the exit code. Idempotent.
        """
        code = process.stop(self._process, grace)
        self._reader.join(timeout=2)
        self._stderr_thread.join(timeout=2)
        for stream in (self._process.stdout, self._process.stderr):
            try:
                stream.close()
            except OSError:
                pass
        self._finalizer.detach()
        return code

"""The stdio transport by hand: one JSON line per message on the server's stdin/stdout.

A reader thread files every line that comes back: a reply goes into the mailbox of
the request with its id (replies can arrive out of order), notifications are kept in
arrival order, and stderr is collected apart (it is only logging, never an error).
"""

import io
import json
import queue
import re
import sys
import threading
import time
import weakref
from collections import deque

from . import frames, process
from .errors import ServerExited, WireTimeout
from .reply import Reply
from .transcript import Exchange, Transcript

_CLOSED = object()  # dropped into every open mailbox when the server's stdout ends
MAX_LINE_BYTES = 16 * 1024 * 1024  # a longer line is dropped, so a runaway server cannot fill our memory
_ID_AT_START = re.compile(rb'\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d+|"[^"\\]*")')


class _Pending:
    """A line we wrote, and the mailbox the reader thread drops its reply into."""

    def __init__(self, frame_id, method, payload, progress_token=None):
        self.id = frame_id
        self.method = method
        self.payload = payload
        self.line = b""
        self.progress_token = progress_token
        self.started = time.perf_counter()
        self.mailbox = queue.SimpleQueue()
        self.down = []  # (line bytes, text) of notifications tied to it, then of the reply
        self.notes = []
        self.reply = None
        self.given_up = False

    def describe(self):
        return f"id {self.id!r} ({self.method})" if self.method else f"id {self.id!r}"


def _method_of(text):
    try:
        method = json.loads(text).get("method")
    except (ValueError, AttributeError, RecursionError):
        return None
    return method if isinstance(method, str) else None


def _progress_token(frame):
    params = frame.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return _as_key(meta.get("progressToken")) if isinstance(meta, dict) else None


def _as_key(value):
    """An id or progress token we can look up; a list or object (unhashable) matches nothing, so None."""
    return None if isinstance(value, (list, dict)) else value


def _pump(wire_ref, stdout):
    """The reader thread: file each stdout line with its wire until EOF.

    It holds the wire only weakly, so a forgotten wire can be collected (and its server reaped).
    """
    stdout = io.BufferedReader(stdout, 1 << 16)
    while line := stdout.readline(MAX_LINE_BYTES):
        size = len(line)
        if size == MAX_LINE_BYTES and not line.endswith(b"\n"):
            size += _skip_rest_of_line(stdout)  # holds no reference to the wire meanwhile
        wire = wire_ref()
        if wire is None:
            return
        if size == len(line):
            wire._file(line)
        else:
            wire._file_oversized(line[:200], size)
        del wire
    wire = wire_ref()
    if wire is not None:
        wire._stdout_ended()


def _skip_rest_of_line(stdout):
    """Read and forget up to the next newline (or EOF); return how many bytes that was."""
    skipped = 0
    while piece := stdout.readline(1 << 16):
        skipped += len(piece)
        if piece.endswith(b"\n"):
            break
    return skipped


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
        self._lock = threading.Lock()  # guards the indexes below
        self._write_lock = threading.Lock()
        self._unanswered = {}  # id -> deque of _Pending, oldest first
        self._unanswered_null = deque()  # raw sends an id-less error reply may answer
        self._uncollected = {}  # id -> deque of _Pending that `wait` has not returned yet
        self._by_token = {}  # progressToken -> _Pending
        self._unread = queue.SimpleQueue()  # messages nobody was waiting for, for `read`
        self._stdout_closed = False
        self._process = process.start(self.command, cwd=cwd, env=env)
        self._finalizer = process.reap_on_collect(self, self._process)
        self._stderr_thread = process.collect_lines(self._process.stderr, self.stderr_lines)
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
        command = self.command[1:] if self.command[0] == sys.executable else self.command
        state = "open" if self._process.poll() is None else "closed"
        return f"<StdioWire {' '.join(command)} ({state})>"

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
        return self.wait(frame["id"], timeout=timeout) if "id" in frame else None

    def send_all(self, frames_, *, timeout=None):
        """Write every frame first, then collect the replies (in the order the frames were written)."""
        for frame in frames_:
            self.write(frame)
        return [self.wait(frame["id"], timeout=timeout) for frame in frames_ if "id" in frame]

    def write(self, frame):
        """Write one frame as one line without waiting; collect its reply later with `wait(id)`."""
        payload = frames.dumps(frame)
        if "id" not in frame:
            self._write(payload + "\n", payload, None)
        else:
            pending = _Pending(frame["id"], frame.get("method"), payload, _progress_token(frame))
            self._write(payload + "\n", payload, pending, by_id=True)

    def send_raw(self, text, *, newline=True, timeout=2.0):
        """Write exactly `text` (str or bytes; plus a newline unless newline=False), even if it is malformed.

        Returns the reply that arrived within `timeout` seconds (matched by the id, if
        one can be read from the text, or an id-less error reply), or None for silence.
        """
        if isinstance(text, bytes):
            text = text.decode("utf-8", "surrogateescape")
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
        frame_id = parsed.get("id") if isinstance(parsed, dict) else None
        has_id = isinstance(frame_id, (int, str)) and not isinstance(frame_id, bool)
        pending = _Pending(frame_id if has_id else None, _method_of(text), text)
        self._write(text + ("\n" if newline else ""), text, pending, by_id=has_id, by_null=True, collect=False)
        return self._wait_for(pending, timeout, raise_on_timeout=False)

    def _write(self, line, payload, pending, *, by_id=False, by_null=False, collect=True):
        data = line.encode("utf-8", "surrogateescape")  # raw bytes that are not UTF-8 go out as they were
        with self._lock:
            if pending is None:
                self.transcript.append(Exchange("stdio", _method_of(payload), None, data, b"", [payload]))
            else:
                pending.line = data
                if by_id:
                    self._unanswered.setdefault(pending.id, deque()).append(pending)
                if by_id and collect:
                    self._uncollected.setdefault(pending.id, deque()).append(pending)
                if by_null:
                    self._unanswered_null.append(pending)
                if pending.progress_token is not None:
                    self._by_token[pending.progress_token] = pending
                if isinstance(pending.id, int) and not isinstance(pending.id, bool):
                    self._next_id = max(self._next_id, pending.id + 1)
                if self._stdout_closed:
                    pending.mailbox.put(_CLOSED)
        try:
            with self._write_lock:  # outside self._lock: the reply may arrive while we write
                self._process.stdin.write(data)
        except (OSError, ValueError):
            if pending is not None:
                with self._lock:
                    self._give_up(pending)
            raise self._exited("could not write to the server: it has exited") from None

    # --- receiving -----------------------------------------------------------

    def wait(self, frame_id, *, timeout=None):
        """The reply to the oldest request written with this id (raises WireTimeout if none comes)."""
        with self._lock:
            waiting = self._uncollected.get(frame_id)
            if not waiting:
                raise KeyError(f"no request with id {frame_id!r} was written on this wire")
            pending = waiting[0]
        try:
            return self._wait_for(pending, timeout)
        finally:
            with self._lock:
                if waiting and waiting[0] is pending:
                    waiting.popleft()

    def read(self, timeout=1.0):
        """The next message nobody was waiting for (a listen notification, a stray reply), or None."""
        try:
            message = self._unread.get(timeout=timeout)
        except queue.Empty:
            return None
        if message is _CLOSED:
            self._unread.put(_CLOSED)  # stays closed for the next reader too
            return None
        return message

    def _wait_for(self, pending, timeout, raise_on_timeout=True):
        timeout = self.timeout if timeout is None else timeout
        try:
            reply = pending.mailbox.get(timeout=timeout)
        except queue.Empty:
            reply = None
        if reply is not None and reply is not _CLOSED:
            return reply
        with self._lock:
            if pending.reply is not None:  # it arrived just as we stopped waiting
                return pending.reply
            self._give_up(pending)
        if not raise_on_timeout:
            return None
        if reply is _CLOSED:
            raise self._exited(f"the server closed stdout before replying to {pending.describe()}")
        raise WireTimeout(f"no reply to {pending.describe()} within {timeout} s")

    def _give_up(self, pending):
        """Stop expecting a reply (call with the lock held); a reply that still comes shows up in `read()`.

        What was written is recorded now, so transcript byte counts always match the wire.
        """
        if pending.given_up:
            return
        pending.given_up = True
        waiting = self._unanswered.get(pending.id)
        if waiting and pending in waiting:
            waiting.remove(pending)
        if pending in self._unanswered_null:
            self._unanswered_null.remove(pending)
        if self._by_token.get(pending.progress_token) is pending:
            del self._by_token[pending.progress_token]
        self._record(pending)

    def _record(self, pending):
        self.transcript.append(Exchange(
            "stdio", pending.method, pending.id, pending.line, b"".join(line for line, _ in pending.down),
            [pending.payload], [text for _, text in pending.down],
            elapsed_ms=(time.perf_counter() - pending.started) * 1000))

    def _exited(self, message):
        try:
            code = self._process.wait(timeout=2)
        except Exception:
            code = None
        self._stderr_thread.join(timeout=0.5)  # let the last stderr lines in
        return ServerExited(f"{message} (exit code {code})", code, self.stderr_lines[-5:])

    # --- the reader thread's side ---------------------------------------------------

    def _file(self, line):
        body = line.rstrip(b"\n")
        reply = Reply.from_bytes(body)
        message = reply.message if isinstance(reply.message, dict) else {}
        text = body.decode("utf-8", "replace")
        with self._lock:
            if "result" in message or "error" in message:
                pending = self._take_pending(message.get("id"))
                if pending is not None:
                    return self._deliver(pending, line, text, reply)
            elif "method" in message:
                self.notifications.append(message)
                params = message.get("params")
                token = _as_key(params.get("progressToken")) if isinstance(params, dict) else None
                owner = self._by_token.get(token) if token is not None else None
                if owner is not None:
                    owner.down.append((line, text))
                    owner.notes.append(message)
                    return None
            self.transcript.append(Exchange("stdio", message.get("method"), message.get("id"), b"", line, [], [text]))
            self._unread.put(reply)
        return None

    def _file_oversized(self, head, size):
        """A line over MAX_LINE_BYTES: only its head is kept, in a Reply that says it was dropped.

        When the head shows the id of a request we wait for, that request gets this Reply.
        """
        problem = f"the server wrote a line of {size} bytes, over mcpwire's limit of {MAX_LINE_BYTES}; it was dropped"
        reply = Reply(None, head, problem=problem)
        text = head.decode("utf-8", "replace")
        match = _ID_AT_START.match(head)
        with self._lock:
            pending = self._take_pending(json.loads(match.group(1))) if match else None
            if pending is not None:
                return self._deliver(pending, head, text, reply)
            self.transcript.append(Exchange("stdio", None, None, b"", head, [], [text]))
            self._unread.put(reply)
        return None

    def _take_pending(self, reply_id):
        """The oldest request this reply answers: by id, or (id null) the oldest raw send."""
        if isinstance(reply_id, (list, dict)):  # no request can have such an id
            return None
        if reply_id is None:
            pending = self._unanswered_null.popleft() if self._unanswered_null else None
            if pending is not None and pending.id is not None:
                self._unanswered[pending.id].remove(pending)
            return pending
        waiting = self._unanswered.get(reply_id)
        if not waiting:
            return None
        pending = waiting.popleft()
        if pending in self._unanswered_null:
            self._unanswered_null.remove(pending)
        return pending

    def _deliver(self, pending, line, text, reply):
        pending.down.append((line, text))
        reply.notifications, reply.method = pending.notes, pending.method
        pending.reply = reply
        if self._by_token.get(pending.progress_token) is pending:
            del self._by_token[pending.progress_token]
        self._record(pending)
        pending.mailbox.put(reply)

    def _stdout_ended(self):
        with self._lock:
            self._stdout_closed = True
            for pending in [*self._unanswered_null, *(p for ps in self._unanswered.values() for p in ps)]:
                pending.mailbox.put(_CLOSED)
            self._unread.put(_CLOSED)

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

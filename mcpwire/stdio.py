"""The stdio transport by hand: one JSON line per message on the server's stdin/stdout.

`StdioWire` keeps the server process, writes the lines and waits. Which request
a line that comes back answers is decided by `matching.Matcher` (replies can
arrive out of order); reading stdout is `pipe_reader.PipeReader`'s job, done by
the caller that waits; stderr is collected apart (it is only logging, never an
error). What every wire does, and where stdio differs from HTTP, is in `mcpwire.wire`.
"""

import json
import sys
import threading

from . import frames, lines, process
from .errors import ServerExited, WireTimeout
from .matching import RAW, REQUEST, Matcher, Pending, method_of, id_at_start
from .pipe_reader import PipeReader
from .reply import Reply
from .transcript import Exchange, Transcript
from .wire import RAW_TIMEOUT


def _readable_id(text):
    """The id of a hand-typed line: a string or integer id of its JSON, or seen at its start; else None."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):  # a server may still read the id at the start (too deep, cut short)
        return id_at_start(text[:200].encode("utf-8", "surrogateescape"))
    frame_id = parsed.get("id") if isinstance(parsed, dict) else None
    return frame_id if isinstance(frame_id, (int, str)) and not isinstance(frame_id, bool) else None


def _refuse(headers):
    raise ValueError(f"stdio has no headers to send: {sorted(headers)}")


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
        self._write_lock = threading.Lock()
        self._process = process.start(self.command, cwd=cwd, env=env)
        self._finalizer = process.reap_on_collect(self, self._process)
        self._stderr_thread = process.collect_lines(self._process.stderr, self.stderr_lines)
        # The matcher files every line the reader hands it: replies to their requests, the rest to `read()`.
        self._matcher = Matcher(self.transcript, self.notifications, limit=lines.MAX_LINE_BYTES)
        self._reader = PipeReader(self._process.stdout, self._matcher.file, self._matcher.close,
                                  limit=lines.MAX_LINE_BYTES)
        self._lock = self._reader.lock  # guards the matcher, and is released while anyone reads or sleeps

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
        return f"<StdioWire {' '.join(command)} ({'closed' if self.closed else 'open'})>"

    @property
    def returncode(self):
        return self._process.poll()

    @property
    def closed(self):
        """True once the server has exited (closed by us, or it ended by itself)."""
        return self._process.poll() is not None

    @property
    def next_id(self):
        """The id `request()` gives the next request: one more than the highest integer id sent so far."""
        return self._next_id

    def headers_for(self, frame, tool=None, overrides=None):
        """stdio has no headers: {} (HTTP derives them from the frame)."""
        return {}

    def one_message(self, text):
        """stdio ends a message at each newline: the lines of `text` joined with spaces into one."""
        return text.strip("\n").replace("\r\n", " ").replace("\n", " ")

    # --- sending -------------------------------------------------------------

    def request(self, method, params=None, *, timeout=None, **frame_kwargs):
        """Build a 2026-07-28 request with the next free id, send it, return its Reply."""
        frame_kwargs.setdefault("id", self._next_id)
        return self.send(frames.request(method, params, **frame_kwargs), timeout=timeout)

    def notify(self, method, params=None, **frame_kwargs):
        """Send a notification. Nothing comes back on stdio, so it returns None."""
        return self.send(frames.notification(method, params, **frame_kwargs))

    def send(self, frame, headers=None, *, timeout=None, stream_for=None):
        """Write a frame; a request waits for its reply, a notification returns None.

        `stream_for=seconds` is for a request that stays open (subscriptions/listen):
        stop waiting after that long and return a Reply whose `problem` says so. On
        stdio the request stays open on the server until you send notifications/cancelled;
        what it sends meanwhile arrives in `read()`. `headers` must be empty: stdio has none.
        """
        if headers:  # checked here, not in a helper: a Python call more is time on every round trip
            _refuse(headers)
        self.write(frame)  # through write(): a subclass that watches what is written sees every frame
        if "id" not in frame:
            return None
        if stream_for is None:
            return self._wait_for(None, timeout, frame_id=frame["id"])  # what wait() does, a call sooner
        try:
            return self._wait_for(None, stream_for, frame_id=frame["id"])
        except WireTimeout:
            return Reply(None, b"", method=frame.get("method"), problem=(
                f"we stopped waiting after {stream_for:g} s; no final response yet: the request stays open "
                "until it is cancelled (on stdio, with notifications/cancelled)"))

    def send_all(self, frames_, *, timeout=None):
        """Write every frame first, then collect the replies (in the order the frames were written)."""
        for frame in frames_:
            self.write(frame)
        return [self.wait(frame["id"], timeout=timeout) for frame in frames_ if "id" in frame]

    def write(self, frame):
        """Write one frame as one line without waiting; collect its reply later with `wait(id)`."""
        payload = frames.dumps(frame)
        if "id" not in frame:
            self._write(payload, None)
            return
        params = frame.get("params")  # its progressToken, if any, ties notifications to it
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        self._write(payload, Pending(REQUEST, frame["id"], frame.get("method"), payload, b"", token))

    def send_raw(self, text, headers=None, *, newline=True, timeout=RAW_TIMEOUT):
        """Write exactly `text` (str or bytes; plus a newline unless newline=False), even if it is malformed.

        Returns the reply that arrived within `timeout` seconds (matched by the id, if
        one can be read from the text, or an id-less error reply), or None for silence.
        """
        if headers:
            _refuse(headers)
        if isinstance(text, bytes):
            text = text.decode("utf-8", "surrogateescape")
        pending = Pending(RAW, _readable_id(text), method_of(text), text, b"")
        self._write(text, pending, newline=newline)
        return self._wait_for(pending, timeout, raise_on_timeout=False)

    def _write(self, payload, pending, *, newline=True):
        data = (payload + ("\n" if newline else "")).encode("utf-8", "surrogateescape")  # raw bytes go out as sent
        with self._lock:
            if pending is None:
                self.transcript.append(Exchange(transport="stdio", method=method_of(payload), id=None, up=data,
                                                down=b"", up_payloads=[payload]))
            else:
                pending.line = data
                self._matcher.expect(pending)
                if type(pending.id) is int and pending.id >= self._next_id:  # not a bool, nor a float
                    self._next_id = pending.id + 1
        try:
            with self._write_lock:  # outside self._lock: the reply may arrive while we write
                self._process.stdin.write(data)
        except (OSError, ValueError):
            if pending is not None:
                with self._lock:
                    self._matcher.give_up(pending)
            raise self._exited("could not write to the server: it has exited") from None

    # --- receiving -----------------------------------------------------------

    def wait(self, frame_id, *, timeout=None):
        """The reply to the oldest request written with this id (raises WireTimeout if none comes)."""
        return self._wait_for(None, timeout, frame_id=frame_id)

    def read(self, timeout=1.0):
        """The next message nobody was waiting for (a listen notification, a stray reply), or None."""
        unread = self._matcher.unread
        with self._lock:
            self._reader.wait_until(lambda: bool(unread), timeout)
            return unread.popleft() if unread else None

    def _wait_for(self, pending, timeout, raise_on_timeout=True, frame_id=None):
        """Wait for `pending`'s reply; with pending None, for the oldest uncollected request with `frame_id`."""
        timeout = self.timeout if timeout is None else timeout
        with self._lock:  # one lock for the look-up and the wait: each lock taken costs every round trip
            if pending is None:
                pending = self._matcher.take(frame_id)  # taken now: `wait(id)` returns it once, whatever happens
            self._reader.wait_until(lambda: pending.reply is not None, timeout)
            if pending.reply is not None:
                return pending.reply
            self._matcher.give_up(pending)  # what was written is recorded, answered or not
            ended = self._reader.ended
        if not raise_on_timeout:
            return None
        if ended:
            raise self._exited(f"the server closed stdout before replying to {pending.describe()}")
        raise WireTimeout(f"no reply to {pending.describe()} within {timeout} s")

    def _exited(self, message):
        try:
            code = self._process.wait(timeout=2)
        except Exception:
            code = None
        self._stderr_thread.join(timeout=0.5)  # let the last stderr lines in
        return ServerExited(f"{message} (exit code {code})", code, self.stderr_lines[-5:])

    # --- shutdown ------------------------------------------------------------

    def close(self, grace=5.0):
        """Close stdin (the server answers what it has read, then exits), wait `grace` s, then escalate.

        Returns the exit code. Idempotent.
        """
        code = process.stop(self._process, grace)
        with self._lock:  # file what the server wrote before it exited
            self._reader.wait_until(lambda: self._reader.ended, 2)
        self._reader.join(timeout=2)
        self._stderr_thread.join(timeout=2)
        for stream in (self._process.stdout, self._process.stderr):
            try:
                stream.close()
            except OSError:
                pass
        self._finalizer.detach()
        return code

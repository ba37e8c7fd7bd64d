"""The Streamable HTTP transport by hand: one POST per message, a JSON or SSE reply.

Headers are derived from the frame (see `mcpwire.headers`) and every one can be
overridden or dropped, so a lesson can break them on purpose. What every wire
does, and where HTTP differs from stdio, is in `mcpwire.wire`.
"""

import json
import socket
import sys
import threading
import time

from . import frames, headers as header_rules, process
from .errors import ServerExited, WireError, WireTimeout
from .http11 import Connection
from .reply import Reply
from .sse import SseParser
from .transcript import Exchange, Transcript
from .wire import RAW_TIMEOUT


class HttpWire:
    """An MCP endpoint we POST to. `HttpWire.labserver()` also starts (and later stops) the lab server."""

    transport = "http"

    def __init__(self, url, *, timeout=10.0, auth=None):
        self.url = url
        self.timeout = timeout
        self.transcript = Transcript()
        self.notifications = []
        self.tools = {}  # tool definitions seen in tools/list replies, by name (for Mcp-Param-* headers)
        self.stdout_lines, self.stderr_lines = [], []
        self.command = None  # the lab server's command when labserver() started it
        self.session_id = None  # legacy 2025-11-25 sessions only
        self.default_version = frames.PROTOCOL_VERSION
        self._next_id = 1
        self._idle = []
        self._lock = threading.Lock()
        self._process = None
        self._finalizer = None
        self._closed = False
        # An mcpwire.oauth.OAuth: adds the bearer token, answers 401/403 challenges, records its exchanges here.
        self.auth = auth.attach(self) if auth is not None else None

    @classmethod
    def labserver(cls, *extra_args, timeout=10.0, startup_timeout=30.0, auth=None):
        """Start `python -m labserver --http --port 0`, read its URL from the first stdout line."""
        command = [sys.executable, "-m", "labserver", "--http", "--port", "0", "--until-stdin-closes", *extra_args]
        server = process.start(command)
        started = threading.Event()
        stdout_lines, stderr_lines = [], []
        process.collect_lines(server.stdout, stdout_lines, on_line=lambda line: started.set())
        process.collect_lines(server.stderr, stderr_lines)
        deadline = time.monotonic() + startup_timeout
        while not started.wait(0.05):
            if server.poll() is not None or time.monotonic() > deadline:
                code = process.stop(server, 0.5, eof_first=False)
                raise ServerExited(f"the lab server did not print its URL (exit code {code})", code, stderr_lines[-5:])
        wire = cls(stdout_lines[0].strip(), timeout=timeout, auth=auth)
        wire.command = command  # what started the server, as StdioWire keeps it (a wire to a URL has None)
        wire.stdout_lines, wire.stderr_lines = stdout_lines, stderr_lines
        wire._process = server
        wire._finalizer = process.reap_on_collect(wire, server)
        return wire

    @property
    def closed(self):
        """True once `close()` was called, or the lab server this wire started has exited."""
        return self._closed or (self._process is not None and self._process.poll() is not None)

    @property
    def next_id(self):
        """The id `request()` gives the next request: one more than the highest integer id sent so far."""
        return self._next_id

    def one_message(self, text):
        """HTTP carries a body as typed: `text` itself."""
        return text

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        where = "lab server" if self._process is not None else ""
        state = ", ".join(part for part in (where, "closed" if self.closed else "") if part)
        return f"<HttpWire ({state})>" if state else "<HttpWire>"

    def close(self):
        """Drop the connections and stop the server if we started it. Idempotent."""
        self._closed = True
        with self._lock:
            for connection in self._idle:
                connection.close()
            self._idle.clear()
        if self._process is not None:
            process.stop(self._process, eof_first=False)
            self._finalizer.detach()

    # --- sending -------------------------------------------------------------

    def request(self, method, params=None, *, headers=None, tool=None, timeout=None, **frame_kwargs):
        """Build a 2026-07-28 request with the next free id, POST it, return its Reply."""
        frame_kwargs.setdefault("id", self._next_id)
        return self.send(frames.request(method, params, **frame_kwargs), headers, tool=tool, timeout=timeout)

    def notify(self, method, params=None, *, headers=None, **frame_kwargs):
        """POST a notification; the server must accept it with 202 and an empty body."""
        reply = self.send(frames.notification(method, params, **frame_kwargs), headers)
        if reply.status != 202:
            raise WireError(f"expected 202 Accepted for {method}, got HTTP {reply.status}: {reply.text[:200]!r}")
        return reply

    def headers_for(self, frame, tool=None, overrides=None):
        """The headers `send` would write for this frame (before Host and Content-Length)."""
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        if tool is None and frame.get("method") == "tools/call" and isinstance(params.get("name"), str):
            tool = self.tools.get(params.get("name"))
        derived = header_rules.derive(frame, tool, default_version=self.default_version)
        if self.session_id is not None:
            derived["Mcp-Session-Id"] = self.session_id
        if self.auth is not None:
            derived.update(self.auth.headers())
        return header_rules.merge(derived, overrides)

    def send(self, frame, headers=None, *, tool=None, timeout=None, stream_for=None):
        """POST one frame and read the reply (JSON, or an SSE stream up to its final response).

        `headers` overrides derived headers by name (None drops one); `tool` is the
        tools/list definition whose x-mcp-header annotations give Mcp-Param-* headers.
        `stream_for=seconds` reads an SSE stream that long, then closes it (on HTTP,
        closing the stream is how a client cancels, e.g. ends subscriptions/listen).
        """
        if isinstance(frame.get("id"), int) and frame["id"] >= self._next_id:
            self._next_id = frame["id"] + 1
        reply = self._post(frames.dumps(frame), self.headers_for(frame, tool, headers),
                           frame.get("method"), frame.get("id"), timeout, stream_for)
        if self.auth is not None and reply.status in (401, 403) and self.auth.on_challenge(
                self.url, reply.status, (reply.headers or {}).get("www-authenticate")):
            # Authorized now: the same frame again (the server never processed the refused one).
            reply = self._post(frames.dumps(frame), self.headers_for(frame, tool, headers),
                               frame.get("method"), frame.get("id"), timeout, stream_for)
        self._remember(frame, reply)
        return reply

    def send_raw(self, body, headers=None, *, timeout=RAW_TIMEOUT):
        """POST exactly `body` (str or bytes). Headers are derived from it when it parses as a frame.

        Returns the Reply, or None when no complete reply came within `timeout` (what did
        arrive is in the transcript).
        """
        text = body.decode("utf-8", "surrogateescape") if isinstance(body, bytes) else body
        try:
            frame = json.loads(text)
        except (ValueError, RecursionError):
            frame = None
        frame = frame if isinstance(frame, dict) else {}
        method = frame.get("method") if isinstance(frame.get("method"), str) else None
        frame_id = frame.get("id")
        if isinstance(frame_id, int) and not isinstance(frame_id, bool) and frame_id >= self._next_id:
            self._next_id = frame_id + 1
        try:
            return self._post(text, self.headers_for(frame, None, headers), method, frame_id, timeout, None)
        except WireTimeout:
            return None

    def _remember(self, frame, reply):
        """Keep what later requests need: tool definitions, and (legacy only) the session and version."""
        if frame.get("method") == "tools/list" and reply.ok:
            for tool in reply.result.get("tools", []):
                self.tools[tool.get("name")] = tool
        if frame.get("method") == "initialize" and reply.ok:
            self.default_version = reply.result.get("protocolVersion", self.default_version)
        session = (reply.headers or {}).get("mcp-session-id")
        if session and frame.get("method") == "initialize":
            self.session_id = session

    # --- the POST itself ---------------------------------------------------------

    def _connection(self):
        with self._lock:
            return self._idle.pop() if self._idle else Connection(self.url)

    def _post(self, body_text, headers, method, frame_id, timeout, stream_for):
        timeout = self.timeout if timeout is None else timeout
        body = body_text.encode("utf-8", "surrogateescape")
        connection = self._connection()
        data = connection.request_bytes(headers, body)
        started = time.perf_counter()
        waited_for = f"id {frame_id!r} ({method})" if frame_id is not None else f"the POST of {method or 'a raw body'}"
        deadline = time.monotonic() + (stream_for if stream_for is not None else timeout)
        try:
            connection.send(data, timeout)
            response = connection.read_head(deadline)
        except (OSError, WireError) as error:
            connection.close()
            self._record(method, frame_id, data, b"", [body_text], [], started, None)
            if isinstance(error, WireTimeout):
                raise WireTimeout(f"no reply to {waited_for} within {timeout} s") from None
            raise self._failure(f"no HTTP response to {waited_for}: {error}") from None

        content_type = (response.header("Content-Type") or "").split(";")[0].strip() or None
        parser = SseParser() if content_type == "text/event-stream" else None
        events = []
        try:
            ended = connection.read_body(response, deadline,
                                         (lambda data: events.extend(parser.feed(data))) if parser else None)
        except socket.timeout:
            ended = None
        if ended:
            with self._lock:
                self._idle.append(connection)
        else:
            connection.close()

        reply_headers = {}
        for name, value in response.headers:
            key = name.lower()
            reply_headers[key] = f"{reply_headers[key]}, {value}" if key in reply_headers else value
        common = dict(status=response.status, headers=reply_headers, content_type=content_type)
        if parser is not None:
            reply, payloads = self._from_stream(bytes(response.body), events, ended, parser, stream_for, common)
        else:
            reply = self._from_body(bytes(response.body), ended, common)
            payloads = [reply.text] if response.body else []
        reply.method = method
        self._record(method, frame_id, data, bytes(response.raw), [body_text], payloads, started, response.status)
        if ended is None and stream_for is None:
            raise WireTimeout(f"no reply to {waited_for} within {timeout} s "
                              f"(HTTP {response.status}, {len(reply.notifications)} notifications so far)")
        return reply

    def _from_body(self, body, ended, common):
        if not ended:
            return Reply(None, body, problem=f"the connection closed after {len(body)} bytes of the body", **common)
        if not body:
            return Reply(None, body, **common)
        return Reply.from_bytes(body, **common)

    def _from_stream(self, body, events, ended, parser, stream_for, common):
        messages = []
        for event in events:
            try:
                # Parsed from the bytes, so data that is not UTF-8 counts as not JSON (as a plain body does).
                messages.append((event.data, json.loads(event.data.encode("utf-8", "surrogateescape"))))
            except (ValueError, RecursionError):
                messages.append((event.data, None))
        final = next(((text, m) for text, m in reversed(messages)
                      if isinstance(m, dict) and ("result" in m or "error" in m)), None)
        notes = [m for _, m in messages if isinstance(m, dict) and "method" in m and "id" not in m]
        self.notifications.extend(notes)
        payloads = [event.data for event in events]
        problem = None
        if final is None:
            if stream_for is not None and ended is None:
                problem = f"we closed the stream after {stream_for} s; no final response yet ({len(notes)} notifications)"
            elif ended is False or parser.unfinished:
                problem = f"the SSE stream was cut off before the final response ({len(notes)} notifications arrived)"
            else:
                problem = f"the SSE stream ended without a final response ({len(notes)} notifications arrived)"
        elif any(m is None for _, m in messages):
            problem = "the SSE stream carried data that is not JSON"
        text, message = final if final is not None else ("", None)
        return Reply(message, body, payload=text.encode("utf-8"), notifications=notes, problem=problem,
                     **common), payloads

    def _record(self, method, frame_id, up, down, up_payloads, down_payloads, started, status):
        self.transcript.append(Exchange(transport="http", method=method, id=frame_id, up=up, down=down,
                                        up_payloads=up_payloads, down_payloads=down_payloads,
                                        elapsed_ms=(time.perf_counter() - started) * 1000,
                                        status=status, url=self.url))

    def _failure(self, message):
        if self._process is not None and self._process.poll() is not None:
            time.sleep(0.05)
            return ServerExited(f"{message}; the server has exited (exit code {self._process.returncode})",
                                self._process.returncode, self.stderr_lines[-5:])
        return WireError(message)

"""A thin stdio front for the SDK: answers malformed lines and finishes the work at EOF.

The SDK's stdio transport silently drops a line it cannot parse, and at stdin EOF it
shuts down while requests it already read are still queued. This front sits between
the real file descriptors and `mcp.server.stdio.stdio_server(stdin=..., stdout=...)`:

- it reads raw bytes (see `labserver.fd_io`) and cuts them into lines itself; an
  oversized line is skipped in bounded memory and never blocks the next;
- a line that is not JSON gets `-32700`, JSON that is not a valid JSON-RPC message gets
  `-32600`, both written by the front with `id: null` unless the id was readable; JSON
  nested too deeply to parse is still JSON, so it gets `-32600` too (see `deep_json`);
- everything else goes to the SDK unchanged, and the front counts the request ids it
  forwarded; the stdout side sees every line the SDK writes and ticks off answers;
- at EOF it stops reading, waits until each forwarded request has its answer, then has
  the server end its open listens (labserver.listen_endings) and waits for their results,
  then ends the line stream so the SDK shuts down. (A legacy-era request still waiting for
  the client's reply to a server request can never finish, so it is not waited for.)

One lock serialises every line written to stdout, the front's and the SDK's alike.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from labserver import deep_json
from labserver.fd_io import Descriptor
from labserver.listen_endings import ENDING_GRACE_S, graceful_listens

MAX_LINE_BYTES = 4 * 1024 * 1024
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
LISTEN_METHOD = "subscriptions/listen"
TOO_LONG = None  # what LineSplitter yields in place of an oversized line

RequestKey = tuple[type, int | str]  # the JSON type is part of the key: 1 and "1" are different ids


def request_key(request_id: int | str) -> RequestKey:
    return (type(request_id), request_id)


def readable_id(value: Any) -> int | str | None:
    """The id to echo in an error reply: only a JSON string or integer counts."""
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


class LineSplitter:
    """Cuts a byte stream into lines, holding at most `limit` bytes of any one line."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self.partial = bytearray()
        self.skipping = False  # inside a line already known to be too long

    def feed(self, chunk: bytes) -> Iterator[bytes | None]:
        """Yield each complete line (without its newline), or TOO_LONG for an oversized one."""
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            yield self._complete(chunk[start:end])
            start = end + 1
        rest = chunk[start:]
        if not self.skipping and len(self.partial) + len(rest) > self.limit:
            self.partial.clear()
            self.skipping = True
        elif not self.skipping:
            self.partial += rest

    def finish(self) -> Iterator[bytes | None]:
        """At EOF: the last line if it had no newline."""
        if self.skipping or self.partial:
            yield self._complete(b"")

    def _complete(self, tail: bytes) -> bytes | None:
        if self.skipping or len(self.partial) + len(tail) > self.limit:
            self.skipping = False
            self.partial.clear()
            return TOO_LONG
        if not self.partial:
            return tail
        line = bytes(self.partial + tail)
        self.partial.clear()
        return line


def why_invalid(message: Any) -> str:
    """A short reason why a parsed JSON value is not a JSON-RPC message (for learners)."""
    if isinstance(message, list):
        return "batches (JSON arrays) are not supported; send one message per line"
    if not isinstance(message, dict):
        return "a message must be a JSON object"
    if "jsonrpc" not in message:
        return 'missing "jsonrpc": "2.0"'
    if message["jsonrpc"] != "2.0":
        return '"jsonrpc" must be exactly "2.0"'
    if "id" in message and readable_id(message["id"]) is None:
        kind = "null" if message["id"] is None else type(message["id"]).__name__
        return f'"id" must be a string or an integer, not {kind}'
    if "method" in message and not isinstance(message["method"], str):
        return '"method" must be a string'
    if "method" not in message and "result" not in message and "error" not in message:
        return 'missing "method"'
    if "params" in message and not isinstance(message["params"], dict):
        return '"params" must be an object'
    return "not a valid JSON-RPC message"


def load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


class PendingRequests:
    """Request ids forwarded to the SDK and not yet answered."""

    def __init__(self) -> None:
        self.counts: Counter[RequestKey] = Counter()
        self.listens: set[RequestKey] = set()  # listens forwarded and neither answered nor cancelled
        self.questions: set[RequestKey] = set()  # legacy-era server-to-client requests awaiting the client
        self._settled: anyio.Event | None = None

    def forwarded(self, key: RequestKey) -> None:
        self.counts[key] += 1

    def listening(self, key: RequestKey) -> None:
        self.listens.add(key)

    def await_listens(self) -> None:
        """From now on, wait for the answer of every open listen too (the server is ending them)."""
        for key in self.listens:
            self.forwarded(key)

    def answered(self, key: RequestKey) -> None:
        self.listens.discard(key)
        if self.counts[key] > 1:
            self.counts[key] -= 1
        else:
            self.counts.pop(key, None)
            self._wake_if_settled()

    def cancelled(self, key: RequestKey) -> None:
        # The server sends nothing more for a cancelled request: stop waiting for it.
        self.counts.pop(key, None)
        self.listens.discard(key)
        self._wake_if_settled()

    def asked_client(self, key: RequestKey) -> None:
        self.questions.add(key)
        self._wake_if_settled()

    def client_replied(self, key: RequestKey) -> None:
        self.questions.discard(key)

    def settled(self) -> bool:
        """Nothing left to wait for: all answered, or the server waits on a client that is gone."""
        return not self.counts or bool(self.questions)

    async def drained(self) -> None:
        """Wait (after EOF) until settled."""
        while not self.settled():
            self._settled = anyio.Event()
            await self._settled.wait()

    def _wake_if_settled(self) -> None:
        if self.settled() and self._settled is not None:
            self._settled.set()


_RESPONSE_PREFIX = '{"jsonrpc":"2.0","id":'
_decoder = json.JSONDecoder()


def line_id(line: str) -> tuple[RequestKey, bool] | None:
    """For a line the SDK wrote: (its id, whether it is a request to the client); None for notifications.

    The SDK serialises messages with a fixed key order, so only the id value is decoded.
    """
    if not line.startswith(_RESPONSE_PREFIX):
        return None
    value, end = _decoder.raw_decode(line, len(_RESPONSE_PREFIX))
    if readable_id(value) is None:
        return None
    return request_key(value), line.startswith(',"method"', end)


class WireOut:
    """The stdout the SDK writes to; the front writes its error replies here too."""

    def __init__(self, fd: int, pending: PendingRequests) -> None:
        self.wire_out = Descriptor(fd)
        self.pending = pending
        self.lock = anyio.Lock()

    async def write(self, line: str) -> None:
        # The SDK hands over exactly one message plus its newline per call.
        async with self.lock:
            await self.wire_out.write(line.encode("utf-8"))
        if (found := line_id(line)) is not None:
            key, asks_client = found
            if asks_client:
                self.pending.asked_client(key)
            else:
                self.pending.answered(key)

    async def flush(self) -> None:
        """Nothing to do: every write goes straight to the file descriptor."""

    async def reply_error(self, request_id: int | str | None, code: int, message: str) -> None:
        error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        await self.write(json.dumps(error, ensure_ascii=False, separators=(",", ":")) + "\n")


class StdioFront:
    """Feeds checked lines from in_fd to the SDK and writes everything to out_fd."""

    def __init__(self, in_fd: int, out_fd: int, max_line_bytes: int = MAX_LINE_BYTES,
                 end_listens: Callable[[], Awaitable[None]] | None = None) -> None:
        self.end_listens = end_listens
        self.wire_in = Descriptor(in_fd)
        self.pending = PendingRequests()
        self.out = WireOut(out_fd, self.pending)
        self.splitter = LineSplitter(max_line_bytes)

    async def lines(self) -> AsyncIterator[str]:
        """The lines the SDK reads: valid messages only; ends once everything is answered after EOF."""
        while chunk := await self.wire_in.read():
            for line in self.splitter.feed(chunk):
                if (text := await self.check(line)) is not None:
                    yield text
        for line in self.splitter.finish():
            if (text := await self.check(line)) is not None:
                yield text
        await self.pending.drained()
        if self.end_listens is not None and self.pending.listens:
            self.pending.await_listens()
            with anyio.move_on_after(ENDING_GRACE_S):
                await self.end_listens()
                await self.pending.drained()

    async def check(self, line: bytes | None) -> str | None:
        """Return the line to forward, or answer it here and return None."""
        if line is TOO_LONG:
            await self.out.reply_error(None, INVALID_REQUEST, "Request too large")
            return None
        if not line.strip():
            await self.out.reply_error(None, PARSE_ERROR, "Parse error: empty line")
            return None
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            await self.out.reply_error(None, PARSE_ERROR, "Parse error: the line is not valid UTF-8")
            return None
        try:
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValidationError as error:
            await self._reject(text, error)
            return None
        except RecursionError:
            await self._too_deep(text, "nested too deeply")
            return None
        if isinstance(message, types.JSONRPCRequest):
            if message.method == LISTEN_METHOD:  # a listen stays open until EOF ends it
                self.pending.listening(request_key(message.id))
            else:
                self.pending.forwarded(request_key(message.id))
        elif isinstance(message, types.JSONRPCNotification):
            return await self._notification(text, message)
        else:  # a client's reply to a legacy-era server request
            self.pending.client_replied(request_key(message.id))
        return text

    async def _notification(self, text: str, message: types.JSONRPCNotification) -> str | None:
        # The SDK reads {"id": null, "method": ...} as a notification and drops it; say why instead.
        raw = load_json(text)
        if isinstance(raw, dict) and "id" in raw:
            await self.out.reply_error(None, INVALID_REQUEST, f"Invalid Request: {why_invalid(raw)}")
            return None
        if message.method == "notifications/cancelled" and isinstance(message.params, dict):
            request_id = readable_id(message.params.get("requestId"))
            if request_id is not None:
                self.pending.cancelled(request_key(request_id))
        return text

    async def _too_deep(self, text: str, detail: str) -> None:
        """The parser gave up on depth: valid JSON is an invalid request (with its id), anything else a parse error."""
        found = deep_json.scan(text)
        if found.is_json:
            message = f"Invalid Request: nested {found.depth} levels deep, too deep to process"
            await self.out.reply_error(found.request_id, INVALID_REQUEST, message)
        else:
            await self.out.reply_error(None, PARSE_ERROR, f"Parse error: {detail}")

    async def _reject(self, text: str, error: ValidationError) -> None:
        problems = error.errors(include_url=False)
        if problems and problems[0]["type"] == "json_invalid":
            detail = problems[0].get("ctx", {}).get("error", "not valid JSON")
            if "recursion limit" in detail:
                await self._too_deep(text, detail)
            else:
                await self.out.reply_error(None, PARSE_ERROR, f"Parse error: {detail}")
            return
        raw = load_json(text)
        request_id = readable_id(raw.get("id")) if isinstance(raw, dict) else None
        await self.out.reply_error(request_id, INVALID_REQUEST, f"Invalid Request: {why_invalid(raw)}")


@contextmanager
def private_std_streams() -> Iterator[tuple[int, int]]:
    """Move the wire to private descriptors; fd 0 reads /dev/null and fd 1 goes to stderr.

    A stray print() or a child process can then never corrupt the JSON-RPC stream.
    """
    wire_in, wire_out = os.dup(0), os.dup(1)
    null_in = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_in, 0)
    os.close(null_in)
    os.dup2(2, 1)
    try:
        yield wire_in, wire_out
    finally:
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)


async def serve_stdio(mcp: MCPServer) -> None:
    """Serve mcp on this process's stdin/stdout through the front."""
    with private_std_streams() as (wire_in, wire_out):
        listens = graceful_listens(mcp)
        front = StdioFront(wire_in, wire_out, end_listens=listens.end_all if listens is not None else None)
        lowlevel = mcp._lowlevel_server  # the same call MCPServer.run_stdio_async makes
        async with stdio_server(stdin=front.lines(), stdout=front.out) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

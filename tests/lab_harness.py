"""A raw-wire harness for the lab server's tests and the hardening tests (its own tests: labserver/test_labserver_harness.py).

Test files in every folder under tests/ import from here. Frames are plain dicts or raw
lines; replies are parsed JSON. Every 2026-07-28 reply can be checked against the
mcp_types models for its method (`check_result`, `check_notification`).
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import mcp_types as types
from mcp_types.methods import parse_server_notification, validate_server_result

PROTOCOL = "2026-07-28"
READ_TIMEOUT = 10.0
# A cold start costs a lab about 1.5 s of CPU before it reads its first line: on two cores at load 25 that took
# longer than READ_TIMEOUT, and a test's first call failed with nothing wrong. The first reply a lab gives may
# take this much longer; waiting is on the line itself, so a lab that starts at once costs nothing more.
STARTUP_ALLOWANCE = 60.0
FORM_ELICITATION = {"elicitation": {"form": {}}}
CONFIRM_KEY = "labserver.tools:confirm_delete"
TAG_KEY = "labserver.tools:ask_tag"


def envelope(capabilities: dict | None = None, **extra: Any) -> dict:
    return {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {"name": "labserver-tests", "version": "0.0.1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        **extra,
    }


def request(request_id: int | str, method: str, params: dict | None = None, **meta: Any) -> dict:
    capabilities = meta.pop("capabilities", None)
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**(params or {}), "_meta": envelope(capabilities, **meta)},
    }


def tool_call(request_id: int | str, name: str, arguments: dict, **meta: Any) -> dict:
    return request(request_id, "tools/call", {"name": name, "arguments": arguments}, **meta)


def retry_with(frame: dict, new_id: int | str, input_responses: dict, request_state: str | None) -> dict:
    """The MRTR retry: same method and params, a new id, the answers and the exact state."""
    params = {**frame["params"], "inputResponses": input_responses}
    if request_state is not None:
        params["requestState"] = request_state
    return {**frame, "id": new_id, "params": params}


def check_result(method: str, reply: dict) -> dict:
    """Assert reply is a valid 2026-07-28 result for method; return the result."""
    types.jsonrpc_message_adapter.validate_python(reply, by_name=False)
    assert "result" in reply, reply
    validate_server_result(method, PROTOCOL, reply["result"])
    return reply["result"]


def check_error(reply: dict, code: int) -> dict:
    """Assert reply is a JSON-RPC error with code; return the error object."""
    assert reply.get("jsonrpc") == "2.0" and "error" in reply, reply
    assert reply["error"]["code"] == code, reply
    if reply.get("id") is not None:
        types.jsonrpc_message_adapter.validate_python(reply, by_name=False)
    return reply["error"]


def check_notification(message: dict) -> dict:
    """Assert message is a valid 2026-07-28 server notification; return its params."""
    assert "id" not in message, message
    parse_server_notification(message["method"], PROTOCOL, message.get("params"))
    return message.get("params") or {}


def text_of(result: dict) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def answers(message: dict, request_id: int | str) -> bool:
    """True when message is the reply to request_id (1 and "1" are different ids)."""
    replied = message.get("id")
    return replied == request_id and type(replied) is type(request_id) and ("result" in message or "error" in message)


class StdioLab:
    """One `python -m labserver` process driven line by line."""

    def __init__(self, *args: str, env: dict | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "labserver", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.started = threading.Event()  # set by the lab's first line on stdout
        self.stderr: list[str] = []
        self.held: list[dict] = []  # replies read while waiting for another one
        self.notifications: list[dict] = []  # every notification read so far, in order
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        for line in self.process.stdout:
            self.started.set()
            self.lines.put(line)
        self.lines.put(None)

    def _pump_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def send_raw(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, frame: dict) -> None:
        self.send_raw(json.dumps(frame).encode() + b"\n")

    def next_message(self, timeout: float = READ_TIMEOUT) -> dict:
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise EOFError("the server closed stdout")
        assert line.endswith(b"\n") and line.count(b"\n") == 1, line
        return json.loads(line)

    def read_until(self, request_id: int | str, timeout: float = READ_TIMEOUT) -> tuple[dict, list[dict]]:
        """The reply for request_id and the other messages seen before it (kept for later)."""
        for index, message in enumerate(self.held):
            if answers(message, request_id):
                del self.held[index]
                return message, []
        deadline = time.monotonic() + timeout + (0 if self.started.is_set() else STARTUP_ALLOWANCE)
        seen: list[dict] = []
        while True:
            message = self.next_message(max(0.01, deadline - time.monotonic()))
            if answers(message, request_id):
                return message, seen
            seen.append(message)
            if "id" in message:
                self.held.append(message)
            else:
                self.notifications.append(message)

    def call(self, frame: dict) -> dict:
        self.send(frame)
        return self.read_until(frame["id"])[0]

    def close(self, timeout: float = 20) -> int:
        """Close stdin (EOF) and wait for the exit code."""
        if not self.process.stdin.closed:
            self.process.stdin.close()
        return self.process.wait(timeout=timeout)

    def stop(self) -> None:
        """End the server the polite way (EOF, so it removes its temporary notes), else kill it."""
        try:
            self.close(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


@contextmanager
def stdio_lab(*args: str, env: dict | None = None) -> Iterator[StdioLab]:
    lab = StdioLab(*args, env=env)
    try:
        yield lab
    finally:
        lab.stop()


def sse_messages(body: str) -> list[dict]:
    """The JSON messages of an SSE body (comments and other fields ignored)."""
    messages = []
    for event in body.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip() for line in event.split("\n") if line.startswith("data:")]
        if data:
            messages.append(json.loads("\n".join(data)))
    return messages


class HttpLab:
    """One `python -m labserver --http` process and an httpx client."""

    def __init__(self, *args: str, stderr: int = subprocess.DEVNULL) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "labserver", "--http", *args],
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        self.url = self.process.stdout.readline().decode().strip()
        self.client = httpx.Client(timeout=READ_TIMEOUT)

    def headers_for(self, frame: dict) -> dict:
        params = frame.get("params", {})
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": frame["method"],
        }
        if frame["method"] in ("tools/call", "prompts/get"):
            headers["Mcp-Name"] = params["name"]
        elif frame["method"] == "resources/read":
            headers["Mcp-Name"] = params["uri"]
        return headers

    def post(self, frame: dict, **headers: str) -> httpx.Response:
        merged = {**self.headers_for(frame), **{name.replace("_", "-"): value for name, value in headers.items()}}
        return self.client.post(self.url, content=json.dumps(frame), headers=merged)

    def call(self, frame: dict, **headers: str) -> tuple[httpx.Response, dict, list[dict]]:
        """POST frame; return the response, the final reply and the notifications before it."""
        response = self.post(frame, **headers)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            messages = sse_messages(response.text)
            return response, messages[-1], messages[:-1]
        return response, response.json(), []

    def stop(self) -> int:
        self.client.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                return self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


@contextmanager
def http_lab(*args: str) -> Iterator[HttpLab]:
    lab = HttpLab(*args)
    try:
        yield lab
    finally:
        lab.stop()


def sample_note_ids() -> list[str]:
    folder = Path(__file__).resolve().parent.parent / "labserver" / "sample_notes"
    return sorted(path.stem for path in folder.glob("*.md"))


def labs_of(starter_path):
    """The labs the warm starter listening at starter_path has forked and not yet reaped.

    A forked lab keeps its starter's command line (fork copies it), and once the PIDs wrap around (pid_max is
    often 32768; a test run starts thousands of processes) a lab can have the lower PID: taking the first process
    with that command line then took the lab, whose children are none. The starter is the one whose parent is
    not one of them.
    """
    matching = {p.pid: p for p in psutil.process_iter(["cmdline", "ppid"]) if starter_path in (p.info["cmdline"] or [])}
    (starter,) = [p for p in matching.values() if p.info["ppid"] not in matching]
    return [child for child in starter.children() if child.status() != psutil.STATUS_ZOMBIE]

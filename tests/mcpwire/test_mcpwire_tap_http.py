"""The HTTP tap: requests and responses pass unchanged (but Host), SSE streams through as it comes."""

import asyncio
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import pytest
from mcp.client import Client

from mcpwire import HttpWire, Transcript, frames, headers

EVENT = b'event: message\r\ndata: {"a":1}\r\n\r\n'
RESPONSES = [
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nX-Odd-Case: kept\r\ncontent-length: 38\r\n\r\n"
    b'{"jsonrpc":"2.0","id":1,"result":{}}\r\n',
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    b"%x\r\n%s\r\n0\r\n\r\n" % (len(EVENT), EVENT),
]
REQUESTS = [
    b"POST /mcp HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example\r\nMcp-Method: tools/list\r\n"
    b"content-type: application/json\r\nContent-Length: 13\r\n\r\n{not json at ",
    b"POST /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\nContent-Length: 2\r\n\r\n{}",
]


class RawUpstream:
    """A server that keeps the exact bytes of each request and answers with canned bytes."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/mcp"
        self.received = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        connection, _ = self.listener.accept()
        buffer = b""
        for response in RESPONSES:
            while b"\r\n\r\n" not in buffer:
                buffer += connection.recv(65536)
            head, _, rest = buffer.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
            while len(rest) < length:
                rest += connection.recv(65536)
            self.received.append(head + b"\r\n\r\n" + rest[:length])
            buffer = rest[length:]
            connection.sendall(response)
        connection.close()


def start_tap(upstream, out):
    tap = subprocess.Popen([sys.executable, "-m", "mcpwire.tap", "--http", "--upstream", upstream, "--out", str(out)],
                           stdout=subprocess.PIPE, text=True)
    return tap, tap.stdout.readline().strip()


@pytest.fixture
def stop():
    started = []
    yield started.append
    for process in started:
        process.terminate()
        process.wait(timeout=30)  # it exits in well under a second; a CI machine under load once took over 10


def read_response(sock, buffer=b""):
    """One response's exact bytes (content-length or chunked), plus what was read past it."""
    while b"\r\n\r\n" not in buffer:
        buffer += sock.recv(65536)
    head, _, rest = buffer.partition(b"\r\n\r\n")
    if b"content-length" in head.lower():
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        while len(rest) < length:
            rest += sock.recv(65536)
        return head + b"\r\n\r\n" + rest[:length], rest[length:]
    while b"0\r\n\r\n" not in rest:
        rest += sock.recv(65536)
    end = rest.index(b"0\r\n\r\n") + 5
    return head + b"\r\n\r\n" + rest[:end], rest[end:]


def dechunk(body):
    data = b""
    while True:
        size, _, body = body.partition(b"\r\n")
        if int(size, 16) == 0:
            return data
        data, body = data + body[:int(size, 16)], body[int(size, 16) + 2:]


def test_requests_and_responses_cross_unchanged_but_host(tmp_path, stop):
    upstream = RawUpstream()
    tap, url = start_tap(upstream.url, tmp_path / "raw.jsonl")
    stop(tap)
    own = urlsplit(url).netloc.encode()
    sent = [request.replace(b"{host}", own) for request in REQUESTS]
    with socket.create_connection((urlsplit(url).hostname, urlsplit(url).port)) as host:
        host.sendall(sent[0])
        first, extra = read_response(host)
        host.sendall(sent[1])
        second, _ = read_response(host, extra)
    upstream_authority = urlsplit(upstream.url).netloc.encode()
    assert upstream.received == [request.replace(own, upstream_authority) for request in sent]
    assert first == RESPONSES[0]  # the Origin went through untouched, the body byte for byte
    # h11 writes the framing header itself (its own spelling); every other header is as sent
    assert second.partition(b"\r\n\r\n")[0] == RESPONSES[1].partition(b"\r\n\r\n")[0].replace(
        b"transfer-encoding", b"Transfer-Encoding")
    assert dechunk(second.partition(b"\r\n\r\n")[2]) == dechunk(RESPONSES[1].partition(b"\r\n\r\n")[2])
    tap.terminate()
    tap.wait(timeout=10)
    recorded = Transcript.from_jsonl(tmp_path / "raw.jsonl")
    assert [e.up for e in recorded] == sent and [e.down for e in recorded] == RESPONSES
    assert [e.status for e in recorded] == [200, 200]
    assert recorded[1].down_payloads == ['{"a":1}']


def test_a_host_header_that_is_not_the_taps_gets_421_from_the_tap(tmp_path, stop):
    upstream = RawUpstream()
    tap, url = start_tap(upstream.url, tmp_path / "host.jsonl")
    stop(tap)
    with socket.create_connection((urlsplit(url).hostname, urlsplit(url).port)) as host:
        host.sendall(REQUESTS[1].replace(b"{host}", b"attacker.example:80"))
        answer, _ = read_response(host)
    assert answer.startswith(b"HTTP/1.1 421 ") and upstream.received == []


@pytest.fixture(scope="module")
def lab():
    with HttpWire.labserver() as wire:
        yield wire


def test_httpwire_through_the_tap_gets_what_it_gets_directly(tmp_path, stop, lab):
    tap, url = start_tap(lab.url, tmp_path / "lab.jsonl")
    stop(tap)
    tapped = HttpWire(url, timeout=30)
    assert tapped.request("tools/list").message["result"] == lab.request("tools/list").message["result"]
    bad_origin = tapped.request("tools/list", headers={"Origin": "http://evil.example"})
    assert bad_origin.status == 403  # the lab's own Origin check, still judging the host's Origin
    tap.terminate()
    tap.wait(timeout=10)
    recorded = Transcript.from_jsonl(tmp_path / "lab.jsonl")
    assert [e.status for e in recorded] == [200, 403]
    assert [e.up.partition(b"\r\n\r\n")[2] for e in recorded] == [e.up.partition(b"\r\n\r\n")[2]
                                                                  for e in tapped.transcript]


def test_sse_progress_reaches_the_host_before_the_call_ends(tmp_path, stop, lab):
    tap, url = start_tap(lab.url, tmp_path / "sse.jsonl")
    stop(tap)
    frame = frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 200}}, id=7)
    frame["params"]["_meta"]["progressToken"] = 7
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    connection.request("POST", parts.path, frames.dumps(frame), {
        **headers.derive(frame), "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json"})
    response = connection.getresponse()
    first_progress = None
    for line in response:
        if b"notifications/progress" in line and first_progress is None:
            first_progress = time.monotonic()
        if line.startswith(b"data:") and b'"result"' in line:
            ended = time.monotonic()
            break
    connection.close()
    assert first_progress is not None and ended - first_progress > 1.0  # ten notes, 200 ms apart


def test_the_sdk_client_talks_to_the_lab_through_the_tap(tmp_path, stop, lab):
    tap, url = start_tap(lab.url, tmp_path / "sdk.jsonl")
    stop(tap)

    async def session():
        async with Client(url, mode=frames.PROTOCOL_VERSION) as client:
            return await client.list_tools()

    assert asyncio.run(asyncio.wait_for(session(), 60)).tools
    tap.terminate()
    tap.wait(timeout=10)
    recorded = Transcript.from_jsonl(tmp_path / "sdk.jsonl")
    listed = [e for e in recorded if e.method == "tools/list"]
    assert listed and listed[0].status == 200
    assert json.loads(listed[0].down_payloads[-1])["id"] == listed[0].id

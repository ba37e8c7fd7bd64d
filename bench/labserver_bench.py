"""Lab server vs the bare SDK: start-up, stdio and HTTP round trips, EOF behaviour.

Run: `python -m bench.labserver_bench`. Prints one table; takes well under a minute.
Round trips are sequential `tools/call read_note` calls. One lab and one bare server
run side by side and take turns in blocks of calls, so a busy machine slows both
alike; the overhead is the median of the per-block p50 ratios.
The goal it checks: the lab's stdio front costs less than 10 % on a stdio round trip.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import anyio
import httpx

from labserver.stdio_front import LineSplitter, StdioFront, line_id
from labserver.warm import warm_starter

PROTOCOL = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": PROTOCOL, "io.modelcontextprotocol/clientCapabilities": {}}
LAB = [sys.executable, "-m", "labserver"]
BARE = [sys.executable, "-m", "bench.bare_server"]
STARTS = 5
WARM_UP = 50
BLOCKS = 20
BLOCK_CALLS = 25  # BLOCKS x BLOCK_CALLS = 500 timed calls per server
PIPELINED = 50

Call = Callable[[int], None]


def frame(request_id: int, method: str, **params: object) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": META}}


def read_note(request_id: int) -> dict:
    return frame(request_id, "tools/call", name="read_note", arguments={"note_id": "spindle-density"})


def spawn(command: list[str]) -> subprocess.Popen:
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def send_line(server: subprocess.Popen, message: dict) -> dict:
    server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())


def stop(server: subprocess.Popen, grace: float = 10) -> None:
    """Close stdin so the server answers what it has read and exits; kill it after `grace` seconds."""
    server.stdin.close()
    try:
        server.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def start_to_first_reply(command: list[str]) -> float:
    """Median seconds from spawning the process to the server/discover reply."""
    times = []
    for _ in range(STARTS):
        started = time.perf_counter()
        server = spawn(command)
        send_line(server, frame(1, "server/discover"))
        times.append(time.perf_counter() - started)
        stop(server)
    return statistics.median(times)


@contextmanager
def stdio_caller(command: list[str]) -> Iterator[Call]:
    server = spawn(command)

    def call(request_id: int) -> None:
        reply = send_line(server, read_note(request_id))
        assert reply["id"] == request_id and "result" in reply, reply

    try:
        yield call
    finally:
        stop(server)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_http(command: list[str]) -> tuple[subprocess.Popen, str]:
    """Start an HTTP server; the lab prints its URL, the bare one gets a port and is polled."""
    if command is LAB:
        server = subprocess.Popen([*LAB, "--http"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return server, server.stdout.readline().decode().strip()
    port = free_port()
    server = subprocess.Popen([*BARE, "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}/mcp"


@contextmanager
def http_caller(command: list[str]) -> Iterator[Call]:
    server, url = start_http(command)
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "read_note",
        "Mcp-Param-Note-Id": "spindle-density",
    }
    client = httpx.Client(headers=headers, timeout=10)

    def call(request_id: int) -> None:
        reply = client.post(url, json=read_note(request_id))
        assert reply.status_code == 200 and reply.json()["id"] == request_id, reply.text

    try:
        yield call
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=10)


def timed_block(call: Call, first_id: int) -> list[float]:
    samples = []
    for request_id in range(first_id, first_id + BLOCK_CALLS):
        started = time.perf_counter()
        call(request_id)
        samples.append(time.perf_counter() - started)
    return samples


def p50(samples: list[float]) -> float:
    return statistics.median(samples)


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


class Comparison:
    """Round trips on a lab and a bare server that take turns, block by block."""

    def __init__(self, caller: Callable[[list[str]], AbstractContextManager[Call]]) -> None:
        self.lab: list[float] = []
        self.bare: list[float] = []
        self.block_ratios: list[float] = []
        with caller(LAB) as lab_call, caller(BARE) as bare_call:
            for request_id in range(1, WARM_UP + 1):
                lab_call(request_id)
                bare_call(request_id)
            for block in range(BLOCKS):
                first_id = WARM_UP + 1 + block * BLOCK_CALLS
                lab_block, bare_block = timed_block(lab_call, first_id), timed_block(bare_call, first_id)
                self.lab += lab_block
                self.bare += bare_block
                self.block_ratios.append(p50(lab_block) / p50(bare_block))

    def overhead(self) -> float:
        return statistics.median(self.block_ratios) - 1


def answered_after_eof(command: list[str]) -> int:
    """How many of PIPELINED requests written at once, then stdin closed, get an answer."""
    lines = b"".join(json.dumps(read_note(i)).encode() + b"\n" for i in range(1, PIPELINED + 1))
    done = subprocess.run(command, input=lines, capture_output=True, timeout=60)
    return sum(1 for line in done.stdout.splitlines() if "id" in json.loads(line))


def front_work_per_request() -> float:
    """Seconds of CPU the front spends on one request line and its reply, in process."""
    line = json.dumps(read_note(1)).encode() + b"\n"
    reply = '{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false,"resultType":"complete"}}\n'  # SDK style
    front = StdioFront(in_fd=-1, out_fd=-1)
    splitter = LineSplitter()
    rounds = 20_000

    async def run() -> float:
        started = time.perf_counter()
        for _ in range(rounds):
            for piece in splitter.feed(line):
                await front.check(piece)
            front.pending.answered(line_id(reply)[0])
        return (time.perf_counter() - started) / rounds

    return anyio.run(run)


def main() -> None:
    print(f"load average before the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    starts = (start_to_first_reply(LAB), start_to_first_reply(BARE))
    with warm_starter():
        warm = start_to_first_reply(LAB)
    stdio, http = Comparison(stdio_caller), Comparison(http_caller)
    rows = [("stdio start -> first reply (median)", *starts)]
    for transport, comparison in (("stdio", stdio), ("HTTP", http)):
        rows.append((f"{transport} tools/call p50", p50(comparison.lab), p50(comparison.bare)))
        rows.append((f"{transport} tools/call p99", p99(comparison.lab), p99(comparison.bare)))

    print(f"{'measure':38} {'lab ms':>9} {'bare ms':>9} {'lab/bare':>9}")
    for name, lab, bare in rows:
        print(f"{name:38} {lab * 1000:9.2f} {bare * 1000:9.2f} {lab / bare:9.2f}")
    print(f"warm start (test runs, labserver.warm) -> first reply: {warm * 1000:.2f} ms, "
          f"{warm / starts[0]:.2f}x a cold lab start")
    lab_eof, bare_eof = answered_after_eof(LAB), answered_after_eof(BARE)
    print(f"{PIPELINED} pipelined requests then EOF: lab answered {lab_eof}, bare SDK answered {bare_eof}")
    verdict = "within" if stdio.overhead() < 0.10 else "OVER"
    print(f"stdio front overhead (median of per-block p50 ratios): {stdio.overhead():+.1%} ({verdict} the 10 % budget)")
    print(f"HTTP lab vs bare (same SDK transport, no front): {http.overhead():+.1%}")
    work = front_work_per_request()
    print(
        f"front CPU per request (split + validate + count + match reply): {work * 1e6:.1f} us "
        f"= {work / p50(stdio.bare):.1%} of a bare stdio round trip"
    )


if __name__ == "__main__":
    main()

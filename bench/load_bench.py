"""`python -m bench.load_bench`: the lab server under load, on loopback only.

1. HTTP: 50 concurrent clients (asyncio tasks, one httpx connection each) send a mix
   of read requests for 30 s; prints requests/s, p50/p99 latency and errors (goal: 0).
2. stdio: one burst of 10,000 pipelined requests written while the replies are read;
   prints the time, the rate and how many were answered (goal: all).

Both parts stop by themselves (the HTTP run after its duration, the burst after at
most BURST_TIMEOUT_S). `--seconds`, `--clients` and `--burst` shrink a run for a quick look.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter

import httpx

from bench.labserver_bench import PROTOCOL, frame, stop

BURST_TIMEOUT_S = 120

# (method, params, extra headers): what a host does most, reading.
MIX = [
    ("tools/call", {"name": "read_note", "arguments": {"note_id": "spindle-density"}}, {"Mcp-Name": "read_note", "Mcp-Param-Note-Id": "spindle-density"}),
    ("tools/call", {"name": "search_notes", "arguments": {"query": "sleep memory", "limit": 3}}, {"Mcp-Name": "search_notes"}),
    ("resources/read", {"uri": "notes://index"}, {"Mcp-Name": "notes://index"}),
    ("tools/list", {}, {}),
    ("server/discover", {}, {}),
]


def percentile(ordered: list[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


def start_http_server() -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, "-m", "labserver", "--http"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    url = server.stdout.readline().decode().strip()
    if not url.startswith("http://127.0.0.1:"):
        server.kill()
        raise SystemExit(f"the lab server did not print a loopback URL: {url!r}")
    return server, url


def stop_http(server: subprocess.Popen) -> None:
    """The HTTP server reads no stdin: SIGTERM, then SIGKILL."""
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def problem_with(response: httpx.Response, request_id: int) -> str | None:
    """None for a good reply, else a short name for what went wrong."""
    if response.status_code != 200:
        return f"HTTP {response.status_code}"
    reply = response.json()
    if reply.get("id") != request_id:
        return "wrong id"
    if "error" in reply:
        return f"JSON-RPC {reply['error'].get('code')}"
    if reply["result"].get("isError"):
        return "tool error"
    return None


async def one_client(url: str, number: int, until: float, latencies: list[float], errors: Counter) -> None:
    request_id = number * 10_000_000
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=1)) as client:
        while time.perf_counter() < until:
            request_id += 1
            method, params, extra = MIX[request_id % len(MIX)]
            headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                       "MCP-Protocol-Version": PROTOCOL, "Mcp-Method": method, **extra}
            started = time.perf_counter()
            try:
                response = await client.post(url, content=json.dumps(frame(request_id, method, **params)), headers=headers)
                problem = problem_with(response, request_id)
            except (httpx.HTTPError, ValueError) as error:
                problem = type(error).__name__
            latencies.append(time.perf_counter() - started)
            if problem is not None:
                errors[problem] += 1


def http_load(clients: int, seconds: float) -> None:
    server, url = start_http_server()
    latencies: list[float] = []
    errors: Counter = Counter()

    async def run() -> float:
        started = time.perf_counter()
        until = started + seconds
        await asyncio.gather(*(one_client(url, n, until, latencies, errors) for n in range(1, clients + 1)))
        return time.perf_counter() - started

    try:
        elapsed = asyncio.run(run())
    finally:
        stop_http(server)
    ordered = sorted(latencies)
    print(f"HTTP: {clients} clients for {elapsed:.1f} s on {url}")
    print(f"  requests      {len(ordered):>9}")
    print(f"  requests/s    {len(ordered) / elapsed:>9.0f}")
    print(f"  p50 latency   {percentile(ordered, 0.5) * 1000:>9.1f} ms")
    print(f"  p99 latency   {percentile(ordered, 0.99) * 1000:>9.1f} ms")
    print(f"  errors        {sum(errors.values()):>9}  {dict(errors) if errors else '(goal: 0)'}")


def stdio_burst(count: int) -> None:
    lines = b"".join(
        json.dumps(frame(request_id, MIX[request_id % len(MIX)][0], **MIX[request_id % len(MIX)][1])).encode() + b"\n"
        for request_id in range(1, count + 1)
    )
    server = subprocess.Popen([sys.executable, "-m", "labserver"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        server.stdin.write(json.dumps(frame(0, "server/discover")).encode() + b"\n")
        server.stdin.flush()
        server.stdout.readline()  # started: the burst times the server, not its start-up

        def write_all() -> None:
            server.stdin.write(lines)
            server.stdin.flush()

        answered: set[int] = set()
        errors = 0
        timer = threading.Timer(BURST_TIMEOUT_S, server.kill)  # the bound: never wait for ever
        timer.start()
        started = time.perf_counter()
        writer = threading.Thread(target=write_all, daemon=True)
        writer.start()
        while len(answered) < count and (line := server.stdout.readline()):
            reply = json.loads(line)
            answered.add(reply.get("id"))
            errors += "error" in reply
        elapsed = time.perf_counter() - started
        timer.cancel()
        writer.join(timeout=5)
    finally:
        stop(server, grace=30)  # a burst of 10,000 replies takes a while to drain
    print(f"stdio: a pipelined burst of {count} requests")
    print(f"  answered      {len(answered):>9}  ({'all' if len(answered) == count else f'{count - len(answered)} missing'})")
    print(f"  time          {elapsed:>9.2f} s")
    print(f"  requests/s    {len(answered) / elapsed:>9.0f}")
    print(f"  error replies {errors:>9}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.load_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the HTTP run (default 30)")
    parser.add_argument("--clients", type=int, default=50, help="concurrent HTTP clients (default 50)")
    parser.add_argument("--burst", type=int, default=10_000, help="requests in the stdio burst (default 10000)")
    args = parser.parse_args(argv)
    print(f"load average before the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    http_load(args.clients, args.seconds)
    stdio_burst(args.burst)


if __name__ == "__main__":
    main()

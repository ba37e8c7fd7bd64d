"""`python -m bench.mcpwire_bench`: mcpwire's round trips against a bare loop and the SDK client.

Three methods over stdio, cheap to dear: `server/discover`, `tools/list` and a
`tools/call` (a tool run). Each is timed for two bare subprocess loops (write a line,
readline: the floor), one on binary pipes and one in text mode with line buffering (the
loop lesson 01 writes), and for `StdioWire`, on SETS sets of fresh server processes;
the tools/call also for the SDK's own client, and over Streamable HTTP for `HttpWire`,
`http.client` and the SDK client. The clients take turns in short blocks of calls, the
order turning by one each round so that no client always follows the same one, and a
ratio is the median of the per-round p50 ratios: drift on a busy machine between one
block and the next cancels out (the same method as `bench.labserver_bench`). The tables
also print p50/p99 over all calls and the ratio of those p50s. Goals: StdioWire within
1.15x of each bare loop on all three methods; both wires faster than the SDK client.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import urlsplit

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from mcpwire import HttpWire, StdioWire, frames

TOOL, ARGUMENTS = "search_notes", {"query": "spindles", "limit": 1}
METHODS: list[tuple[str, dict]] = [("server/discover", {}), ("tools/list", {}),
                                   ("tools/call", {"name": TOOL, "arguments": ARGUMENTS})]
CALLS, WARMUP, ROUNDS = 40, 30, 15  # short blocks, many rounds: a load spike spoils a few rounds, not a client
SETS = 4  # stdio: fresh server processes this many times
GOAL = 1.15

Samples = dict[str, list[float]]
Rounds = dict[str, list[list[float]]]  # each client's samples, one list per round
Block = Callable[[int], Awaitable[list[float]]]  # times this many calls of one client


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def frame_line(method: str, params: dict, call_id: int) -> bytes:
    return (frames.dumps(frames.request(method, dict(params), id=call_id)) + "\n").encode()


class BareStdio:
    """The floor: write one line, read one line, nothing else (to the lab server, or whatever `command` starts).

    Binary pipes, or with `text=True` text mode with line buffering, as a learner's first loop is often written.
    `new_session=True` starts the server in a session of its own (bench.session_bench).
    """

    def __init__(self, command: list[str] | None = None, text: bool = False, new_session: bool = False) -> None:
        self.text = text
        self.process = subprocess.Popen(command or [sys.executable, "-m", "labserver"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=new_session,
                                        **({"text": True, "bufsize": 1} if text else {}))
        self.next_id = 1

    def call(self, method: str, params: dict) -> bytes | str:
        line = frame_line(method, params, self.next_id)
        self.process.stdin.write(line.decode() if self.text else line)
        self.process.stdin.flush()
        self.next_id += 1
        return self.process.stdout.readline()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


class BareHttp:
    """The floor over HTTP: the standard library's http.client on one keep-alive connection."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.path = parts.path
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port)
        self.next_id = 1

    def call(self) -> bytes:
        body = frame_line("tools/call", {"name": TOOL, "arguments": ARGUMENTS}, self.next_id)[:-1]
        self.next_id += 1
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                   "MCP-Protocol-Version": frames.PROTOCOL_VERSION, "Mcp-Method": "tools/call", "Mcp-Name": TOOL}
        try:
            self.connection.request("POST", self.path, body, headers)
            return self.connection.getresponse().read()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            self.connection.close()  # the server closed the idle keep-alive connection: reconnect, as HttpWire does
            self.connection.request("POST", self.path, body, headers)
            return self.connection.getresponse().read()

    def close(self) -> None:
        self.connection.close()


def time_calls(call: Callable[[], object], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


async def time_async_calls(call: Callable[[], Awaitable[object]], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


def sync_block(call: Callable[[], object]) -> Block:
    async def block(count: int) -> list[float]:
        return time_calls(call, count)
    return block


async def take_turns(blocks: dict[str, Block]) -> Rounds:
    """Warm every client up, then ROUNDS rounds of one block each; round r starts at the r-th client."""
    names = list(blocks)
    for name in names:
        await blocks[name](WARMUP)
    rounds: Rounds = {name: [] for name in names}
    for number in range(ROUNDS):
        for name in names[number % len(names):] + names[:number % len(names)]:
            rounds[name].append(await blocks[name](CALLS))
    return rounds


def interleaved(clients: dict[str, Callable[[], object]], sdk_name: str | None = None,
                sdk_server: object = None) -> Rounds:
    """Time every client in turns (the SDK client's tools/call too, when named)."""
    async def run() -> Rounds:
        blocks = {name: sync_block(call) for name, call in clients.items()}
        if sdk_name is None:
            return await take_turns(blocks)
        async with Client(sdk_server, mode=frames.PROTOCOL_VERSION) as sdk:  # pinned: no discover probe
            async def sdk_block(count: int) -> list[float]:
                return await time_async_calls(lambda: sdk.call_tool(TOOL, ARGUMENTS), count)
            return await take_turns({**blocks, sdk_name: sdk_block})
    return asyncio.run(run())


def pooled(rounds: Rounds) -> Samples:
    return {name: [value for block in blocks for value in block] for name, blocks in rounds.items()}


def round_ratios(rounds: Rounds, name: str, floor: str) -> list[float]:
    """p50 of `name`'s block over p50 of the floor's block, round by round (blocks of the same round are adjacent)."""
    return [p50(mine) / p50(theirs) for mine, theirs in zip(rounds[name], rounds[floor])]


def report(title: str, samples: Samples, floor: str, rounds: Rounds | None = None) -> None:
    """p50/p99 over all calls and their ratios to the floor; with `rounds`, the median per-round p50 ratio too."""
    print(f"\n{title}, {len(samples[floor])} calls each")
    base50, base99 = percentiles(samples[floor])
    header = f"  {'client':<26} {'p50 ms':>8} {'p99 ms':>8} {'p50 ratio':>10} {'p99 ratio':>10}"
    print(header + (f"  {'per-round p50 ratio: median [quartiles]'}" if rounds else ""))
    for name, values in samples.items():
        p50_, p99_ = percentiles(values)
        row = f"  {name:<26} {p50_ * 1e3:>8.3f} {p99_ * 1e3:>8.3f} {p50_ / base50:>9.2f}x {p99_ / base99:>9.2f}x"
        if rounds:
            ratios = round_ratios(rounds, name, floor)
            low, _, high = statistics.quantiles(ratios, n=4)
            row += f"  {statistics.median(ratios):.2f}x [{low:.2f}-{high:.2f}] of {len(ratios)} rounds"
        print(row)


def goal(text: str, ok: bool) -> None:
    print(f"  goal: {text}: {'met' if ok else 'NOT met'}")


def p50(values: Sequence[float]) -> float:
    return statistics.median(values)


def stdio_set(by_method: dict[str, Rounds]) -> None:
    """One set of server processes (one per client), every method timed on them; rounds added to `by_method`."""
    bare, bare_text, wire = BareStdio(), BareStdio(text=True), StdioWire.labserver()
    try:
        wire.request("server/discover", timeout=60)  # started: the first reply waits for the server to load
        for method, params in METHODS:
            clients = {"bare loop, binary": lambda m=method, p=params: bare.call(m, p),
                       "bare loop, text": lambda m=method, p=params: bare_text.call(m, p),
                       "mcpwire StdioWire": lambda m=method, p=params: wire.request(m, dict(p))}
            sdk = ("SDK Client (stdio)", StdioServerParameters(command=sys.executable, args=["-m", "labserver"]))
            rounds = interleaved(clients, *(sdk if method == "tools/call" else (None, None)))
            for name, blocks in rounds.items():
                by_method.setdefault(method, {}).setdefault(name, []).extend(blocks)
    finally:
        bare.close()
        bare_text.close()
        wire.close()


def stdio_rounds() -> None:
    # Server processes differ by a few percent in speed from one start to the next (where they run, what they
    # share): each client's calls are spread over SETS processes, so that no one start decides a ratio.
    by_method: dict[str, Rounds] = {}
    for number in range(1, SETS + 1):
        stdio_set(by_method)
        print(f"stdio set {number} of {SETS} done, {load()}", flush=True)
    for method, params in METHODS:
        rounds = by_method[method]
        label = f"{method} {params['name']}" if method == "tools/call" else method
        report(f"stdio: {label} round trip, over {SETS} sets of server processes", pooled(rounds), "bare loop, binary",
               rounds)
        for floor in ("bare loop, binary", "bare loop, text"):
            ratios = round_ratios(rounds, "mcpwire StdioWire", floor)
            by_set = [statistics.median(ratios[start:start + ROUNDS]) for start in range(0, len(ratios), ROUNDS)]
            print(f"  StdioWire / {floor}, median per round in each set: "
                  + " ".join(f"{ratio:.2f}x" for ratio in by_set))
            ratio = statistics.median(ratios)
            goal(f"StdioWire p50 within {GOAL}x of the {floor} on {method} ({ratio:.2f}x, median per round)",
                 ratio <= GOAL)
        if method == "tools/call":
            goal("StdioWire faster than the SDK client",
                 statistics.median(round_ratios(rounds, "mcpwire StdioWire", "SDK Client (stdio)")) < 1)


def http_rounds() -> None:
    with HttpWire.labserver() as http_wire:
        bare_http = BareHttp(http_wire.url)
        try:
            rounds = interleaved({"bare http.client loop": bare_http.call,
                                  "mcpwire HttpWire": lambda: http_wire.request("tools/call",
                                                                                {"name": TOOL, "arguments": ARGUMENTS})},
                                 "SDK Client (HTTP)", http_wire.url)
        finally:
            bare_http.close()
    report(f"Streamable HTTP: tools/call {TOOL} round trip", pooled(rounds), "bare http.client loop", rounds)
    goal("HttpWire faster than the SDK client",
         statistics.median(round_ratios(rounds, "mcpwire HttpWire", "SDK Client (HTTP)")) < 1)


def load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> int:
    started = time.perf_counter()
    print(f"{os.cpu_count()} CPUs, {load()} at the start (others' work on the machine moves the times, less the ratios)")
    stdio_rounds()
    http_rounds()
    print(f"\n(one run, {time.perf_counter() - started:.0f} s, {load()} at the end; "
          "ratios are the figures that travel across machines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

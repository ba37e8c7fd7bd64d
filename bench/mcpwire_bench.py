"""`python -m bench.mcpwire_bench`: tools/call round trips with mcpwire vs a bare loop and the SDK client.

Prints p50/p99 per client and ratios measured in the same run. Goals: StdioWire within
1.15x of a bare subprocess loop (write a line, readline), and both wires faster than
the SDK's own `mcp.client.Client`.
"""

import asyncio
import http.client
import statistics
import subprocess
import sys
import time
from urllib.parse import urlsplit

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from mcpwire import HttpWire, StdioWire, frames

TOOL, ARGUMENTS = "search_notes", {"query": "spindles", "limit": 1}
CALLS, WARMUP, ROUNDS = 100, 30, 6


def percentiles(samples):
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def frame_line(call_id):
    return (frames.dumps(frames.request("tools/call", {"name": TOOL, "arguments": ARGUMENTS}, id=call_id)) + "\n").encode()


class BareStdio:
    """The floor: write one line, read one line, nothing else."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, "-m", "labserver"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 1

    def call(self):
        self.process.stdin.write(frame_line(self.next_id))
        self.process.stdin.flush()
        self.next_id += 1
        return self.process.stdout.readline()

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


class BareHttp:
    """The floor over HTTP: the standard library's http.client on one keep-alive connection."""

    def __init__(self, url):
        parts = urlsplit(url)
        self.path = parts.path
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port)
        self.next_id = 1

    def call(self):
        body = frame_line(self.next_id)[:-1]
        self.next_id += 1
        self.connection.request("POST", self.path, body, {
            "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
            "MCP-Protocol-Version": frames.PROTOCOL_VERSION, "Mcp-Method": "tools/call", "Mcp-Name": TOOL})
        return self.connection.getresponse().read()

    def close(self):
        self.connection.close()


def time_calls(call, count):
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def interleaved(clients, sdk_name, sdk_server):
    """Time every client in alternating rounds (the SDK client too), so drift on the machine hits all alike."""
    async def run():
        async with Client(sdk_server, mode=frames.PROTOCOL_VERSION) as sdk:  # pinned: no discover probe
            async def sdk_call_times(count):
                samples = []
                for _ in range(count):
                    started = time.perf_counter()
                    await sdk.call_tool(TOOL, ARGUMENTS)
                    samples.append(time.perf_counter() - started)
                return samples

            samples = {name: [] for name in [*clients, sdk_name]}
            for call in clients.values():
                time_calls(call, WARMUP)
            await sdk_call_times(WARMUP)
            for _ in range(ROUNDS):
                for name, call in clients.items():
                    samples[name] += time_calls(call, CALLS)
                samples[sdk_name] += await sdk_call_times(CALLS)
            return samples
    return asyncio.run(run())


def report(title, samples, floor, goals):
    print(f"\n{title}: tools/call {TOOL} round trip, {CALLS * ROUNDS} calls each")
    base50, base99 = percentiles(samples[floor])
    print(f"  {'client':<26} {'p50 ms':>8} {'p99 ms':>8} {'p50 ratio':>10} {'p99 ratio':>10}")
    for name, values in samples.items():
        p50, p99 = percentiles(values)
        print(f"  {name:<26} {p50 * 1e3:>8.3f} {p99 * 1e3:>8.3f} {p50 / base50:>9.2f}x {p99 / base99:>9.2f}x")
    for text, ok in goals(samples):
        print(f"  goal: {text}: {'met' if ok else 'NOT met'}")


def p50(values):
    return percentiles(values)[0]


def main():
    started = time.perf_counter()
    bare, wire = BareStdio(), StdioWire.labserver()
    try:
        stdio = interleaved({"bare subprocess loop": bare.call,
                             "mcpwire StdioWire": lambda: wire.request("tools/call", {"name": TOOL, "arguments": ARGUMENTS})},
                            "SDK Client (stdio)", StdioServerParameters(command=sys.executable, args=["-m", "labserver"]))
    finally:
        bare.close()
        wire.close()
    report("stdio", stdio, "bare subprocess loop", lambda s: [
        ("StdioWire p50 within 1.15x of the bare loop", p50(s["mcpwire StdioWire"]) <= 1.15 * p50(s["bare subprocess loop"])),
        ("StdioWire faster than the SDK client", p50(s["mcpwire StdioWire"]) < p50(s["SDK Client (stdio)"]))])

    with HttpWire.labserver() as http_wire:
        bare_http = BareHttp(http_wire.url)
        try:
            http = interleaved({"bare http.client loop": bare_http.call,
                                "mcpwire HttpWire": lambda: http_wire.request("tools/call", {"name": TOOL, "arguments": ARGUMENTS})},
                               "SDK Client (HTTP)", http_wire.url)
        finally:
            bare_http.close()
    report("Streamable HTTP", http, "bare http.client loop", lambda s: [
        ("HttpWire faster than the SDK client", p50(s["mcpwire HttpWire"]) < p50(s["SDK Client (HTTP)"]))])
    print(f"\n(one run, {time.perf_counter() - started:.0f} s; ratios are the figures that travel across machines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

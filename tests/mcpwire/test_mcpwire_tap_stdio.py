"""The stdio tap: bytes pass unchanged both ways, every line is recorded once, ends and signals travel."""

import asyncio
import json
import signal
import socket
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from mcpwire import StdioWire, Transcript, frames

# These tests watch the lab's own process (its pid, memory, signals, children): start it cold.
LAB_STARTS_COLD = True

TAP = [sys.executable, "-m", "mcpwire.tap"]

# A server that writes what it received to a file, answers with a file's bytes, logs to stderr
# and exits 3 at EOF; on SIGTERM it writes the signal down and exits 7.
RECORDING_SERVER = textwrap.dedent("""
    import os, signal, sys, threading
    received, answer, note = sys.argv[1:4]
    def on_term(signum, frame):
        open(note, "w").write(str(signum))
        os._exit(7)
    signal.signal(signal.SIGTERM, on_term)
    def answer_all():
        os.write(2, b"chatty server: started\\n")
        data = open(answer, "rb").read()
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]
    threading.Thread(target=answer_all).start()
    with open(received, "wb") as out:
        while chunk := os.read(0, 65536):
            out.write(chunk)
    sys.exit(3)
""")

BIG = "x" * (1024 * 1024)
HOST_SENDS = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}\n'
    b"this is not json\n"
    + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "big", "arguments": {"text": BIG}}}).encode() + b"\n"
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}\n'
    b'\xff\xfe bytes that are not UTF-8\n'
    b'{"jsonrpc":"2.0","id":5,"method":"ping"}'  # the last line has no newline
)
SERVER_SENDS = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'
    b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n'
    + json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": BIG}]}}).encode() + b"\n"
    b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}\n'
    b"garbage from the server\n"
    b'{"jsonrpc":"2.0","id":1'  # cut short, no newline
)


@pytest.fixture
def server(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(RECORDING_SERVER)
    (tmp_path / "answer.bin").write_bytes(SERVER_SENDS)
    return [sys.executable, str(script), str(tmp_path / "received.bin"), str(tmp_path / "answer.bin"),
            str(tmp_path / "signal.txt")]


def tap(tmp_path, server_command, **kwargs):
    return subprocess.Popen([*TAP, "--out", str(tmp_path / "session.jsonl"), "--", *server_command],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def gone(pid, within=5.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.05)
    return False


def test_every_byte_passes_unchanged_both_ways_and_the_exit_code_is_the_servers(tmp_path, server):
    process = tap(tmp_path, server)
    out, err = process.communicate(HOST_SENDS, timeout=60)
    assert (tmp_path / "received.bin").read_bytes() == HOST_SENDS
    assert out == SERVER_SENDS
    assert b"chatty server: started\n" in err
    assert (tmp_path / "session.stderr").read_bytes() == b"chatty server: started\n"
    assert process.returncode == 3


def test_the_session_loads_as_a_transcript_with_every_byte_recorded_once(tmp_path, server):
    tap(tmp_path, server).communicate(HOST_SENDS, timeout=60)
    transcript = Transcript.from_jsonl(tmp_path / "session.jsonl")
    assert sum(e.bytes_up for e in transcript) == len(HOST_SENDS)
    assert sum(e.bytes_down for e in transcript) == len(SERVER_SENDS)
    # This server answers at once, not in reply, so an answer may be filed before its request and
    # then stand apart from it: look for each side of an id, wherever it was filed.
    def with_id(number):
        return [e for e in transcript if e.id == number]
    assert [e.method for e in with_id(1) if e.up] == ["tools/list"]
    assert b"".join(e.down for e in with_id(1)) == b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n'
    assert sum(e.bytes_up for e in with_id(2)) > len(BIG) and sum(e.bytes_down for e in with_id(2)) > len(BIG)
    by_id = {e.id: e for e in transcript if e.id is not None}
    unreadable = [e for e in transcript if e.up == b"this is not json\n"]
    assert unreadable[0].down.startswith(b'{"jsonrpc":"2.0","id":null,"error"')
    assert by_id[5].up == b'{"jsonrpc":"2.0","id":5,"method":"ping"}' and by_id[5].down == b""
    copy = tmp_path / "copy.jsonl"
    transcript.to_jsonl(copy)
    assert Transcript.from_jsonl(copy) == transcript


def test_each_line_carries_the_time_it_passed(tmp_path, server):
    before = time.time()
    tap(tmp_path, server).communicate(HOST_SENDS, timeout=60)
    entries = [json.loads(line) for line in (tmp_path / "session.jsonl").read_text().splitlines()]
    for entry in entries:
        assert len(entry["times_up"]) == len(entry["up_payloads"])
        assert len(entry["times_down"]) == len(entry["down_payloads"])
        assert all(before <= at <= time.time() for at in entry["times_up"] + entry["times_down"])


def test_the_server_closing_its_stdout_reaches_the_host_while_it_still_runs(tmp_path):
    closes_early = "import os, sys\nos.write(1, b'bye\\n'); os.close(1)\nsys.stdin.buffer.read()\n"
    process = tap(tmp_path, [sys.executable, "-c", closes_early])
    try:
        assert process.stdout.read() == b"bye\n"  # EOF arrives although the server waits on stdin
        assert process.poll() is None
    finally:
        process.stdin.close()
    assert process.wait(timeout=20) == 0


def test_a_signal_to_the_tap_reaches_the_server_and_its_code_comes_back(tmp_path, server):
    process = tap(tmp_path, server)
    process.stdout.readline()  # the server is up and has installed its handler
    server_pid = psutil.Process(process.pid).children()[0].pid
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 7
    assert (tmp_path / "signal.txt").read_text() == str(int(signal.SIGTERM))
    assert gone(server_pid)


def test_a_server_killed_by_a_signal_kills_the_tap_with_the_same_signal(tmp_path):
    process = tap(tmp_path, [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    process.communicate(timeout=20)
    assert process.returncode == -signal.SIGKILL


def test_a_tap_killed_outright_leaves_no_server_behind(tmp_path):
    process = tap(tmp_path, [sys.executable, "-c", "import time; time.sleep(60)"])
    deadline = time.monotonic() + 20
    while not psutil.Process(process.pid).children() and time.monotonic() < deadline:
        time.sleep(0.05)
    server_pid = psutil.Process(process.pid).children()[0].pid
    process.kill()
    process.wait(timeout=10)
    assert gone(server_pid)


def test_stdiowire_talks_to_the_lab_through_the_tap(tmp_path):
    out = tmp_path / "lab.jsonl"
    with StdioWire([*TAP, "--out", str(out), "--", sys.executable, "-m", "labserver"], timeout=30) as wire:
        discovered = wire.request("server/discover")
        listed = wire.request("tools/list")
        refused = wire.send_raw("{oops")
        sent = list(wire.transcript)
    assert "result" in discovered.message and "tools" in listed.message["result"]
    assert refused.code == -32700
    recorded = Transcript.from_jsonl(out)
    assert [(e.method, e.up, e.down) for e in recorded] == [(e.method, e.up, e.down) for e in sent]


def test_the_sdk_client_talks_to_the_lab_through_the_tap(tmp_path):
    out = tmp_path / "sdk.jsonl"
    parameters = StdioServerParameters(command=sys.executable,
                                       args=["-m", "mcpwire.tap", "--out", str(out), "--", sys.executable, "-m", "labserver"])

    async def session():
        async with Client(parameters, mode=frames.PROTOCOL_VERSION) as client:
            tools = await client.list_tools()
            found = await client.call_tool("search_notes", {"query": "spindles", "limit": 1})
            return tools, found

    tools, found = asyncio.run(asyncio.wait_for(session(), 60))
    assert tools.tools and not found.is_error
    recorded = Transcript.from_jsonl(out)
    methods = [e.method for e in recorded]
    assert "tools/list" in methods and "tools/call" in methods
    for exchange in recorded:
        if exchange.method in ("tools/list", "tools/call"):
            assert json.loads(exchange.down_payloads[-1])["id"] == exchange.id
    assert all(e.up.endswith(b"\n") for e in recorded if e.up)


# Reads one line, says so on stderr, then never answers.
SILENT_SERVER = "import sys, time\nsys.stdin.readline()\nprint('read it', file=sys.stderr, flush=True)\ntime.sleep(60)"


def test_a_tap_killed_outright_still_records_what_it_passed_on(tmp_path):
    out = tmp_path / "killed.jsonl"
    process = subprocess.Popen([*TAP, "--out", str(out), "--", sys.executable, "-c", SILENT_SERVER],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdin.write(b'{"jsonrpc":"2.0","id":"never","method":"tools/list","params":{}}\n')
    process.stdin.flush()
    assert process.stderr.readline() == b"read it\n"  # the server has the request: the tap passed it on
    process.kill()
    process.wait(timeout=10)
    deadline = time.monotonic() + 10  # the recorder finishes the file once the tap's pipe to it closes
    while not out.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    (exchange,) = Transcript.from_jsonl(out)
    assert (exchange.method, exchange.id, exchange.down) == ("tools/list", "never", b"")
    for stream in (process.stdin, process.stdout, process.stderr):
        stream.close()


def test_a_host_on_a_socket_pair_gets_its_replies(tmp_path):
    # Node's child_process (libuv) gives a child socket pairs, not pipes, for its stdio.
    host, tap_side = socket.socketpair()
    process = subprocess.Popen([*TAP, "--out", str(tmp_path / "socket.jsonl"), "--", sys.executable, "-m", "labserver"],
                               stdin=tap_side, stdout=tap_side, stderr=subprocess.DEVNULL)
    tap_side.close()
    with host:
        host.sendall((frames.dumps(frames.request("server/discover", id="over-a-socket")) + "\n").encode())
        host.settimeout(60)
        reply = b""
        while not reply.endswith(b"\n"):
            reply += host.recv(65536)
        host.shutdown(socket.SHUT_WR)
        assert json.loads(reply)["id"] == "over-a-socket"
        assert process.wait(timeout=30) == 0
    (exchange,) = Transcript.from_jsonl(tmp_path / "socket.jsonl")
    assert exchange.down == reply

"""mcpwire facing bad servers: dying, sending garbage, never answering.

Each case must end in a clear error within the wire's timeout and leave no process behind.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from test_hardening_support import (
    BINARY_GARBAGE,
    CLOSES_STDOUT,
    DIES_AFTER_READING,
    ENDLESS_LINE,
    KILLS_ITSELF,
    NEVER_ANSWERS,
    PeakRss,
    fake_http_server,
    live_children,
    python,
)

from mcpwire import HttpWire, ServerExited, StdioWire, WireError, WireTimeout, frames, process
from mcpwire import lines as lines_module

# These tests watch the lab's own process (its pid, memory, signals, children): start it cold.
LAB_STARTS_COLD = True

# Answers request 1 with a 3 MB line, then request 2 normally.
HUGE_THEN_SMALL = python(
    """
    import sys
    sys.stdin.readline()
    sys.stdout.write('{"jsonrpc":"2.0","id":1,"result":{"pad":"' + "x" * 3_000_000 + '"}}\\n')
    sys.stdin.readline()
    sys.stdout.write('{"jsonrpc":"2.0","id":2,"result":{}}\\n')
    sys.stdout.flush()
    sys.stdin.read()
    """
)


@pytest.fixture(autouse=True)
def no_leftover_processes():
    before = live_children()
    yield
    assert live_children() - before == set()


@pytest.mark.parametrize("stdin", [None, subprocess.DEVNULL], ids=["inherited", "devnull"])
def test_stop_ends_a_process_that_has_no_stdin_pipe(stdin):
    server = subprocess.Popen(NEVER_ANSWERS[:2] + ["import time; time.sleep(60)"], stdin=stdin)
    assert process.stop(server, 0.5) == -15


def test_a_server_that_exits_after_reading_is_reported_with_its_code_and_stderr():
    with StdioWire(DIES_AFTER_READING, timeout=5) as wire:
        wire.write(frames.request("tools/list", id=1))
        wire.write(frames.request("tools/list", id=2))
        for request_id in (1, 2):  # every request in flight learns the server is gone
            with pytest.raises(ServerExited, match="closed stdout before replying") as failure:
                wire.wait(request_id)
            assert failure.value.returncode == 3 and "giving up" in str(failure.value)


def test_a_server_killed_by_a_signal_says_so():
    with StdioWire(KILLS_ITSELF, timeout=5) as wire:
        with pytest.raises(ServerExited, match=r"exit code -9"):
            wire.request("tools/list")


def test_a_server_that_closes_stdout_but_keeps_running_is_an_error_not_a_hang():
    with StdioWire(CLOSES_STDOUT, timeout=5) as wire:
        with pytest.raises(ServerExited, match="closed stdout before replying to id 1"):
            wire.request("tools/list")
        wire.close(grace=0.2)  # it sleeps on, deaf to EOF


def test_binary_garbage_and_stray_replies_are_kept_apart_from_the_real_request():
    with StdioWire(BINARY_GARBAGE, timeout=0.5) as wire:
        with pytest.raises(WireTimeout, match=r"no reply to id 1 \(tools/list\) within 0.5 s"):
            wire.request("tools/list")
        garbage, stray, no_result = wire.read(timeout=2), wire.read(timeout=2), wire.read(timeout=2)
        assert "not JSON" in garbage.problem
        assert stray.id == 999 and stray.ok
        assert no_result.message == {"id": 1} and not no_result.ok


def test_an_endless_line_times_out_in_bounded_client_memory():
    with PeakRss(os.getpid()) as meter:
        with StdioWire(ENDLESS_LINE, timeout=1) as wire:
            with pytest.raises(WireTimeout, match=r"no reply to id 1 \(tools/list\) within 1 s"):
                wire.request("tools/list")
            wire.close(grace=0.2)  # it never reads its stdin again, so EOF alone would not stop it
    print(f"client memory growth while a server wrote one endless line: {meter.growth_mb:.1f} MB")
    assert meter.growth_mb < 64


def test_a_reply_over_the_line_limit_is_a_reply_that_says_so(monkeypatch):
    monkeypatch.setattr(lines_module, "MAX_LINE_BYTES", 1024 * 1024)
    with StdioWire(HUGE_THEN_SMALL, timeout=10) as wire:
        huge = wire.request("tools/list", id=1)
        assert not huge.ok and "line of 3000045 bytes, over mcpwire's limit of 1048576" in huge.problem
        assert wire.request("tools/list", id=2).ok  # the next line is read as usual


@pytest.mark.parametrize(
    ("mode", "error", "message"),
    [
        ("dies", WireError, r"no HTTP response to id 1 \(tools/list\)"),
        ("garbage", WireError, "complete status line"),
        ("silent", WireTimeout, r"no reply to id 1 \(tools/list\) within 0.5 s"),
    ],
)
def test_http_wire_against_a_bad_server(tmp_path, mode, error, message):
    with fake_http_server(mode, tmp_path) as (url, _):
        with pytest.raises(error, match=message):
            HttpWire(url, timeout=0.5).request("tools/list")


def test_http_wire_against_a_flood_stops_reading_in_bounded_memory(tmp_path):
    with fake_http_server("flood", tmp_path) as (url, _), PeakRss(os.getpid()) as meter:
        with pytest.raises(WireError, match="more than 16777216 bytes for one response") as failure:
            HttpWire(url, timeout=30).request("tools/list")
    assert not isinstance(failure.value, WireTimeout)  # stopped by the limit, long before the timeout
    print(f"client memory growth while a server flooded one response: {meter.growth_mb:.1f} MB")
    assert meter.growth_mb < 100


def test_http_wire_after_the_server_is_gone_cannot_connect(tmp_path):
    with fake_http_server("silent", tmp_path) as (url, server):
        process.stop(server, 0.5)
        with pytest.raises(WireError, match="cannot connect"):
            HttpWire(url, timeout=0.5).request("tools/list")


def test_a_lab_server_that_cannot_start_is_reported(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("a file where the notes folder should be")
    with pytest.raises(ServerExited, match="did not print its URL"):
        HttpWire.labserver("--notes", str(not_a_folder), startup_timeout=20)


@pytest.mark.parametrize(
    ("method", "version"),
    [
        ("tools/list\r\nX-Injected: 1", "2026-07-28"),
        ("tools/list", "2026-07-28\r\nX-Injected: 1"),
        ("tools/list💥", "2026-07-28"),
        ("tools/list", "2026-07-28 ☃"),
    ],
    ids=["crlf-method", "crlf-version", "emoji-method", "snowman-version"],
)
def test_a_body_can_never_inject_or_break_a_derived_header(http_wire, method, version):
    body = json.dumps(frames.request(method, meta={frames.PROTOCOL_VERSION_KEY: version}))
    reply = http_wire.send_raw(body)
    assert reply.status == 400 and reply.code in (-32020, -32022)  # refused at the MCP layer, with a JSON-RPC error
    head = http_wire.transcript[-1].up.split(b"\r\n\r\n")[0]
    names = [line.split(b":")[0] for line in head.split(b"\r\n")[1:]]
    assert b"X-Injected" not in names and head.isascii()


DEEP_THEN_VALID = python(
    """
    import sys
    sys.stdin.readline()
    sys.stdout.write("[" * 100_000 + "]" * 100_000 + "\\n")
    sys.stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\\n')
    sys.stdout.flush()
    sys.stdin.read()
    """
)


def test_a_deeply_nested_line_does_not_stop_the_reader():
    with StdioWire(DEEP_THEN_VALID, timeout=10) as wire:
        assert wire.request("tools/list").ok  # the reply after the deep line still arrives
        assert wire.read(timeout=2).problem == "reply is nested too deeply to parse"


ODD_BODIES = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"deep":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
    b'{"jsonrpc":"2.0","id":1,"method":["tools/call"],"params":{"name":"x"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list\xff","params":{}}',
]


@pytest.mark.parametrize("body", ODD_BODIES, ids=["deep", "method-list", "not-utf8"])
def test_send_raw_sends_any_body_and_returns_the_servers_answer(http_wire, stdio_wire, body):
    over_http = http_wire.send_raw(body)
    assert over_http.status == 400 and over_http.code in (-32700, -32600, -32020)
    over_stdio = stdio_wire.send_raw(body)
    assert over_stdio is not None and over_stdio.code in (-32700, -32600)

"""No server process is ever left behind, however a wire is closed."""

import os
import sys

import psutil
import pytest

from mcpwire import HttpWire, StdioWire, frames


def children():
    return [p for p in psutil.Process(os.getpid()).children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]


def python(code):
    return [sys.executable, "-c", code]


def test_100_start_stop_cycles_leave_no_process():
    before = {p.pid for p in children()}
    for n in range(100):
        wire = StdioWire(python("import sys; sys.stdin.read()"))
        if n % 2:
            wire.send(frames.notification("notifications/cancelled", {"requestId": n}))
        wire.close()
    assert {p.pid for p in children()} - before == set()


@pytest.mark.parametrize("code", [
    "import sys, time; sys.stdin.read(); time.sleep(60)",  # ignores EOF: needs SIGTERM
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); sys.stdin.read(); time.sleep(60)",  # needs SIGKILL
])
def test_stubborn_servers_are_escalated_and_reaped(code):
    wire = StdioWire(python(code))
    pid = wire._process.pid
    wire.close(grace=0.3)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_lab_server_closed_right_after_start_or_mid_request_is_gone():
    before = {p.pid for p in children()}
    quick = StdioWire.labserver()
    quick.close()
    busy = StdioWire.labserver()
    busy.write(frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 20}}))
    busy.close()
    with HttpWire.labserver() as http:
        assert http.request("tools/list").ok
    assert {p.pid for p in children()} - before == set()


def test_a_forgotten_wire_is_reaped_when_collected():
    wire = StdioWire(python("import sys; sys.stdin.read()"))
    process = wire._process
    del wire
    import gc
    gc.collect()
    assert process.wait(timeout=5) is not None

"""No server process is ever left behind, however a wire is closed."""

import os
import sys

import psutil
import pytest

from mcpwire import HttpWire, StdioWire, frames

# These tests watch the lab's own process (its pid, memory, signals, children): start it cold.
LAB_STARTS_COLD = True


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


# Spawns a helper that never reads stdin (EOF cannot end it), prints its pid, then exits at EOF itself.
SPAWNS_A_HELPER = ("import subprocess, sys; "
                   "helper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], stdin=subprocess.DEVNULL); "
                   "print(helper.pid, flush=True); sys.stdin.read()")


def test_a_server_runs_in_a_process_group_of_its_own_in_our_session():
    # Our session, not a new one: on Linux a new session is a scheduling group of its own, slow on a busy machine.
    with StdioWire(python("import sys; sys.stdin.read()")) as wire:
        assert os.getpgid(wire._process.pid) == wire._process.pid != os.getpgid(0)
        assert os.getsid(wire._process.pid) == os.getsid(0)


def test_closing_a_server_stops_the_helpers_it_spawned():
    wire = StdioWire(python(SPAWNS_A_HELPER))
    helper = psutil.Process(int(wire.read(timeout=10).raw))
    assert wire.close(grace=1) == 0  # the server itself still ends at the EOF step
    helper.wait(timeout=5)
    assert not helper.is_running() or helper.status() == psutil.STATUS_ZOMBIE


def test_the_eof_sigterm_sigkill_order_holds_for_the_whole_group():
    # The server ignores SIGTERM and so does its helper (SIG_IGN survives exec): only the group's SIGKILL ends them.
    code = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "helper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "print(helper.pid, flush=True); sys.stdin.read(); time.sleep(60)")
    wire = StdioWire(python(code))
    helper = psutil.Process(int(wire.read(timeout=10).raw))
    assert wire.close(grace=0.5) == -9
    assert not helper.is_running() or helper.status() == psutil.STATUS_ZOMBIE


def test_wires_closed_or_forgotten_leave_no_open_file_descriptors():
    import gc

    def open_fds():
        return len(os.listdir("/proc/self/fd"))
    before = open_fds()
    for n in range(10):
        wire = StdioWire(python("import sys; sys.stdin.read()"))
        if n % 2:
            wire.close()
        del wire
    gc.collect()
    assert open_fds() <= before

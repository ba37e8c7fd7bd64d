"""Following a session file while the tap writes it: whole lines only, new exchanges on each refresh."""

import json
import sys
import time

from mcpwire import StdioWire
from mcpwire.tap.follow import GrowingJsonl, method_totals
from mcpwire.widgets import TranscriptView

TAP = [sys.executable, "-m", "mcpwire.tap"]


def entry(method, frame_id):
    up = json.dumps({"jsonrpc": "2.0", "id": frame_id, "method": method})
    down = json.dumps({"jsonrpc": "2.0", "id": frame_id, "result": {}})
    return json.dumps({"transport": "stdio", "method": method, "id": frame_id, "up": up + "\n", "down": down + "\n",
                       "up_payloads": [up], "down_payloads": [down], "elapsed_ms": 1.0, "status": None,
                       "url": None, "times_up": [1.0], "times_down": [1.001]}) + "\n"


def refreshed_until(view, count, within=10.0):
    """The tap writes an exchange just after it forwards the reply: give it a moment."""
    deadline = time.monotonic() + within
    while True:
        view.refresh()
        if len(view.transcript) >= count or time.monotonic() > deadline:
            return [e.method for e in view.transcript]
        time.sleep(0.05)


def test_a_line_being_written_waits_for_its_end(tmp_path):
    path = tmp_path / "session.jsonl"
    growing = GrowingJsonl(path)
    assert growing.read_new() == []  # not there yet
    first, second = entry("tools/list", 1), entry("ping", 2)
    path.write_text(first + second[:20])
    assert [e.method for e in growing.read_new()] == ["tools/list"]
    with open(path, "a") as out:
        out.write(second[20:])
    assert [e.method for e in growing.read_new()] == ["ping"]
    assert growing.read_new() == []


def test_the_view_follows_a_live_tap_session_with_totals_per_method(tmp_path):
    path = tmp_path / "live.jsonl"
    with StdioWire([*TAP, "--out", str(path), "--", sys.executable, "-m", "labserver"], timeout=30) as wire:
        view = TranscriptView.follow(path, title="live")
        wire.request("tools/list")
        assert refreshed_until(view, 1) == ["tools/list"]
        wire.request("tools/list")
        wire.request("server/discover")
        assert refreshed_until(view, 3) == ["tools/list", "tools/list", "server/discover"]
    totals = method_totals(view.transcript)
    assert list(totals) == ["tools/list", "server/discover"] and totals["tools/list"]["exchanges"] == 2
    assert totals["tools/list"]["bytes_down"] == sum(e.bytes_down for e in wire.transcript if e.method == "tools/list")
    assert "server/discover" in view.per_method.value and repr(view) == "TranscriptView('live', 3 exchanges)"

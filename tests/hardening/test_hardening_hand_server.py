"""Lesson 23's server by hand, under the same generated junk as the lab's stdio front.

The frames are the lab's fuzzing pieces (test_hardening_frames): requests valid and mutated, notifications, client
replies, raw bytes, deep nesting, huge lines, lines that run on without a newline or end in CRLF. The hand server's
rules differ from the lab's in places (it leaves an unreadable id out, answers a client's reply with -32600, and
refuses JSON nested past Python's limit), so the oracle here is what every rule shares: the server never dies,
writes only strict JSON-RPC objects to stdout, never a null id and never an id it was not sent, never more replies
than lines, and answers the valid request after each batch.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hand_server import write_server
from test_hardening_frames import STDIO_PIECES, IdSource, id_key, render

BATCH_DEADLINE_S = 20
# The lines most likely to kill a server by hand, one in every batch: the generator draws them too, but rarely.
HARD_LINES = [b"[" * 50_000, b'{"a":' * 5_000, b"[" * 1_000 + b"]" * 1_000, b'{"jsonrpc":"2.0","id":1,"method":"' + b"x" * 1_100_000 + b'"}',
              b"\xff\xfe{}", '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'.encode("utf-16-be"), b"1e999", b"NaN",
              b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"divide","arguments":{"dividend":1e999,'
              b'"divisor":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
              b'"io.modelcontextprotocol/clientCapabilities":{}}}}']
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def strict(text):
    """A JSON value parsed as JSON defines it: Python's json would take NaN and Infinity."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


class HandServer:
    def __init__(self, folder):
        self.process = subprocess.Popen([sys.executable, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for raw in iter(self.process.stdout.readline, b""):
            self.lines.put(raw)

    def write(self, data):
        self.process.stdin.write(data)
        self.process.stdin.flush()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = HandServer(write_server(tmp_path_factory.mktemp("hand") / "my_server"))
    running.ids = IdSource("hs")
    yield running
    assert running.process.poll() is None, "the server exited during the fuzzing"
    running.process.stdin.close()
    assert running.process.wait(timeout=10) == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                 HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(STDIO_PIECES, min_size=1, max_size=8), hard=st.sampled_from(HARD_LINES), where=st.integers(0, 8))
def test_junk_never_kills_the_server_and_every_reply_is_strict_json_rpc(server, pieces, hard, where):
    rendered = [render(piece, server.ids) + piece.end for piece in pieces]
    rendered.insert(min(where, len(rendered)), b"\n" + hard + b"\n")  # a line of its own, whatever ran on before it
    sent_ids = set()
    for line in rendered:
        try:
            value = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and isinstance(value.get("id"), (str, int)) and not isinstance(value.get("id"), bool):
            sent_ids.add(id_key(value["id"]))
    sentinel = server.ids.next("text")
    batch = b"".join(rendered)
    if batch and not batch.endswith(b"\n"):
        batch += b"\n"  # a piece that ran on ends its line here, before the sentinel
    lines_in = batch.count(b"\n")
    frame = {"jsonrpc": "2.0", "id": sentinel, "method": "tools/call",
             "params": {"name": "shout", "arguments": {"text": "still here"}, "_meta": META}}
    server.write(batch + json.dumps(frame).encode() + b"\n")
    replies, deadline = [], time.monotonic() + BATCH_DEADLINE_S
    while True:
        try:
            raw = server.lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no answer to the request after the batch within {BATCH_DEADLINE_S} s") from None
        reply = strict(raw.decode("utf-8"))
        assert isinstance(reply, dict) and reply.get("jsonrpc") == "2.0" and ("result" in reply) != ("error" in reply), raw
        if reply.get("id") == sentinel:
            assert reply["result"]["content"][0]["text"] == "STILL HERE"
            break
        replies.append(reply)
    assert server.process.poll() is None, "the server exited"
    assert len(replies) <= lines_in, f"{len(replies)} replies to {lines_in} lines"
    for reply in replies:
        assert "id" not in reply or reply["id"] is not None, f"a null id: {reply}"
        assert "id" not in reply or id_key(reply["id"]) in sent_ids, f"an id that was never sent: {reply}"

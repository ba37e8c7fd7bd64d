"""Generated frames over stdio, valid and broken, written in batches to one server.

Each batch is written at once (lines may run on without a newline, end in CRLF, be
empty, huge, deeply nested or not UTF-8), followed by a valid request. Every line
must get what it is owed (test_hardening_frames.owed): exactly one reply for a
readable id, one id-null error for a broken line, nothing for a notification. The
server never exits, the valid request after each batch succeeds, and no file
outside the notes folder is created or changed.
"""

from __future__ import annotations

import contextlib
import json
import queue
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hardening_frames import STDIO_PIECES, IdSource, id_key, owed_for_lines, render
from test_hardening_support import Sandbox
from lab_harness import StdioLab, check_result, request

# These tests watch the lab's own process (its pid, memory, signals, children): start it cold.
LAB_STARTS_COLD = True

BATCH_DEADLINE_S = 20  # a healthy batch takes milliseconds; huge lines a second or two


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    sandbox = Sandbox(tmp_path_factory.mktemp("fuzz-stdio"))
    with contextlib.chdir(sandbox.cwd):  # a file written relative to the server's cwd would show up
        server = StdioLab("--notes", str(sandbox.notes))
    try:
        check_result("server/discover", server.call(request("era", "server/discover")))  # fixes the era: 2026
        server.ids = IdSource("fz")
        server.batches = 0
        yield server
        assert server.process.poll() is None, "the server exited during the fuzzing"
        assert sandbox.outside_notes() == sandbox.before, "a file outside the notes folder was created or changed"
    finally:
        server.stop()


def read_answers(lab: StdioLab, owed_replies, sentinel: str) -> tuple[dict, int]:
    """Read until the sentinel and every owed reply arrived; return the sentinel's reply and the id-null errors seen."""
    got = type(owed_replies)()
    nulls = 0
    sentinel_reply = None
    deadline = time.monotonic() + BATCH_DEADLINE_S
    while sentinel_reply is None or got != owed_replies:
        try:
            message = lab.next_message(max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            missing = owed_replies - got
            raise AssertionError(f"no answer within {BATCH_DEADLINE_S} s; still owed: {dict(missing)}") from None
        if "id" not in message:
            continue  # a notification
        if message["id"] is None:
            assert "error" in message, message
            nulls += 1
        elif message["id"] == sentinel:
            sentinel_reply = message
        else:
            key = id_key(message["id"])
            got[key] += 1
            assert got[key] <= owed_replies[key], f"a reply nobody was owed, or a second one: {message}"
    return sentinel_reply, nulls


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(pieces=st.lists(STDIO_PIECES, min_size=8, max_size=40))
@pytest.mark.slow
def test_every_line_gets_what_it_is_owed_and_the_server_keeps_serving(lab, pieces):
    with contextlib.suppress(queue.Empty):  # leftovers of a failed example would blur the next one
        while True:
            lab.lines.get_nowait()
    stream = b"".join(render(piece, lab.ids) + piece.end for piece in pieces)
    if not stream.endswith(b"\n"):
        stream += b"\n"  # the last line must not run on into the valid request
    owed_replies, owed_nulls = owed_for_lines(stream.split(b"\n")[:-1])
    lab.batches += 1
    sentinel = f"after-batch-{lab.batches}"
    lab.send_raw(stream + json.dumps(request(sentinel, "server/discover")).encode() + b"\n")

    sentinel_reply, nulls = read_answers(lab, owed_replies, sentinel)
    assert nulls == owed_nulls
    check_result("server/discover", sentinel_reply)
    assert lab.process.poll() is None

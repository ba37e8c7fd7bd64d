"""Exercises 00 and 01: each wrong answer a learner might write gets ✗ with a message naming its mistake.

Every row is the solution with one line that matters changed (or a mistake the lesson warns about);
the key phrases are what a learner must read to find that mistake. Right answers written differently pass.
"""

import json
import queue
import subprocess
import sys
import threading
import time

import pytest

import checks

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
PIPES = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}


# --- 00 task 1 · start the server ------------------------------------------------------------------

def start(command=("-m", "labserver"), **pipes):
    return lambda: subprocess.Popen([sys.executable, *command], **{**PIPES, **pipes})


START_RIGHT = [
    pytest.param(start(), id="bytes-pipes"),
    pytest.param(start(text=True), id="text-mode-pipes"),
    pytest.param(start(stderr=subprocess.PIPE), id="stderr-piped-too"),
]
START_WRONG = [
    pytest.param(start(stdout=None), ("proc.stdout is None", "stdout=subprocess.PIPE"), id="stdout-not-piped"),
    pytest.param(start(stdin=None), ("proc.stdin is None", "stdin=subprocess.PIPE"), id="stdin-not-piped"),
    pytest.param(start(("-m", "labserver", "--http")), ("started with --http",), id="http-front"),
    pytest.param(start(("-m", "no_such_module")), ("exited", "sys.executable"), id="wrong-module"),
    pytest.param(lambda: subprocess.Popen(f"{sys.executable} -m labserver", **PIPES),
                 ("raised FileNotFoundError", "as a list"), id="command-as-one-string"),
    pytest.param(lambda: subprocess.run([sys.executable, "-c", "pass"]), ("not a subprocess.Popen",), id="run-not-popen"),
    pytest.param(start(stderr=subprocess.STDOUT), ("log line", "stderr=subprocess.STDOUT", "stdout carries only"),
                 id="stderr-merged-into-stdout"),
]


@pytest.mark.parametrize("work", START_RIGHT)
def test_start_server_right_answers_pass(verdict, work):
    assert verdict(checks.check_start_server, work).startswith("✓ The lab server runs on stdio")


@pytest.mark.parametrize("work, phrases", START_WRONG)
def test_start_server_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_start_server, work)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


# --- 00 task 2 · the first frame -----------------------------------------------------------------

def frame(drop=(), **changes):
    built = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "search_notes", "arguments": {"query": "spindle"}, "_meta": dict(ENVELOPE)}}
    built.update(changes)
    for key in drop:
        built.pop(key)
    return built


def params(**changes):
    built = {"name": "search_notes", "arguments": {"query": "spindle"}, "_meta": dict(ENVELOPE)}
    built.update(changes)
    return {key: value for key, value in built.items() if value is not None}


FIRST_RIGHT = [
    pytest.param(lambda: frame(), id="solution"),
    pytest.param(lambda: frame(id="first"), id="string-id"),
    pytest.param(lambda: frame(params=params(arguments={"query": "Spindle", "limit": 3})), id="with-limit"),
]
FIRST_WRONG = [
    pytest.param(lambda: frame(drop=["id"]), ("sent nothing back", "notification", '"id"'), id="no-id"),
    pytest.param(lambda: frame(drop=["jsonrpc"]), ("error -32600", '"jsonrpc": "2.0"'), id="no-jsonrpc"),
    pytest.param(lambda: frame(jsonrpc="1.0"), ("error -32600",), id="jsonrpc-1.0"),
    pytest.param(lambda: frame(params=params(_meta=None)), ("missing _meta", "error -32602"), id="no-envelope"),
    pytest.param(lambda: frame(params=params(_meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"})),
                 ("clientCapabilities",), id="envelope-without-capabilities"),
    pytest.param(lambda: frame(params=params(_meta={**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2025-11-25"})),
                 ("-32022",), id="legacy-version"),
    pytest.param(lambda: frame(method="search_notes", params={"arguments": {"query": "spindle"}, "_meta": dict(ENVELOPE)}),
                 ("error -32601", "params.name"), id="tool-name-as-method"),
    pytest.param(lambda: frame(params=params(arguments={"q": "spindle"})), ("tool reported an error", "query"),
                 id="wrong-argument-name"),
    pytest.param(lambda: frame(params=params(name="read_note", arguments={"note_id": "welcome"})),
                 ("search_notes about 'spindle'",), id="another-tool"),
    pytest.param(lambda: json.dumps(frame()), ("returned text",), id="frame-as-json-text"),
    pytest.param(lambda: [frame()], ("a frame is a dict",), id="frame-in-a-list"),
    pytest.param(lambda: frame(id=1.5), ("error -32600",), id="fractional-id"),
    pytest.param(lambda: frame(params=params(arguments={"query": "spindle", "limit": "2"})),
                 ("do not match search_notes's inputSchema", "'2' is not of type 'integer'", "without quotes"),
                 id="number-in-quotes-the-sdk-coerces"),
    pytest.param(lambda: frame(params=params(arguments={"query": "spindlez"})), ("the query 'spindle'", "spindlez"),
                 id="query-misspelt"),
    pytest.param(lambda: frame(result={}), ("has a result member", "A request has four members"), id="request-with-a-result"),
    pytest.param(lambda: frame(error=None), ("has an error member",), id="request-with-a-null-error"),
    pytest.param(lambda: frame(params=params(_meta=None), _meta=dict(ENVELOPE)),
                 ("has a _meta member", "inside params"), id="envelope-next-to-params"),
    pytest.param(lambda: frame(params={"_meta": dict(ENVELOPE)}, name="search_notes", arguments={"query": "spindle"}),
                 ("a name member and an arguments member", "params.name and params.arguments"),
                 id="tool-name-and-arguments-at-the-top"),
    pytest.param(lambda: frame(protocolVersion="2026-07-28"),
                 ("has a protocolVersion member", "goes inside params"), id="version-at-the-top"),
]


@pytest.mark.parametrize("work", FIRST_RIGHT)
def test_first_frame_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_first_frame, work, lab).startswith("✓ The server ran your tools/call")


@pytest.mark.parametrize("work, phrases", FIRST_WRONG)
def test_first_frame_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_first_frame, work, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


# --- 00 task 3 · send one frame, read one reply -----------------------------------------------------

def send_one(*, newline=True, flush=True, compact=True, parse=True, encode=True):
    def work(proc, message):
        text = json.dumps(message, separators=(",", ":")) if compact else json.dumps(message, indent=2)
        text += "\n" if newline else ""
        proc.stdin.write(text.encode() if encode else text)
        if flush:
            proc.stdin.flush()
        line = proc.stdout.readline()
        return json.loads(line) if parse else line
    return work


def send_one_with_os_write(proc, message):
    import os
    os.write(proc.stdin.fileno(), json.dumps(message).encode() + b"\n")
    return json.loads(proc.stdout.readline())


def send_one_by_communicate(proc, message):
    """communicate() writes, closes stdin and waits for the exit: the lab answers, a session is over."""
    out, _ = proc.communicate(json.dumps(message).encode() + b"\n", timeout=10)
    return json.loads(out.splitlines()[0])


def send_one_closing_stdin(proc, message):
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.close()
    return json.loads(proc.stdout.readline())


def send_one_hard_coded(proc, message):
    mine = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "search_notes", "arguments": {"query": "spindle"}, "_meta": ENVELOPE}}
    proc.stdin.write(json.dumps(mine).encode() + b"\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def send_one_then(step):
    def work(proc, message):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        step(proc)
        return reply
    return work


def send_one_with_a_blank_line(proc, message):
    proc.stdin.write((json.dumps(message) + "\n\n").encode())
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def send_one_writing_twice(proc, message):
    """Writes the frame, then writes it again before reading: the server runs the request twice."""
    line = json.dumps(message).encode() + b"\n"
    proc.stdin.write(line)
    proc.stdin.flush()
    proc.stdin.write(line)
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def send_one_sorted_keys(proc, message):
    proc.stdin.write((json.dumps(message, sort_keys=True) + "\n").encode())
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def send_one_to_its_own_server(proc, message):
    """Starts a second server and talks to it: the check's server never hears a thing."""
    mine = subprocess.Popen([sys.executable, "-m", "labserver"], **PIPES)
    try:
        mine.stdin.write(json.dumps(message).encode() + b"\n")
        mine.stdin.flush()
        return json.loads(mine.stdout.readline())
    finally:
        mine.stdin.close()
        mine.wait(timeout=10)
        mine.stdout.close()


def send_one_crlf(proc, message):
    proc.stdin.write((json.dumps(message) + "\r\n").encode())
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


SEND_RIGHT = [
    pytest.param(send_one(), id="solution"),
    pytest.param(send_one_with_os_write, id="os-write-unbuffered"),
    pytest.param(send_one_crlf, id="crlf-line-end"),
    pytest.param(send_one_sorted_keys, id="default-separators-sorted-keys"),
]
SEND_WRONG = [
    pytest.param(send_one(flush=False), ("received nothing", "flushed"), id="no-flush"),
    pytest.param(send_one(newline=False), ("no newline", "one line"), id="no-newline"),
    pytest.param(send_one(compact=False), ("error -32700", "compact JSON"), id="pretty-printed"),
    pytest.param(send_one(parse=False), ("returned the raw line",), id="raw-line-returned"),
    pytest.param(send_one(encode=False), ("TypeError", "takes bytes"), id="str-to-a-bytes-pipe"),
    pytest.param(send_one_by_communicate, ("closed the server's stdin", "keep stdin open"), id="communicate"),
    pytest.param(send_one_closing_stdin, ("closed the server's stdin", "Flushing sends the bytes"),
                 id="stdin-closed-instead-of-flushed"),
    pytest.param(send_one_hard_coded, ("not the frame it was given", "tools/call", "server/discover"),
                 id="ignores-its-frame"),
    pytest.param(send_one_to_its_own_server, ("received nothing", "another server", "proc"),
                 id="starts-its-own-server"),
    pytest.param(send_one_writing_twice, ("wrote the frame 2 times", "second reply"), id="frame-written-twice"),
    pytest.param(send_one_with_a_blank_line, ("blank line", "one newline"), id="frame-then-a-blank-line"),
    pytest.param(send_one_then(lambda proc: proc.stdout.close()), ("closed proc.stdout", "next reply"),
                 id="stdout-closed-after-reading"),
    pytest.param(send_one_then(lambda proc: proc.terminate()), ("stopped the server", "caller"),
                 id="server-terminated-after-reading"),
    pytest.param(send_one_then(lambda proc: proc.kill()), ("stopped the server",), id="server-killed-after-reading"),
]


@pytest.mark.parametrize("work", SEND_RIGHT)
def test_send_one_right_answers_pass(verdict, work):
    assert verdict(checks.check_send_one, work).startswith("✓ send_one wrote one line")


@pytest.mark.parametrize("work, phrases", SEND_WRONG)
def test_send_one_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_send_one, work)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


# --- 01 task 1 · request, notification or response -----------------------------------------------------

def kind_of(*, by_id_value=False, by_result=False, method_only=False):
    def work(message):
        if by_id_value:
            if message.get("id") is None:
                return "notification"
            return "request" if "method" in message else "response"
        if by_result:
            if "result" in message:
                return "response"
            return "request" if "id" in message else "notification"
        if method_only:
            return "request" if "method" in message else "response"
        if "method" in message:
            return "request" if "id" in message else "notification"
        return "response"
    return work


KIND_RIGHT = [
    pytest.param(kind_of(), id="solution"),
    pytest.param(lambda m: "response" if "method" not in m else ("notification" if "id" not in m else "request"),
                 id="written-the-other-way-round"),
    pytest.param(lambda m: {(True, True): "request", (True, False): "notification"}.get(("method" in m, "id" in m),
                                                                                         "response"), id="table"),
    pytest.param(lambda m: "response" if "result" in m or "error" in m else ("request" if "id" in m else "notification"),
                 id="response-keys-first"),
]
KIND_WRONG = [
    pytest.param(kind_of(by_id_value=True), ("kind_of says 'notification'", "null", "id member"),
                 id="null-id-taken-for-a-notification"),
    pytest.param(kind_of(by_result=True), ("an error reply is a response too",), id="error-replies-forgotten"),
    pytest.param(kind_of(method_only=True), ("kind_of says 'request'", "no id: nobody answers it"),
                 id="every-method-is-a-request"),
    pytest.param(lambda m: "request" if "id" in m else "notification", ("It is a response",), id="any-id-is-a-request"),
    pytest.param(lambda m: "request" if m["id"] else "notification", ("raised KeyError",), id="reads-a-missing-key"),
    pytest.param(lambda m: "Request" if "method" in m and "id" in m else kind_of()(m), ("'Request'",),
                 id="capitalised"),
    pytest.param(lambda m: ("request" if "id" in m else "notification") if "params" in m else "response",
                 ("kind_of says 'response'", "makes params optional"), id="params-taken-for-a-request"),
    pytest.param(lambda m: ("request" if m.get("id") is not None else "notification") if "method" in m else "response",
                 ("kind_of says 'notification'", "only when the id member is absent"),
                 id="null-id-request-taken-for-a-notification"),
    pytest.param(lambda m: ("notification" if m["method"].startswith("notifications/") else "request")
                 if "method" in m else "response",
                 ("kind_of says 'request'", "tools/call", "no id", "whatever its method"),
                 id="sorted-by-method-name"),
    pytest.param(lambda m: "response" if "result" in m or "error" in m
                 else "notification" if m.get("method", "").startswith("notifications/") else "request",
                 ("kind_of says 'request'", "whatever its method"), id="response-keys-then-method-name"),
]


@pytest.mark.parametrize("work", KIND_RIGHT)
def test_message_kinds_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_message_kinds, work, lab).startswith("✓ kind_of sorted 10 real messages")


@pytest.mark.parametrize("work, phrases", KIND_WRONG)
def test_message_kinds_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_message_kinds, work, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


# --- 01 task 2 · the stdio loop -------------------------------------------------------------------------

def pump(stream, lines):
    for raw in iter(stream.readline, b""):
        lines.put(raw)


def send_and_match(*, flush=True, newline=True, skip_notes=True, wait_for_all=False, deadline=True,
                   by_position=False, raw=False, results_only=False, close=False, per_line=False,
                   bare_timeout=False, progress_only=False):
    def work(proc, frames, timeout=5.0):
        lines = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        for frame in frames:
            proc.stdin.write(json.dumps(frame, separators=(",", ":")).encode() + (b"\n" if newline else b""))
        if flush:
            proc.stdin.flush()
        if close:
            proc.stdin.close()
        waiting = [f.get("id") for f in frames if "id" in f or wait_for_all]
        replies, order = {}, list(waiting)
        end = time.monotonic() + timeout
        while waiting:
            try:
                wait = timeout if per_line else max(0.0, end - time.monotonic()) if deadline else None
                line = lines.get(timeout=wait)
            except queue.Empty:
                if bare_timeout:
                    raise TimeoutError from None
                raise TimeoutError(f"no reply for {waiting}") from None
            message = json.loads(line)
            if progress_only:
                if message.get("method") == "notifications/progress":
                    continue
            elif skip_notes and "method" in message or results_only and "result" not in message:
                continue
            key = order[len(replies)] if by_position else message["id"]
            if key in waiting:
                waiting.remove(key)
                replies[key] = line if raw else message
        return replies
    return work


def loop_with_select(proc, frames, timeout=5.0):
    import os
    import select
    proc.stdin.write(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
    proc.stdin.flush()
    waiting, replies, rest = {f["id"] for f in frames if "id" in f}, {}, b""
    end = time.monotonic() + timeout
    while waiting:
        left = end - time.monotonic()
        if left <= 0 or not select.select([proc.stdout.fileno()], [], [], left)[0]:
            raise TimeoutError(f"no reply for {waiting}")
        *lines, rest = (rest + os.read(proc.stdout.fileno(), 65536)).split(b"\n")
        for message in map(json.loads, lines):
            if message.get("id") in waiting and "method" not in message:
                waiting.discard(message["id"])
                replies[message["id"]] = message
    return replies


LOOP_RIGHT = [
    pytest.param(send_and_match(), id="solution"),
    pytest.param(loop_with_select, id="select-and-os-read"),
]
LOOP_WRONG = [
    pytest.param(send_and_match(flush=False), ("received nothing", "flushed"), id="no-flush"),
    pytest.param(send_and_match(newline=False), ("no newline",), id="no-newline"),
    pytest.param(send_and_match(skip_notes=False), ("KeyError", "notifications/progress"), id="progress-not-skipped"),
    pytest.param(send_and_match(wait_for_all=True), ("Every request was answered", "TimeoutError",
                                                      "a notification gets no reply"), id="waits-for-the-notification"),
    pytest.param(send_and_match(by_position=True), ("answers id", "never by position"), id="matched-by-position"),
    pytest.param(send_and_match(raw=True), ("not a parsed reply",), id="raw-lines-filed"),
    pytest.param(send_and_match(deadline=False), ("a server that never answers", "still waiting"),
                 id="no-deadline"),
    pytest.param(send_and_match(results_only=True), ("Every request was answered", "TimeoutError",
                                                      "An error reply answers its request"),
                 id="error-replies-not-taken-for-replies"),
    pytest.param(send_and_match(flush=False, close=True), ("closed the server's stdin", "keeps stdin open"),
                 id="stdin-closed-instead-of-flushed"),
    pytest.param(send_and_match(per_line=True), ("writes a notification every", "whole call", "each line"),
                 id="timeout-per-line-not-overall"),
    pytest.param(send_and_match(bare_timeout=True), ("does not name", "'unanswered'"),
                 id="timeout-error-without-the-ids"),
    pytest.param(send_and_match(progress_only=True), ("KeyError", "notifications/message", "whichever method"),
                 id="skips-only-progress-notifications"),
]


@pytest.mark.parametrize("work", LOOP_RIGHT)
def test_stdio_loop_right_answers_pass(verdict, work):
    assert verdict(checks.check_stdio_loop, work).startswith("✓ Your loop filed all four replies")


@pytest.mark.parametrize("work, phrases", LOOP_WRONG)
def test_stdio_loop_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_stdio_loop, work)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


def test_a_blocking_loop_is_stopped_within_five_seconds(verdict):
    """The issue's bound: a wrong answer that blocks costs the learner under 5 s once the server is up."""
    from checks import ex01_stdio
    assert ex01_stdio.TIMEOUT_S + ex01_stdio.GRACE_S < 5
    assert ex01_stdio.SILENT_TIMEOUT_S + ex01_stdio.GRACE_S < 5

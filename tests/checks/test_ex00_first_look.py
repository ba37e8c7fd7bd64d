"""Exercise 00's checks (start the server, the first frame, send one frame): right answers pass, wrong ones name their mistake.

Every row is the solution with one line that matters changed (or a mistake the lesson warns about);
the key phrases are what a learner must read to find that mistake. Right answers written differently pass.
"""

import json
import os
import subprocess
import sys

import pytest

import checks
from checks import ex00_first_look as first_look

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
PIPES = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}


# --- 00 task 1 · start the server ------------------------------------------------------------------

def start(command=("-m", "labserver"), **pipes):
    return lambda: subprocess.Popen([sys.executable, *command], **{**PIPES, **pipes})


def started_then(step):
    """The solution, then one more thing done to the process before it is returned."""
    def work():
        proc = start()()
        try:
            step(proc)
        except Exception:
            proc.kill()
            raise
        return proc
    return work


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
    # Found by a blind learner run: each of these was blamed on the command, which was right.
    pytest.param(started_then(lambda proc: proc.stdin.close()), ("closed proc.stdin before returning",
                                                                 "both pipes open"), id="stdin-closed"),
    pytest.param(started_then(lambda proc: proc.stdout.close()), ("closed proc.stdout before returning",
                                                                  "both pipes open"), id="stdout-closed"),
    pytest.param(started_then(lambda proc: (proc.kill(), proc.wait())), ("stopped by signal 9",
                                                                         "still running"), id="killed"),
    pytest.param(started_then(lambda proc: proc.wait(timeout=0.5)), ("raised TimeoutExpired", "waited 0.5 s",
                                                                     "runs until its stdin closes",
                                                                     "as soon as it is started"), id="waits-for-the-exit"),
    pytest.param(started_then(lambda proc: (proc.stdin.write(b'{"jsonrpc":"2.0","id":99,"method":"ping"}\n'),
                                            proc.stdin.flush())),
                 ("answers id 99, not the check's server/discover (id 1)", "a frame of its own"), id="writes-a-ping-first"),
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
    pytest.param(lambda: frame(params=params(arguments={"query": "spindle", "limit": 3})), id="with-limit"),
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
    # Found by a blind learner run: the task says the query "spindle", and these passed.
    pytest.param(lambda: frame(params=params(arguments={"query": "Spindle"})), ("the query 'spindle'", '"Spindle"'),
                 id="query-capitalised"),
    pytest.param(lambda: frame(params=params(arguments={"query": " spindle "})), ("the query 'spindle'", '" spindle "'),
                 id="query-padded"),
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
    os.write(proc.stdin.fileno(), json.dumps(message, separators=(",", ":")).encode() + b"\n")
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
    proc.stdin.write((json.dumps(message, sort_keys=True, separators=(",", ":")) + "\n").encode())
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
    proc.stdin.write((json.dumps(message, separators=(",", ":")) + "\r\n").encode())
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def send_one_default_separators(proc, message):
    """One line, but json.dumps's default ", " and ": " (found by a blind learner): the task asks for compact JSON."""
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def send_one_without_the_id(proc, message):
    """Drops the id (found by a blind learner): a notification, which the server never answers."""
    proc.stdin.write(json.dumps({key: value for key, value in message.items() if key != "id"},
                                separators=(",", ":")).encode() + b"\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def send_one_as_bytes_by_hand(proc, message):
    """Right, written differently: the text built with the kit's own compact writer, the line read by iteration."""
    from mcpwire import frames
    proc.stdin.write(frames.dumps(message).encode("utf-8") + b"\n")
    proc.stdin.flush()
    return json.loads(next(iter(proc.stdout)))


def send_one_as_python_text(proc, message):
    proc.stdin.write((str(message) + "\n").encode())
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


SEND_RIGHT = [
    pytest.param(send_one(), id="solution"),
    pytest.param(send_one_with_os_write, id="os-write-unbuffered"),
    pytest.param(send_one_crlf, id="crlf-line-end"),
    pytest.param(send_one_sorted_keys, id="compact-sorted-keys"),
    pytest.param(send_one_as_bytes_by_hand, id="kit-dumps-and-iteration"),
]
SEND_WRONG = [
    pytest.param(send_one(flush=False), ("received nothing", "flushed"), id="no-flush"),
    pytest.param(send_one(newline=False), ("no newline", "one line"), id="no-newline"),
    pytest.param(send_one(compact=False), ("error -32700", "compact JSON"), id="pretty-printed"),
    pytest.param(send_one(parse=False), ("returned the raw line",), id="raw-line-returned"),
    pytest.param(send_one(encode=False), ("TypeError", "takes bytes"), id="str-to-a-bytes-pipe"),
    # Found by the learner run of round 3: Python text was blamed on a frame split over several lines.
    pytest.param(send_one_as_python_text, ("error -32700", "str() of a dict writes single quotes", "json.dumps"),
                 id="str-of-the-frame"),
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
    pytest.param(send_one_default_separators, ('{"jsonrpc": "2.0", "id": 1', "compact JSON", "separators=(\",\", \":\")"),
                 id="default-separators"),
    # Found by a blind learner run: a raw TimeoutExpired that printed the check's relay script, and no hint.
    pytest.param(send_one_then(lambda proc: proc.wait(timeout=1)), ("raised TimeoutExpired", "waited 1 s",
                                                                    "runs until its stdin closes", "caller's job"),
                 id="waits-for-the-server-to-exit"),
]


@pytest.mark.parametrize("work", SEND_RIGHT)
def test_send_one_right_answers_pass(verdict, work):
    assert verdict(checks.check_send_one, work).startswith("✓ send_one wrote one line")


@pytest.mark.parametrize("work, phrases", SEND_WRONG)
def test_send_one_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_send_one, work)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


# --- single answers, the exact words a learner reads -------------------------------------------------

def stub(*args):
    raise NotImplementedError("your code here")


def compact(frame):
    return (json.dumps(frame, separators=(",", ":")) + "\n").encode()


def test_start_server_right(verdict):
    assert verdict(checks.check_start_server, start()).startswith("✓ The lab server runs on stdio")


def test_start_server_without_a_stdin_pipe(verdict):
    out = verdict(checks.check_start_server, start(stdin=None))
    assert out.startswith("✗ proc.stdin is None") and "stdin=subprocess.PIPE" in out


def test_start_server_over_http_instead_of_stdio(verdict):
    out = verdict(checks.check_start_server, start(("-m", "labserver", "--http")))
    assert out.startswith("✗") and "started with --http" in out


def search_frame(**changes):
    frame = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "search_notes", "arguments": {"query": "spindle"}, "_meta": dict(ENVELOPE)}}
    frame.update(changes)
    return {key: value for key, value in frame.items() if value is not None}


def test_first_frame_right(verdict, lab):
    out = verdict(checks.check_first_frame, search_frame, lab)
    assert out.startswith("✓ The server ran your tools/call") and "found 5 notes" in out


def test_first_frame_without_envelope(verdict, lab):
    frame = search_frame(params={"name": "search_notes", "arguments": {"query": "spindle"}})
    out = verdict(checks.check_first_frame, lambda: frame, lab)
    assert "params: missing _meta" in out and "error -32602" in out and "io.modelcontextprotocol/clientCapabilities" in out


def test_first_frame_without_jsonrpc(verdict, lab):
    out = verdict(checks.check_first_frame, lambda: search_frame(jsonrpc=None), lab)
    assert "error -32600" in out and '"jsonrpc": "2.0"' in out


def send_one_right(proc, frame):
    proc.stdin.write(compact(frame))
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def test_send_one_right(verdict):
    assert verdict(checks.check_send_one, send_one_right).startswith("✓ send_one wrote one line")


def test_send_one_pretty_printed(verdict):
    def pretty(proc, frame):
        proc.stdin.write((json.dumps(frame, indent=2) + "\n").encode())
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())
    out = verdict(checks.check_send_one, pretty)
    assert "error -32700" in out and "compact JSON" in out


def test_send_one_without_flush(verdict, monkeypatch):
    monkeypatch.setattr(first_look, "REPLY_WAIT_S", 2)

    def unflushed(proc, frame):
        proc.stdin.write(compact(frame))
        return json.loads(proc.stdout.readline())
    out = verdict(checks.check_send_one, unflushed)
    assert "still waiting" in out and "received nothing" in out and "flushed" in out


def test_send_one_that_drops_the_id_is_told_its_frame_went_unanswered(verdict, monkeypatch):
    # Found by a blind learner run: the server answers no notification, and the hint was about reading one line.
    monkeypatch.setattr(first_look, "REPLY_WAIT_S", 2)
    out = verdict(checks.check_send_one, send_one_without_the_id)
    assert out.startswith("✗ send_one was still waiting") and "not the frame send_one was given" in out, out
    assert "A frame without an id is a notification" in out and "Read one line" not in out, out


# --- unfinished work ---------------------------------------------------------------------------------

@pytest.mark.parametrize("check, server", [
    pytest.param(checks.check_start_server, None, id="start_server"),
    pytest.param(checks.check_first_frame, "lab", id="first_frame"),
    pytest.param(checks.check_send_one, None, id="send_one"),
])
def test_an_unfinished_task_is_not_done_yet(verdict, request, check, server):
    shared = (request.getfixturevalue(server),) if server else ()
    assert verdict(check, stub, *shared).startswith("not done yet: ")


def test_a_lab_server_that_cannot_start_is_said_plainly_and_nothing_passes(verdict, monkeypatch):
    monkeypatch.setattr(checks.servers, "LAB_COMMAND", [sys.executable, "-c", "raise SystemExit(3)"])
    out = verdict(checks.check_send_one, lambda proc, frame: {})
    assert "The lab server did not start" in out and "Restart the kernel" in out and "✓" not in out

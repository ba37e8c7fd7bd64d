"""Exercise 01's checks (request, notification or response; the stdio loop): right answers pass, wrong ones name their mistake."""

import json
import os
import queue
import select
import sys
import threading
import time

import pytest

import checks
from checks import ex01_stdio as stdio

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
    assert verdict(checks.check_message_kinds, work, lab).startswith("✓ kind_of sorted 15 messages")


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
                   bare_timeout=False, progress_only=False, file_notes=False, payload=False, text=False):
    def work(proc, frames, timeout=5.0):
        lines = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        for frame in frames:
            line = json.dumps(frame, separators=(",", ":")) + ("\n" if newline else "")
            proc.stdin.write(line if text else line.encode())
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
            elif file_notes and "method" in message:
                replies[message.get("id")] = message
                continue
            elif skip_notes and "method" in message or results_only and "result" not in message:
                continue
            key = order[len(replies)] if by_position else message["id"]
            if key in waiting:
                waiting.remove(key)
                replies[key] = line if raw else message.get("result", message.get("error")) if payload else message
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


def loop_keyed_by_text(*, file_as_text):
    """Matches ids as text: 2 and "2" become one key, so one reply is lost or filed under the other request."""
    def work(proc, frames, timeout=5.0):
        lines = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        proc.stdin.write(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
        proc.stdin.flush()
        sent = {str(f["id"]): f["id"] for f in frames if "id" in f}
        waiting, replies = set(sent), {}
        end = time.monotonic() + timeout
        while waiting:
            try:
                message = json.loads(lines.get(timeout=max(0.0, end - time.monotonic())))
            except queue.Empty:
                raise TimeoutError(f"no reply for {waiting}") from None
            key = str(message.get("id"))
            if "method" not in message and key in waiting:
                waiting.discard(key)
                replies[key if file_as_text else sent[key]] = message
        return replies
    return work


def loop_with_ids_in_a_list(proc, frames, timeout=5.0):
    """Another style: a list of ids still waiting, and a type-exact membership test."""
    lines = queue.Queue()
    threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
    for frame in frames:
        proc.stdin.write((json.dumps(frame, ensure_ascii=False) + "\n").encode("utf-8"))
    proc.stdin.flush()
    waiting = [frame["id"] for frame in frames if "id" in frame]
    replies = {}
    end = time.monotonic() + timeout
    while waiting:
        try:
            message = json.loads(lines.get(timeout=max(0.0, end - time.monotonic())))
        except queue.Empty:
            raise TimeoutError(f"unanswered: {waiting}") from None
        match = next((i for i, wanted in enumerate(waiting)
                      if "method" not in message and type(wanted) is type(message.get("id"))
                      and wanted == message.get("id")), None)
        if match is not None:
            replies[waiting.pop(match)] = message
    return replies


def loop_one_frame_at_a_time(*, deadline=True):
    """A blind learner run: each frame is written, then its reply awaited, before the next frame goes out."""
    def work(proc, frames, timeout=5.0):
        lines = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        replies, end = {}, time.monotonic() + timeout
        for frame in frames:
            proc.stdin.write(json.dumps(frame).encode() + b"\n")
            proc.stdin.flush()
            while "id" in frame and frame["id"] not in replies:
                try:
                    message = json.loads(lines.get(timeout=max(0.0, end - time.monotonic()) if deadline else None))
                except queue.Empty:
                    raise TimeoutError(f"no reply for {frame['id']!r}") from None
                if "method" not in message:
                    replies[message["id"]] = message
        return replies
    return work


def loop_flushing_each_frame(proc, frames, timeout=5.0):
    """Right, written differently: each frame flushed on its own, and none awaited before the last is out."""
    lines = queue.Queue()
    threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
    for frame in frames:
        proc.stdin.write(json.dumps(frame).encode() + b"\n")
        proc.stdin.flush()
    waiting, replies = [f["id"] for f in frames if "id" in f], {}
    end = time.monotonic() + timeout
    while waiting:
        try:
            message = json.loads(lines.get(timeout=max(0.0, end - time.monotonic())))
        except queue.Empty:
            raise TimeoutError(f"no reply for {waiting}") from None
        found = [i for i, wanted in enumerate(waiting)
                 if "method" not in message and json.dumps(wanted) == json.dumps(message.get("id"))]
        if found:
            replies[waiting.pop(found[0])] = message
    return replies


LOOP_RIGHT = [
    pytest.param(send_and_match(), id="solution"),
    pytest.param(loop_flushing_each_frame, id="flush-after-each-frame"),
    pytest.param(loop_with_select, id="select-and-os-read"),
    pytest.param(loop_with_ids_in_a_list, id="ids-in-a-list-type-checked"),
]
LOOP_WRONG = [
    # Found by a hidden case: ids turned into text match 2 and "2" alike (JSON-RPC ids keep their type).
    pytest.param(loop_keyed_by_text(file_as_text=False), ("no reply under 2", "keep their type"),
                 id="ids-matched-as-text"),
    pytest.param(loop_keyed_by_text(file_as_text=True), ("no reply under 2", "keep their type"),
                 id="ids-turned-into-text-keys"),
    pytest.param(send_and_match(flush=False), ("received nothing", "flushed"), id="no-flush"),
    pytest.param(send_and_match(newline=False), ("no newline",), id="no-newline"),
    pytest.param(send_and_match(skip_notes=False), ("KeyError", "notifications/progress"), id="progress-not-skipped"),
    pytest.param(send_and_match(wait_for_all=True), ("Every request was answered", "TimeoutError",
                                                      "a notification gets no reply"), id="waits-for-the-notification"),
    pytest.param(send_and_match(by_position=True), ("answers id", "never by position"), id="matched-by-position"),
    pytest.param(send_and_match(raw=True), ("not a parsed reply",), id="raw-lines-filed"),
    pytest.param(send_and_match(deadline=False), ("never answered 'unanswered'", "still waiting"),
                 id="no-deadline"),
    pytest.param(send_and_match(results_only=True), ("Every request was answered", "TimeoutError",
                                                      "An error reply answers its request"),
                 id="error-replies-not-taken-for-replies"),
    pytest.param(send_and_match(flush=False, close=True), ("closed the server's stdin", "keeps stdin open"),
                 id="stdin-closed-instead-of-flushed"),
    pytest.param(send_and_match(per_line=True), ("ran past the deadline", "whole call", "each line"),
                 id="timeout-per-line-not-overall"),
    pytest.param(send_and_match(bare_timeout=True), ("does not name", "'unanswered'"),
                 id="timeout-error-without-the-ids"),
    pytest.param(send_and_match(progress_only=True), ("KeyError", "notifications/message", "whichever method"),
                 id="skips-only-progress-notifications"),
    # A blind learner run: the notifications filed under their missing id, and the payload filed for the reply.
    pytest.param(send_and_match(file_notes=True), ("also has the key None", "no id"), id="notifications-filed-under-none"),
    pytest.param(send_and_match(payload=True), ("not the whole reply", "result"), id="payload-filed-for-the-reply"),
    pytest.param(send_and_match(text=True), ("raised TypeError", "before one byte", "bytes"), id="str-to-a-binary-pipe"),
    # A blind learner run: a reply awaited after each frame passed while the lab answered at once.
    pytest.param(loop_one_frame_at_a_time(), ("your first 1 frame(s)", "waited for a reply before it wrote the next",
                                              "Write every frame first"), id="one-frame-at-a-time"),
    pytest.param(loop_one_frame_at_a_time(deadline=False), ("your first 1 frame(s)", "waited for a reply"),
                 id="one-frame-at-a-time-without-deadline"),
]


@pytest.mark.parametrize("work", LOOP_RIGHT)
def test_stdio_loop_right_answers_pass(verdict, work):
    assert verdict(checks.check_stdio_loop, work).startswith("✓ Your loop filed all four replies under their ids, 2 and '2' kept apart")


@pytest.mark.parametrize("work, phrases", LOOP_WRONG)
def test_stdio_loop_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_stdio_loop, work)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


def test_a_blocking_loop_is_stopped_within_five_seconds(verdict):
    """The issue's bound: a wrong answer that blocks costs the learner under 5 s once the server is up."""
    assert stdio.TIMEOUT_S + stdio.GRACE_S < 5
    assert stdio.SILENT_TIMEOUT_S + stdio.GRACE_S < 5
    assert stdio.PARTIAL_TIMEOUT_S + stdio.GRACE_S < 5


# --- single answers, the exact words a learner reads -------------------------------------------------

def stub(*args):
    raise NotImplementedError("your code here")


def compact(frame):
    return (json.dumps(frame, separators=(",", ":")) + "\n").encode()


def kind_right(message):
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "response"


def test_message_kinds_right(verdict, lab):
    assert verdict(checks.check_message_kinds, kind_right, lab).startswith("✓ kind_of sorted 15 messages")


def test_message_kinds_any_id_is_a_request(verdict, lab):
    out = verdict(checks.check_message_kinds, lambda m: "request" if "id" in m else "notification", lab)
    assert "It is a response: it has an id and a result" in out


def test_message_kinds_error_replies_forgotten(verdict, lab):
    def results_only(message):
        return "response" if "result" in message else kind_right(message)
    out = verdict(checks.check_message_kinds, lambda m: "notification" if "error" in m else results_only(m), lab)
    assert "an error reply is a response too" in out


def loop_right(proc, frames, timeout=5.0):
    for frame in frames:
        proc.stdin.write(compact(frame))
    proc.stdin.flush()
    waiting = {frame["id"] for frame in frames if "id" in frame}
    replies, unfinished = {}, b""
    deadline = time.monotonic() + timeout
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            raise TimeoutError(f"no reply for {waiting}")
        *lines, unfinished = (unfinished + os.read(proc.stdout.fileno(), 65536)).split(b"\n")
        for message in map(json.loads, lines):
            if "method" not in message and message.get("id") in waiting:
                waiting.discard(message["id"])
                replies[message["id"]] = message
    return replies


def test_stdio_loop_right(verdict):
    assert verdict(checks.check_stdio_loop, loop_right).startswith("✓ Your loop filed all four replies under their ids, 2 and '2' kept apart")


def test_stdio_loop_matching_by_position(verdict):
    def by_position(proc, frames, timeout=5.0):
        for frame in frames:
            proc.stdin.write(compact(frame))
        proc.stdin.flush()
        ids = [frame["id"] for frame in frames if "id" in frame]
        replies = []
        while len(replies) < len(ids):
            message = json.loads(proc.stdout.readline())
            if "method" not in message:
                replies.append(message)
        return dict(zip(ids, replies))
    out = verdict(checks.check_stdio_loop, by_position)
    assert "The reply you filed under id 'slow' answers id" in out and "never by position" in out


def test_stdio_loop_without_timeout(verdict, monkeypatch):
    monkeypatch.setattr(stdio, "GRACE_S", 1)

    def blocking(proc, frames, timeout=5.0):
        for frame in frames:
            proc.stdin.write(compact(frame))
        proc.stdin.flush()
        waiting, replies = {frame["id"] for frame in frames if "id" in frame}, {}
        while waiting:
            message = json.loads(proc.stdout.readline())
            if "method" not in message:
                waiting.discard(message["id"])
                replies[message["id"]] = message
        return replies
    out = verdict(checks.check_stdio_loop, blocking)
    assert "never answered 'unanswered'" in out and "still waiting" in out and "lines.get(timeout=" in out


# --- unfinished work ---------------------------------------------------------------------------------

@pytest.mark.parametrize("check, server", [
    pytest.param(checks.check_message_kinds, "lab", id="message_kinds"),
    pytest.param(checks.check_stdio_loop, None, id="stdio_loop"),
])
def test_an_unfinished_task_is_not_done_yet(verdict, request, check, server):
    shared = (request.getfixturevalue(server),) if server else ()
    assert verdict(check, stub, *shared).startswith("not done yet: ")


def test_a_lab_server_that_cannot_start_is_said_plainly_and_nothing_passes(verdict, monkeypatch):
    monkeypatch.setattr(checks.servers, "LAB_COMMAND", [sys.executable, "-c", "raise SystemExit(3)"])
    out = verdict(checks.check_stdio_loop, lambda proc, frames, timeout: {})
    assert "The lab server did not start" in out and "Restart the kernel" in out and "✓" not in out


def test_a_reply_filed_under_the_same_id_as_text_is_named_as_another_request(verdict):
    def swapped(proc, frames, timeout=5.0):
        replies = send_and_match()(proc, frames, timeout)
        replies[2], replies["2"] = replies["2"], replies[2]
        return replies
    out = verdict(checks.check_stdio_loop, swapped)
    assert "answers id '2', another request whose id has the same text" in out and "keep their type" in out, out


# --- found by a blind learner run: wrong loops that passed, and right ones written differently --------

def write_all(proc, frames):
    proc.stdin.write(b"".join(compact(frame) for frame in frames))
    proc.stdin.flush()


def waiting_ids(frames):
    return [(type(f["id"]), f["id"]) for f in frames if "id" in f]


def queue_loop(*, per_line_wait=False, skip=lambda m: "method" in m, name_all=False):
    """The pump-and-queue loop, with one of the blind learner's mistakes switched on."""
    def work(proc, frames, timeout=5.0):
        lines = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        write_all(proc, frames)
        waiting, replies = waiting_ids(frames), {}
        sent = [i for _, i in waiting]
        deadline = time.monotonic() + timeout
        while waiting:
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise queue.Empty
                message = json.loads(lines.get(timeout=timeout if per_line_wait else left))
            except queue.Empty:
                raise TimeoutError(f"still waiting for {sent if name_all else [i for _, i in waiting]!r}") from None
            if skip(message):
                continue
            key = (type(message.get("id")), message.get("id"))
            if key in waiting:
                waiting.remove(key)
            replies[message.get("id")] = message
        return replies
    return work


def sleep_then_drain(seconds):
    """No read loop: sleep a fixed time (or the whole timeout), then take what has come."""
    def work(proc, frames, timeout=5.0):
        lines = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        write_all(proc, frames)
        time.sleep(min(seconds or timeout, timeout))
        replies = {}
        while not lines.empty():
            message = json.loads(lines.get_nowait())
            if "method" not in message:
                replies[message["id"]] = message
        waiting = [i for t, i in waiting_ids(frames) if (t, i) not in {(type(k), k) for k in replies}]
        if waiting:
            raise TimeoutError(f"still waiting for {waiting!r}")
        return replies
    return work


def select_then_readline(proc, frames, timeout=5.0):
    """select() on the pipe, then readline() on the buffered proc.stdout: lines already read ahead are not seen."""
    write_all(proc, frames)
    waiting, replies = waiting_ids(frames), {}
    deadline = time.monotonic() + timeout
    while waiting:
        if not select.select([proc.stdout], [], [], max(deadline - time.monotonic(), 0))[0]:
            raise TimeoutError(f"still waiting for {[i for _, i in waiting]!r}")
        message = json.loads(proc.stdout.readline())
        if "method" not in message and (type(message["id"]), message["id"]) in waiting:
            waiting.remove((type(message["id"]), message["id"]))
            replies[message["id"]] = message
    return replies


def stop_at_first_reply(proc, frames, timeout=5.0):
    lines = queue.Queue()
    threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
    write_all(proc, frames)
    while True:
        message = json.loads(lines.get(timeout=timeout))
        if "method" not in message:
            return {message["id"]: message}


def one_line_per_request(proc, frames, timeout=5.0):
    write_all(proc, frames)
    replies = {}
    for _ in range(sum("id" in f for f in frames)):
        message = json.loads(proc.stdout.readline())
        replies[message.get("id")] = message
    return replies


def notification_given_an_id(proc, frames, timeout=5.0):
    return send_and_match()(proc, [dict(f, id=f.get("id", 99)) for f in frames], timeout)


FOUND_WRONG = [
    pytest.param(select_then_readline, ("Both replies had arrived", "raised TimeoutError", "select()", "buffer",
                                        "os.read"), id="select-then-buffered-readline"),
    pytest.param(sleep_then_drain(1.0), ("returned the right dict, but only 0.", "after the server wrote the last "
                                         "reply", "no sleep"), id="fixed-one-second-sleep"),
    pytest.param(sleep_then_drain(None), ("returned the right dict, but only 2.", "Return as soon as"),
                 id="sleeps-the-whole-timeout"),
    pytest.param(queue_loop(skip=lambda m: m.get("method") == "notifications/progress"),
                 ("also has the key None", "notifications/message", "whichever method"),
                 id="skips-only-progress-files-the-log-line"),
    pytest.param(queue_loop(per_line_wait=True), ("only after 2.", "ran past the deadline", "whole call"),
                 id="full-timeout-for-each-line"),
    pytest.param(queue_loop(name_all=True), ("also names 'quick'", "Name only the ids still waiting"),
                 id="timeout-names-every-id-sent"),
    # Misleading messages the same run found: the hint now names the real cause.
    pytest.param(stop_at_first_reply, ("no reply under 'slow', 'refused', '2' (its keys: 2)",
                                       "returned before every request had its reply"), id="stops-at-the-first-reply"),
    pytest.param(notification_given_an_id, ("not one of the frames given", "no id on purpose"),
                 id="notification-given-an-id"),
    pytest.param(one_line_per_request, ("holds a notification", "counting one line per request"),
                 id="one-line-per-request"),
]


@pytest.mark.parametrize("work, phrases", FOUND_WRONG)
def test_stdio_loop_found_wrong_answers_fail(verdict, work, phrases):
    out = verdict(checks.check_stdio_loop, work)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out
    assert "keep their type" not in out, out


def reader_thread_loop(proc, frames, timeout=5.0):
    """Right: a thread iterates over proc.stdout itself and puts parsed messages in a queue."""
    messages = queue.Queue()
    threading.Thread(target=lambda: [messages.put(json.loads(line)) for line in proc.stdout], daemon=True).start()
    for frame in frames:
        proc.stdin.write(json.dumps(frame).encode() + b"\n")
    proc.stdin.flush()
    waiting = {json.dumps(f["id"]): f["id"] for f in frames if "id" in f}
    replies, deadline = {}, time.monotonic() + timeout
    while waiting:
        try:
            message = messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError(f"no reply for {list(waiting.values())!r}") from None
        if "method" not in message and json.dumps(message.get("id")) in waiting:
            replies[waiting.pop(json.dumps(message["id"]))] = message
    return replies


def non_blocking_loop(proc, frames, timeout=5.0):
    """Right: the pipe set non-blocking, polled with os.read every few milliseconds."""
    write_all(proc, frames)
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    waiting, replies, rest = waiting_ids(frames), {}, b""
    deadline = time.monotonic() + timeout
    while waiting:
        try:
            rest += os.read(fd, 65536)
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"ids still waiting: {[i for _, i in waiting]}") from None
            time.sleep(0.005)
            continue
        *lines, rest = rest.split(b"\n")
        for message in map(json.loads, lines):
            key = (type(message.get("id")), message.get("id"))
            if "method" not in message and key in waiting:
                waiting.remove(key)
                replies[message["id"]] = message
    return replies


def selectors_loop(proc, frames, timeout=5.0):
    """Right (a blind learner's): selectors on the file descriptor, os.read, and keys of (type, id)."""
    import selectors
    deadline = time.monotonic() + timeout
    pending = {(type(f["id"]).__name__, f["id"]) for f in frames if "id" in f}
    write_all(proc, frames)
    fd = proc.stdout.fileno()
    chosen = selectors.DefaultSelector()
    chosen.register(fd, selectors.EVENT_READ)
    rest, replies = b"", {}
    try:
        while pending:
            left = deadline - time.monotonic()
            if left <= 0 or not chosen.select(left):
                raise TimeoutError(f"still waiting for {[i for _, i in pending]!r}")
            rest += os.read(fd, 65536)
            while b"\n" in rest:
                line, rest = rest.split(b"\n", 1)
                message = json.loads(line)
                key = (type(message.get("id")).__name__, message.get("id"))
                if "method" not in message and key in pending:
                    pending.discard(key)
                    replies[message["id"]] = message
    finally:
        chosen.close()
    return replies


def empty_queue_retried(proc, frames, timeout=5.0):
    """Right (a blind learner's): queue.Empty only loops back, and the deadline test raises."""
    lines = queue.Queue()
    threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
    write_all(proc, frames)
    wanted, replies = [f["id"] for f in frames if "id" in f], {}

    def still_waiting():
        return [i for i in wanted if not any(type(i) is type(k) and i == k for k in replies)]
    deadline = time.monotonic() + timeout
    while still_waiting():
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no reply for ids {still_waiting()}")
        try:
            message = json.loads(lines.get(timeout=left))
        except queue.Empty:
            continue
        if "method" not in message and "id" in message:
            replies[message["id"]] = message
    return replies


@pytest.mark.parametrize("work", [
    pytest.param(reader_thread_loop, id="reader-thread-and-queue"),
    pytest.param(non_blocking_loop, id="non-blocking-os-read"),
    pytest.param(selectors_loop, id="selectors-and-os-read"),
    pytest.param(empty_queue_retried, id="empty-queue-retried-until-the-deadline"),
])
def test_stdio_loop_right_answers_written_differently_pass(verdict, work):
    assert verdict(checks.check_stdio_loop, work).startswith("✓ Your loop filed all four replies"), work


# --- found by a second blind learner run: wrong answers that passed, a right one refused, right ones written differently

def kind_by_text(message):
    """Wrong: looks for the quoted keys in the serialized text, so a nested "id" or "method" counts."""
    text = json.dumps(message)
    if '"method"' in text:
        return "request" if '"id"' in text else "notification"
    return "response"


def kind_by_id_first(message):
    """Wrong by lesson 01: an error reply whose unreadable id was left out (MCP's schema) becomes a notification."""
    if "id" in message:
        return "request" if "method" in message else "response"
    return "notification"


@pytest.mark.parametrize("work, phrases", [
    pytest.param(kind_by_text, ("kind_of says 'request'", "notifications/message", "inside params.data"),
                 id="keys-searched-in-the-text"),
    pytest.param(kind_by_id_first, ("kind_of says 'notification'", "left out, not null", "accept both"),
                 id="no-id-taken-for-a-notification"),
    pytest.param(lambda m: kind_right(m).capitalize(), ("kind_of says 'Request'", "return exactly 'request'",
                                                         "lower case"), id="capitalised-told-so"),
])
def test_message_kinds_found_wrong_answers_fail(verdict, lab, work, phrases):
    out = verdict(checks.check_message_kinds, work, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


def pump_loop(*, after_last=None, clamp=True, timeout_text=None, clock=time.monotonic, scale=1):
    """The pump-and-queue loop with a list of ids, as the blind learner wrote it; one habit switched on."""
    def work(proc, frames, timeout=5.0):
        write_all(proc, frames)
        lines = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        waiting = [frame["id"] for frame in frames if "id" in frame]
        replies = {}
        deadline = clock() + scale * timeout
        while any(i not in replies for i in waiting):
            left = deadline - clock()
            try:
                raw = lines.get(timeout=max(left, 0) if clamp else left)
            except queue.Empty:
                missing = [i for i in waiting if i not in replies]
                raise TimeoutError((timeout_text or "no reply within {timeout} s for ids {missing!r}").format(
                    timeout=timeout, missing=missing)) from None
            message = json.loads(raw)
            if "method" not in message:
                replies[message["id"]] = message
        if after_last == "drain":  # the lesson's bare-SDK cell: read on until half a second of silence
            while clock() < deadline:
                try:
                    extra = json.loads(lines.get(timeout=min(0.5, max(0, deadline - clock()))))
                except queue.Empty:
                    break
                if "method" not in extra:
                    replies[extra["id"]] = extra
        elif after_last:
            time.sleep(after_last)
        return replies
    return work


@pytest.mark.parametrize("work, phrases", [
    pytest.param(pump_loop(after_last=0.5), ("returned the right dict, but only 0.", "after the server wrote the last "
                                             "reply", "allows 0.3 seconds", "no sleep"), id="lingers-half-a-second"),
    pytest.param(pump_loop(after_last=1.0), ("returned the right dict, but only 1.", "allows 0.3 seconds"),
                 id="lingers-one-second"),
    pytest.param(pump_loop(after_last="drain"), ("returned the right dict, but only 0.", "no reading on"),
                 id="reads-on-until-half-a-second-of-silence"),
    # queue.get(timeout=negative) raises ValueError: with timeout=0 the deadline has passed before the first wait.
    pytest.param(pump_loop(scale=0.5), ("raised TimeoutError after 0.", "before its 1.5-second timeout",
                                        "not for a fixed time"), id="deadline-at-half-the-timeout"),
    # Stopped at the guard or refused as late, whichever comes first: both say where such a wait comes from.
    pytest.param(pump_loop(scale=2), ("timeout=1.5", "a deadline set later"),
                 id="deadline-at-twice-the-timeout"),
    pytest.param(pump_loop(clamp=False), ("timeout=0", "raised ValueError", "max(0, deadline - time.monotonic())"),
                 id="negative-wait-not-clamped"),
])
def test_stdio_loop_second_run_wrong_answers_fail(verdict, work, phrases):
    out = verdict(checks.check_stdio_loop, work)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


class RepliesTimedOut(TimeoutError):
    pass


def condition_loop(proc, frames, timeout=5.0):
    """Right (a blind learner's): a reader thread files replies under a Condition; wait_for with the time left."""
    deadline = time.monotonic() + timeout
    write_all(proc, frames)
    ids, got, ready = [f["id"] for f in frames if "id" in f], {}, threading.Condition()

    def reader():
        for raw in iter(proc.stdout.readline, b""):
            message = json.loads(raw)
            if "method" not in message:
                with ready:
                    got[message["id"]] = message
                    ready.notify_all()
    threading.Thread(target=reader, daemon=True).start()
    with ready:
        if not ready.wait_for(lambda: all(i in got for i in ids), timeout=max(0, deadline - time.monotonic())):
            raise TimeoutError("ids still waiting: %s" % [i for i in ids if i not in got])
        return {i: got[i] for i in ids}


def polling_loop(proc, frames, timeout=5.0):
    """Right (a blind learner's): get_nowait, and a 50 ms sleep while nothing has come."""
    deadline = time.monotonic() + timeout
    write_all(proc, frames)
    lines = queue.Queue()
    threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
    pending, replies = [f["id"] for f in frames if "id" in f], {}
    while pending:
        try:
            message = json.loads(lines.get_nowait())
        except queue.Empty:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"still waiting for ids {pending!r}") from None
            time.sleep(0.05)
            continue
        found = [n for n, p in enumerate(pending) if "method" not in message and p == message.get("id")
                 and type(p) is type(message.get("id"))]
        if found:
            replies[pending.pop(found[0])] = message
    return replies


def ids_as_exception_args(proc, frames, timeout=5.0):
    """Right (a blind learner's): TimeoutError(*ids), a subclass, ids written plainly."""
    write_all(proc, frames)
    lines = queue.Queue()
    threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
    missing, replies = [f["id"] for f in frames if "id" in f], {}
    deadline = time.monotonic() + timeout
    while missing:
        try:
            message = json.loads(lines.get(timeout=max(0.0, deadline - time.monotonic())))
        except queue.Empty:
            raise RepliesTimedOut(*missing) from None
        if "method" not in message and message["id"] in missing:
            missing = [m for m in missing if not (m == message["id"] and type(m) is type(message["id"]))]
            replies[message["id"]] = message
    return replies


@pytest.mark.parametrize("work", [
    # The answered id 'quick' as part of a word is not the id: this right loop was refused once.
    pytest.param(pump_loop(timeout_text="the server did not answer quickly enough; still waiting for {missing!r}"),
                 id="timeout-text-says-quickly"),
    pytest.param(pump_loop(timeout_text="timed out waiting for {missing}"), id="ids-named-plainly"),
    pytest.param(pump_loop(clock=time.time), id="time-time-for-the-deadline"),
    pytest.param(condition_loop, id="condition-and-reader-thread"),
    pytest.param(polling_loop, id="get-nowait-and-sleep"),
    pytest.param(ids_as_exception_args, id="ids-as-timeout-error-args-of-a-subclass"),
])
def test_stdio_loop_second_run_right_answers_pass(verdict, work):
    assert verdict(checks.check_stdio_loop, work).startswith("✓ Your loop filed all four replies"), work


# --- found by a third blind learner run: a message that blamed a cause the loop did not have -----------------------

def checks_the_deadline_between_waits(proc, frames, timeout=5.0, wait_s=1):
    """Wrong: waits wait_s at a time and looks at the deadline only between waits, so it overruns by up to wait_s."""
    write_all(proc, frames)
    lines = queue.Queue()
    threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
    waiting, replies = [f["id"] for f in frames if "id" in f], {}
    deadline = time.monotonic() + timeout
    while waiting:
        if time.monotonic() >= deadline:
            raise TimeoutError(f"still waiting for {waiting!r}")
        try:
            message = json.loads(lines.get(timeout=wait_s))
        except queue.Empty:
            continue
        if "method" not in message and message["id"] in waiting:
            waiting = [i for i in waiting if not (i == message["id"] and type(i) is type(message["id"]))]
            replies[message["id"]] = message
    return replies


def test_a_deadline_checked_once_a_second_is_told_what_was_seen(verdict):
    out = verdict(checks.check_stdio_loop, checks_the_deadline_between_waits)
    # The reply to 'quick' comes at 1.2 s; the next one-second wait ends at 2.2 s, past the 1.5 s deadline.
    assert out.startswith("✗") and "only after 2." in out and "seconds after the reply to 'quick' came" in out, out
    assert "the check allows 0.7" in out and "a wait of a fixed length (a second, say)" in out, out


def test_a_two_second_wait_stopped_by_the_check_is_told_a_fixed_wait_overruns(verdict):
    # Its wait after the reply to 'quick' would end at 3.2 s: the check stops it at 3.0 s, 1.5 s past the timeout.
    out = verdict(checks.check_stdio_loop, lambda proc, frames, timeout=5.0: checks_the_deadline_between_waits(
        proc, frames, timeout, wait_s=2))
    assert out.startswith("✗") and "still waiting 1.5 seconds after its timeout" in out, out
    assert "a wait of a fixed length longer than what is left of the deadline" in out, out


# --- found by a fourth blind learner run: id 0, a method one level down, counted replies, a poll outrun ------------

@pytest.mark.parametrize("work, phrases", [
    pytest.param(lambda m: ("request" if m.get("id", 0) != 0 else "notification") if "method" in m else "response",
                 ("kind_of says 'notification'", '"id":0', "which is false for 0"), id="id-0-taken-for-no-id"),
    pytest.param(lambda m: ("request" if "id" in m else "notification")
                 if "method" in m or (isinstance(m.get("result"), dict) and "method" in m["result"]) else "response",
                 ("kind_of says 'request'", "a key of the result, one level down"),
                 id="a-method-under-result-taken-for-a-request"),
])
def test_message_kinds_fourth_run_wrong_answers_fail(verdict, lab, work, phrases):
    out = verdict(checks.check_message_kinds, work, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


def fourth_run_loop(*, count_replies=False, truthy_ids=False, poll_s=None, floor_s=0.0, name_every_frame=False):
    """The pump-and-queue loop with one of the fourth blind learner's habits switched on."""
    def work(proc, frames, timeout=5.0):
        write_all(proc, frames)
        lines = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        waiting = [f["id"] for f in frames if (f.get("id") if truthy_ids else "id" in f)]
        asked = len(waiting)
        replies = {}
        deadline = time.monotonic() + timeout
        while (len(replies) < asked) if count_replies else waiting:
            try:
                left = max(floor_s, deadline - time.monotonic())
                message = json.loads(lines.get(timeout=poll_s if poll_s else left))
            except queue.Empty:
                if (poll_s or floor_s) and time.monotonic() < deadline:
                    continue
                named = [f.get("id") for f in frames if f.get("id") not in replies] if name_every_frame else [
                    i for i in waiting if i not in replies]
                raise TimeoutError(f"no reply for {named!r}") from None
            if "method" in message:
                continue
            if count_replies:
                replies[message.get("id")] = message
            elif message.get("id") in waiting:
                waiting = [i for i in waiting if not (i == message["id"] and type(i) is type(message["id"]))]
                replies[message["id"]] = message
        return replies
    return work


@pytest.mark.parametrize("work, phrases", [
    pytest.param(fourth_run_loop(count_replies=True), ("no reply under 'first'", "error with a null id",
                                                       "counts replies stops one short"),
                 id="counts-replies-instead-of-matching"),
    pytest.param(fourth_run_loop(truthy_ids=True), ("no reply under 0", "0 is an id like any other"),
                 id="a-falsy-id-taken-for-none"),
    pytest.param(fourth_run_loop(poll_s=0.1), ("writes a notification every 0.01 seconds", "still waiting",
                                                "not only when a wait comes back empty"),
                 id="deadline-looked-at-only-on-silence"),
    # Wrong-cause before: told of a wait that starts over with every line; the floor is what never lets it run out.
    pytest.param(fourth_run_loop(floor_s=0.5), ("writes a notification every 0.01 seconds", "still waiting",
                                                "has a floor (max(0.5, ...))"), id="a-floor-under-each-wait"),
    pytest.param(fourth_run_loop(name_every_frame=True), ("names None (or null), which is no id",
                                                          "name only the ids of requests"),
                 id="timeout-names-the-notification"),
])
def test_stdio_loop_fourth_run_wrong_answers_fail(verdict, work, phrases):
    out = verdict(checks.check_stdio_loop, work)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out

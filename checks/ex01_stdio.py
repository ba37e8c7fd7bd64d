"""Checks for exercise 01: the stdio loop that matches replies to requests by id."""

import copy
import json
import re
import subprocess
import sys
import time
from contextlib import contextmanager

from mcpwire import frames
from .attempt import attempt, missing
from .servers import (REPLY_WAIT_S, STARTUP_WAIT_S, raw_process, recorded_lab, say_lab_did_not_start, stdio_lab,
                      stop)
from .verdict import failed, not_done, passed, server_said, short

# A wrong answer that blocks is stopped after TIMEOUT_S + GRACE_S seconds: under 5.
TIMEOUT_S = 3
SILENT_TIMEOUT_S = 1
GRACE_S = 1.5  # how long past its own timeout a loop may run before the check gives up on it

# Sent first, answered last: a reindex pauses after each note and reports progress on the way.
SLOW = frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 40}}, id="slow",
                      meta={"progressToken": "reindex"})
FAST = frames.request("tools/call", {"name": "search_notes", "arguments": {"query": "spindle", "limit": 1}}, id=2)
NEVER_ANSWERED = frames.notification("notifications/cancelled", {"requestId": "not-in-flight"})
# Answered with an error (-32602, no envelope): a reply all the same, which a loop that waits for results misses.
REFUSED = frames.request("tools/list", {}, id="refused", meta=None)
# The id "2" beside FAST's 2: the same text, another JSON type, so another request (a loop that keys by text mixes them).
DISCOVER = frames.request("server/discover", id="2")
BATCH = [SLOW, FAST, NEVER_ANSWERED, REFUSED, DISCOVER]
EXPECTED_IDS = ["slow", 2, "refused", "2"]
UNANSWERED = frames.request("server/discover", id="unanswered")
# A scripted server: it reads a given number of lines, waits, writes its lines in ONE write, then stays silent
# (it ends when its stdin closes). It says "ready" on stderr first, so a learner's timeout excludes its start, and
# then when it wrote, on the clock time.monotonic() reads (on Linux one clock for every process).
SCRIPTED_SOURCE = """\
import json, os, sys, time
lines_to_read, wait_s, lines = json.loads(sys.argv[1])
os.write(2, b"ready\\n")
for _ in range(lines_to_read):
    if not sys.stdin.buffer.readline():
        os._exit(0)
time.sleep(wait_s)
os.write(1, b"".join(json.dumps(line).encode() + b"\\n" for line in lines))
os.write(2, f"wrote {time.monotonic()!r}\\n".encode())
for _ in sys.stdin.buffer:
    pass
"""
LOG_LINE = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "indexed"}}


def _reply(request_id):
    return {"jsonrpc": "2.0", "id": request_id, "result": {}}


# Both replies arrive in one write with a log line and an error with a null id before them, and nothing follows.
# select() on the pipe then readline() on the buffered proc.stdout finds the pipe empty while the replies sit in the
# buffer; a loop that skips only notifications/progress files the log line; a loop that sleeps its timeout away
# returns late. The null-id error (what a server writes for a line whose id it could not read) answers neither
# request: a loop that counts replies instead of matching ids stops one short. Id 0 is false: a loop that takes a
# falsy id for none never waits for it.
TOGETHER = [frames.request("server/discover", id="first"), frames.request("tools/list", {}, id=0)]
TOGETHER_IDS = ["first", 0]
STRAY_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
# The error comes before the log line: a loop that files both under None keeps the log line, and is told so.
TOGETHER_PLAN = [len(TOGETHER), 0.05, [STRAY_ERROR, LOG_LINE, _reply(0), _reply("first")]]
# Returning this long after the server wrote the last reply means the loop waited for something else (a sleep, a
# wait for more lines, the timeout). At load 7 on 2 cores, right loops returned within 0.02 s of it, one that polls
# every 50 ms within 0.07 s; a 0.2 s sleep came 0.20-0.22 s late, a 0.5 s one 0.50-0.52 s.
LINGER_S = 0.3
# One request answered shortly before the deadline, one never: the TimeoutError names only the one still waiting,
# comes no sooner than the timeout (a fixed sleep misses the late reply) and not a whole timeout later (a wait
# that starts over after each line).
PARTIAL_TIMEOUT_S = 1.5
QUICK = frames.request("tools/list", {}, id="quick")
# With a notification among them: it has no id, so the TimeoutError has nothing of it to name (no None, no null).
PARTIAL = [QUICK, NEVER_ANSWERED, UNANSWERED]
PARTIAL_REPLY_S = 1.2
PARTIAL_PLAN = [len(PARTIAL), PARTIAL_REPLY_S, [_reply("quick")]]
EARLY_S = 0.25  # a TimeoutError this much before the deadline came too soon (load only makes it later)
# With timeout=0 the deadline has passed before the first wait: what is left of it is negative.
NO_TIME = [frames.request("tools/list", {}, id="no-time")]
NO_TIME_PLAN = [len(NO_TIME), 0, []]
LATE_S = 0.7  # nor this much after it: a right loop is never that late, a restarted wait is PARTIAL_REPLY_S late
# Never answers, but talks, faster than any poll: a wait that starts over with each line, and a loop that looks at
# the deadline only when a wait comes back empty, never run out here; a loop that skips only notifications/progress
# meets another method. It ends when its stdin closes, as a stdio server does.
CHATTY_EVERY_S = 0.01
CHATTY_SOURCE = """\
import json, os, sys, threading, time
threading.Thread(target=lambda: (sys.stdin.buffer.read(), os._exit(0)), daemon=True).start()
for n in range(1000):
    method, params = (("notifications/progress", {"progressToken": "t", "progress": n}) if n % 2 else
                      ("notifications/message", {"level": "info", "data": "still here"}))
    print(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}), flush=True)
    time.sleep(float(sys.argv[1]))
"""
CHATTY_COMMAND = [sys.executable, "-c", CHATTY_SOURCE, str(CHATTY_EVERY_S)]

LOOP_HINT = ("Keep track of the ids still waiting; a line with a \"method\" is a notification to skip, any other "
             "line (a result or an error) is filed under its \"id\"; stop when nothing is waiting.")
ID_TYPE_HINT = ("JSON-RPC ids keep their type: 2 (a number) and \"2\" (a string) are two different requests, and "
                "each reply carries its id as it was sent. Compare ids as json.loads gives them, never as text.")
TIMEOUT_HINT = ("readline() blocks until a line comes, whatever the deadline. The lesson's pump reads lines on a "
                "thread into a queue, and a queue can be waited on with a timeout (lines.get(timeout=...)).")
NEGATIVE_HINT = ("Once the deadline has passed, what is left of it is negative, and queue.get (like select.select) "
                 "refuses a negative timeout with ValueError: wait max(0, deadline - time.monotonic()), or raise "
                 "TimeoutError as soon as nothing is left.")



def _sample_messages(wire):
    """Messages of each kind, most of them real (sent to the lab or received from it), three written by hand."""
    reindex = frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 0}}, id=11,
                             meta={"progressToken": 11})
    no_envelope = {"jsonrpc": "2.0", "id": "twelve", "method": "tools/list"}
    result = wire.send(reindex)
    error = wire.send(no_envelope)
    unreadable = wire.send_raw('{"jsonrpc": "2.0", "id": 13, "method": "tools/list"', timeout=REPLY_WAIT_S)
    cancelled = frames.notification("notifications/cancelled", {"requestId": 10})
    null_id = {"jsonrpc": "2.0", "id": None, "method": "tools/list"}
    # Tells the keys from the method's name: a rule that calls only notifications/* notifications gets it wrong.
    call_without_id = frames.notification("tools/call", {"name": "search_notes", "arguments": {"query": "spindle"}})
    wire.send_raw(frames.dumps(null_id), timeout=REPLY_WAIT_S)  # sent for real: the server refuses its null id
    # Written by hand. The lab writes "id": null where it could not read an id (as JSON-RPC and the Python SDK do);
    # MCP's schema and the TypeScript SDK leave the id out: the lesson says to accept both.
    no_id = {key: value for key, value in unreadable.message.items() if key != "id"}
    # Written by hand: an "id" or a "method" nested in a value is no member of the message (a text search finds them).
    log_with_an_id = frames.notification("notifications/message", {"level": "info", "logger": "sync",
                                                                   "data": {"id": "welcome", "status": "synced"}})
    # Written by hand: id 0 is an id like any other (a truth test takes it for none).
    zero_id = frames.request("tools/list", {}, id=0)
    # Written by hand: a result is any object, so "method" may be one of its own keys, still no key of the message.
    result_keyed_method = {"jsonrpc": "2.0", "id": 15, "result": {"method": "AASM", "epoch_s": 30}}
    result_with_a_method = {"jsonrpc": "2.0", "id": 14, "result": {
        "content": [{"type": "text", "text": "{\"method\": \"AASM\", \"epoch_s\": 30}"}],
        "structuredContent": {"method": "AASM", "epoch_s": 30}}}
    return [
        (reindex, "request", "it has a method and an id: the sender waits for a reply with that id"),
        (result.notifications[0], "notification", "it has a method and no id: nobody answers it"),
        (result.message, "response", "it has an id and a result, and no method"),
        (cancelled, "notification", "it has a method and no id: nobody answers it"),
        (frames.legacy_initialized(), "notification",
         "it has a method and no id. It has no params either: JSON-RPC makes params optional, for requests too"),
        (error.message, "response", "it has an id and an error, and no method: an error reply is a response too"),
        (no_envelope, "request", "it has a method and an id (and no params), even though the server refuses it"),
        (zero_id, "request",
         "it has a method and an id member, 0: an id is there whatever its value, so test \"id\" in message, not "
         "message.get(\"id\"), which is false for 0"),
        (null_id, "request",
         "it has a method and an id member. JSON-RPC calls a message a notification only when the id member is "
         "absent; a null id is a request's (MCP forbids it, so the server refuses it with -32600)"),
        (unreadable.message, "response",
         "it has an error and no method. The server could not read the id of a line that is not JSON, so its "
         f"reply has {_unread_id(unreadable.message)}; it is still a response"),
        (call_without_id, "notification",
         "it has a method and no id. A message without an id member is a notification whatever its method: "
         "the server sends nothing back (JSON-RPC 2.0: a notification gets no reply)"),
        (no_id, "response",
         "it has an error and no method. This is the same reply written as MCP's schema writes it: an id that could "
         "not be read is left out, not null. Lesson 01: accept both forms; a message with no method is a response"),
        (log_with_an_id, "notification",
         "it has a method and no id member: the \"id\" is inside params.data, a value, not a key of the message"),
        (result_with_a_method, "response",
         "it has an id and a result, and no method member: the \"method\" is inside the result, a value, not a "
         "key of the message"),
        (result_keyed_method, "response",
         "it has an id and a result, and no method member: the \"method\" is a key of the result, one level down, "
         "not a key of the message"),
    ]


def _unread_id(message):
    return "\"id\": null" if "id" in message else "no id at all"


def check_message_kinds(kind_of, lab=None):
    """kind_of(message) must say "request", "notification" or "response" for real messages from both sides."""
    if missing(kind_of):
        not_done("define kind_of(message) first.")
        return
    with stdio_lab(lab) as wire:
        samples = _sample_messages(wire)
    for message, kind, why in samples:
        outcome = attempt(kind_of, copy.deepcopy(message))
        if outcome.not_done:
            not_done("kind_of still raises NotImplementedError. Look at which of \"method\" and \"id\" a message has.")
            return
        if outcome.error:
            failed(f"kind_of raised {outcome.error_text} for {short(message)}",
                   hint="Not every message has every key: test with `\"id\" in message`.")
            return
        if outcome.value != kind:
            spelt = isinstance(outcome.value, str) and outcome.value.strip().lower() == kind
            failed(f"kind_of says {outcome.value!r} for {short(message)}",
                   hint=(f"That is the right kind, written differently: return exactly {kind!r}, in lower case, as "
                         "the task writes it." if spelt else f"It is a {kind}: {why}."))
            return
    count = {kind: sum(1 for _, k, _ in samples if k == kind) for kind in ("request", "notification", "response")}
    passed(f"kind_of sorted {len(samples)} messages: {count['request']} requests (one with a null id, one with id 0, "
           f"one without params), {count['notification']} notifications (one a tools/call without an id, one a log line "
           f"with an id inside its data) and {count['response']} responses (three of them errors, one with a null id "
           "and one with no id; two with a method inside their result, one of them a key of the result).")


def check_stdio_loop(send_and_match):
    """send_and_match(proc, frames, timeout) must return {id: reply} and raise TimeoutError on silence."""
    if missing(send_and_match):
        not_done("define send_and_match(proc, frames, timeout) first.")
        return
    # The server answers nothing until it has read all five frames: the task writes them all before reading.
    with recorded_lab(hold=len(BATCH)) as lab:
        if lab is None:
            say_lab_did_not_start()
            return
        outcome = attempt(send_and_match, lab.proc, copy.deepcopy(BATCH), TIMEOUT_S,
                          guard=TIMEOUT_S + GRACE_S, unblock=lab.stop)
        received = lab.received()
        ended = not outcome.hung and (lab.proc.stdin.closed or lab.proc.poll() is not None)
    if outcome.not_done:
        not_done("send_and_match still raises NotImplementedError. Write every frame, then read lines "
                 "until each request id has its reply.")
        return
    if not _judge_matching(outcome, received):
        return
    if ended:
        failed("Your loop filed every reply, but it closed the server's stdin, which ends the server: no frame can "
               "follow. This lab server answers what it had read first; a bare SDK server answers a request still "
               "running at that moment with -32000 \"Connection closed\", or not at all (lesson 01).",
               hint="Flushing sends the bytes without closing anything: a client keeps stdin open for as long as it "
                    "may send.")
        return
    together, took, late = _run_scripted(send_and_match, TOGETHER, TOGETHER_PLAN, TIMEOUT_S)
    if not _judge_together(together, took, late):
        return
    partial, took, after_reply = _run_scripted(send_and_match, PARTIAL, PARTIAL_PLAN, PARTIAL_TIMEOUT_S)
    if not _judge_partial(partial, took, after_reply):
        return
    no_time, _, _ = _run_scripted(send_and_match, NO_TIME, NO_TIME_PLAN, 0)
    if not _judge_no_time(no_time):
        return
    with raw_process(CHATTY_COMMAND, buffered=True) as proc:
        chatty = attempt(send_and_match, proc, [dict(UNANSWERED)], SILENT_TIMEOUT_S,
                         guard=SILENT_TIMEOUT_S + GRACE_S, unblock=lambda: stop(proc))
    if not _judge_chatter(chatty):
        return
    passed("Your loop filed all four replies under their ids, 2 and '2' kept apart (the slow reindex, sent first, "
           "was answered last; the refused tools/list, an error, counted as its reply), skipped the progress and "
           "log notifications, waited for no reply to the notification, read replies that arrived together (one of "
           f"them to id 0, with an error for no request of yours before them) and returned within {LINGER_S} seconds "
           "of the last one, and raised TimeoutError on time, naming only the "
           "id still waiting, when a server left a request unanswered, when one only sent notifications, and with "
           "timeout=0.")


@contextmanager
def _scripted_server(plan):
    """A buffered Popen of SCRIPTED_SOURCE running `plan`, once it has said it is ready; None if it never does."""
    proc = subprocess.Popen([sys.executable, "-c", SCRIPTED_SOURCE, json.dumps(plan)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ready = attempt(proc.stderr.readline, guard=STARTUP_WAIT_S, unblock=lambda: stop(proc))
        yield proc if ready.value == b"ready\n" else None
    finally:
        stop(proc)


def _run_scripted(send_and_match, sent, plan, timeout):
    """The learner's function against a scripted server: its Attempt, how many seconds it took, and how many seconds
    after the server wrote its lines it returned (None if the server wrote nothing, or the function did not return)."""
    with _scripted_server(plan) as proc:
        if proc is None:
            return None, 0.0, None
        ended = []

        def timed(*args):
            try:
                return send_and_match(*args)
            finally:  # taken on the learner's thread: the check's own wake-up is not the learner's delay
                ended.append(time.monotonic())
        start = time.monotonic()
        outcome = attempt(timed, proc, copy.deepcopy(sent), timeout, guard=timeout + GRACE_S,
                          unblock=lambda: stop(proc))
        took = time.monotonic() - start
        if outcome.hung or not ended or not plan[2]:
            return outcome, took, None
        wrote = attempt(proc.stderr.readline, guard=1, unblock=lambda: stop(proc)).value or b""
        match = re.fullmatch(rb"wrote (\S+)\n", wrote)
        return outcome, took, (ended[0] - float(match.group(1))) if match else None


def _judge_arrival(sent, received):
    """Report what the server received when it is not the four frames as four lines; False if so."""
    *lines, tail = received.split(b"\n")
    after = f", and {len(tail)} bytes after the last newline" if tail else ""
    if not received:
        failed(f"{sent} The server received nothing: not one byte of your frames reached it.",
               hint="Writing to proc.stdin fills a buffer inside your process; the bytes leave it only when the "
                    "buffer is flushed or closed.",
               more="After writing the frames, flush proc.stdin before you start waiting for replies.")
        return False
    if not lines:
        failed(f"{sent} The server received {len(received)} bytes with no newline in them, so it is still "
               "waiting for the end of the first line.",
               hint="On stdio a frame is one line: the server reads up to the newline, and only then parses.",
               more="End each frame's JSON text with \"\\n\".")
        return False
    unreadable = next((line for line in lines if not _is_json(line)), None)
    if unreadable is not None:
        failed(f"{sent} The server received {len(lines)} lines for {len(BATCH)} frames; one of them is not JSON: "
               f"{short(unreadable.decode('utf-8', 'replace'))}",
               hint="Each line is read as one whole message: a frame written over several lines is several "
                    "broken messages.",
               more="Write each frame as compact JSON on one line, with no indent.")
        return False
    if len(lines) < len(BATCH) and not tail and [json.loads(line) for line in lines] == BATCH[:len(lines)]:
        failed(f"{sent} The server received your first {len(lines)} frame(s), each on its line, and then nothing: "
               "your function waited for a reply before it wrote the next frame. The check's server answers only "
               "once it has read all five, as any server may (replies come when the server is ready, in any order).",
               hint="Write every frame first, flush once, and only then read the replies.")
        return False
    if len(lines) < len(BATCH):
        failed(f"{sent} The server received {len(lines)} complete line(s) for {len(BATCH)} frames{after}.",
               hint="Write every frame, each followed by its newline, before you wait for any reply.")
        return False
    return True


def _is_json(line):
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _judge_matching(outcome, received):
    sent = ("The check sent reindex (id 'slow'), search_notes (id 2, a number), a notification, a tools/list with no "
            "envelope (id 'refused', answered with an error) and server/discover (id '2', a string).")
    if outcome.error and not received and not isinstance(outcome.error, (TimeoutError, KeyError)):
        failed(f"{sent} Your function raised {outcome.error_text} before one byte reached the server.",
               hint="Read what raised first: proc.stdin is a binary pipe, so it takes bytes (line.encode()), not str.")
        return False
    if (outcome.hung or outcome.error or not isinstance(outcome.value, dict)) and not _judge_arrival(sent, received):
        return False
    if not _judge_frames_kept(sent, received):
        return False
    if outcome.hung:
        failed(f"{sent} Your function was still running {GRACE_S} seconds after its {TIMEOUT_S}-second timeout.",
               hint="Only requests (frames with an id) get a reply: a notification never does.", more=TIMEOUT_HINT)
        return False
    if isinstance(outcome.error, TimeoutError):
        failed(f"{sent} Every request was answered, yet your function raised {outcome.error_text}",
               hint="Wait only for frames that have an id; a notification gets no reply. An error reply answers "
                    "its request just as a result does.", more=LOOP_HINT)
        return False
    if isinstance(outcome.error, KeyError):
        failed(f"{sent} Your function raised {outcome.error_text}: a message without that key broke the loop.",
               hint="The server also writes notifications/progress lines (no id) while reindex runs.", more=LOOP_HINT)
        return False
    replies = _returned_dict(sent, outcome)
    if replies is None:
        return False
    missing_ids = [i for i in EXPECTED_IDS if i not in replies]
    if missing_ids:
        failed(f"{sent} Your dict has no reply under {', '.join(map(repr, missing_ids))} "
               f"(its keys: {', '.join(map(repr, replies)) or 'none'}).", hint=_missing_hint(replies, missing_ids),
               more=LOOP_HINT)
        return False
    extra = [key for key in replies if key not in EXPECTED_IDS]
    if extra:
        failed(f"{sent} Your dict also has the key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}: it "
               "holds one reply per request id, and nothing else.",
               hint="A notification has no id and answers no request: skip any line with a method (progress, log).",
               more=LOOP_HINT)
        return False
    for request_id in EXPECTED_IDS:
        reply = replies[request_id]
        if not isinstance(reply, dict):
            failed(f"{sent} Under id {request_id!r} you filed {type(reply).__name__}, not a parsed reply: "
                   f"{short(reply)}", hint="Parse each line with json.loads.")
            return False
        if not {"id", "method", "jsonrpc"} & set(reply):
            failed(f"{sent} Under id {request_id!r} you filed {short(reply)}: the result or error alone, not the whole "
                   "reply.", hint="File the parsed message itself (jsonrpc, id and result or error): the caller reads "
                                  "reply[\"result\"] or reply[\"error\"] from it.")
            return False
        if "method" in reply and "id" not in reply:
            failed(f"{sent} Under id {request_id!r} you filed a {reply['method']} notification, not a reply.",
                   hint="While reindex runs, the server writes progress notifications between the replies.",
                   more=LOOP_HINT)
            return False
        if _same_text_other_type(reply.get("id"), request_id):
            failed(f"{sent} The reply you filed under id {request_id!r} answers id {reply.get('id')!r}, another "
                   "request whose id has the same text.", server=server_said(reply), hint=ID_TYPE_HINT)
            return False
        if reply.get("id") != request_id:
            failed(f"{sent} The reply you filed under id {request_id!r} answers id {reply.get('id')!r}.",
                   server=server_said(reply),
                   hint="Replies come back in the order the server finishes, not the order you sent. Match them "
                        "by id, never by position.", more=LOOP_HINT)
            return False
    return True


def _returned_dict(sent, outcome):
    """The dict the function returned, or None once failed() has said why there is none (it raised, or gave no dict)."""
    if outcome.error:
        failed(f"{sent} Your function raised {outcome.error_text}", hint=LOOP_HINT)
        return None
    if not isinstance(outcome.value, dict):
        failed(f"{sent} Your function returned {type(outcome.value).__name__}; return a dict {{id: reply}}.")
        return None
    return outcome.value


def _missing_hint(replies, missing_ids):
    """Why replies are missing: ids retyped, notifications filed in their place, errors dropped, or an early stop."""
    if all(any(_same_text_other_type(key, i) for key in replies) for i in missing_ids):
        return ID_TYPE_HINT
    if any(isinstance(reply, dict) and "method" in reply for reply in replies.values()):
        return ("Your dict holds a notification: a line with a \"method\" is no reply, whatever its id. Skip it and "
                "keep reading: counting one line per request stops before the last reply.")
    if missing_ids == ["refused"]:
        return "An error reply answers its request just as a result does: file it under its id too."
    return ("Your loop returned before every request had its reply. Stop only when no request id is waiting: "
            "replies come in any order, and the slow one comes last.")


def _judge_frames_kept(sent, received):
    """Say so when the server received frames other than the five given (changed, added or left out); False if so."""
    lines = [line for line in received.split(b"\n") if line.strip()]
    if not all(_is_json(line) for line in lines):
        return True  # _judge_arrival names unreadable lines
    written = [json.loads(line) for line in lines]
    changed = [frame for frame in written if frame not in BATCH]
    if changed:
        given = _given_for(changed[0])
        failed(f"{sent} The server received {short(changed[0])}, which is not one of the frames given"
               + (f" (given: {short(given)})." if given is not None else "."),
               hint="Write the frames exactly as they are given. A notification has no id on purpose: given one, it "
                    "becomes a request that the server answers.")
        return False
    return True


def _given_for(frame):
    """The given frame that a changed one was made from: the same method and id if there is one, else the same method."""
    same_method = [f for f in BATCH if isinstance(frame, dict) and f["method"] == frame.get("method")]
    same_id = [f for f in same_method if "id" in f and "id" in frame and not _same_text_other_type(f["id"], frame["id"])
               and f["id"] == frame["id"]]
    return (same_id or same_method or [None])[0]


def _same_text_other_type(one, other):
    return type(one) is not type(other) and str(one) == str(other)


def _judge_together(outcome, took, late):
    sent = ("Then the check sent two requests (ids 'first' and 0) to a server that wrote four lines in one write, an "
            "error with a null id (answering a line whose id it could not read), a notifications/message log line "
            f"and both replies, and then stayed silent, with timeout={TIMEOUT_S}.")
    if outcome is None:
        say_lab_did_not_start()
        return False
    if outcome.hung:
        failed(f"{sent} Your function was still running {GRACE_S} seconds after its timeout.", more=TIMEOUT_HINT,
               hint="Both replies had arrived before anything blocked: a read that waits for more lines than the "
                    "server sends waits for ever.")
        return False
    if isinstance(outcome.error, TimeoutError):
        failed(f"{sent} Both replies had arrived, yet your function raised {outcome.error_text}",
               hint="If your loop calls select() before each readline(): select() looks at the pipe, not at "
                    "proc.stdout's buffer. readline() took all three lines out of the pipe at once and returned only "
                    "the first, so select() then saw nothing waiting while both replies sat in the buffer.",
               more="Read lines on a thread with the lesson's pump, or select() on the file descriptor and read it "
                    "with os.read(), splitting the lines yourself.")
        return False
    if isinstance(outcome.error, KeyError):
        failed(f"{sent} Your function raised {outcome.error_text}: the log line has no id.",
               hint="Any line with a \"method\" is a notification, whichever method it names: skip log lines "
                    "(notifications/message) as well as progress.", more=LOOP_HINT)
        return False
    replies = _returned_dict(sent, outcome)
    if replies is None:
        return False
    # The null-id error filed under None is let be: it is no reply of the caller's, who looks up its own ids.
    extra = [key for key in replies if key not in TOGETHER_IDS and not (key is None and replies[key] == STRAY_ERROR)]
    if extra:
        failed(f"{sent} Your dict also has the key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}, "
               "filed from the notifications/message line.",
               hint="Any line with a \"method\" is a notification, whichever method it names: skip log lines "
                    "(notifications/message) as well as progress.", more=LOOP_HINT)
        return False
    lacking = [i for i in TOGETHER_IDS if i not in replies]
    if lacking:
        failed(f"{sent} Your dict has no reply under {', '.join(map(repr, lacking))} "
               f"(its keys: {', '.join(map(repr, replies)) or 'none'}).",
               hint=("You filed the error with a null id too, which answers neither request, and stopped with as "
                     "many replies as requests: a loop that counts replies stops one short. Stop when no request id "
                     "is waiting, matching each reply's id to one you sent."
                     if None in replies else
                     "0 is an id like any other: a frame is a request when \"id\" in frame, whatever the id's value; "
                     "a truth test (if frame.get(\"id\")) takes 0 for no id, so nothing waits for its reply."
                     if lacking == [0] else
                     "Keep reading until no request id is waiting: several lines can arrive at once."),
               more=LOOP_HINT)
        return False
    if late is None or late > LINGER_S:
        after = (f"{late:.2f} seconds after the server wrote the last reply" if late is not None else
                 f"{took:.1f} seconds after it was called")
        failed(f"{sent} Your function returned the right dict, but only {after}: the server wrote the replies "
               f"{TOGETHER_PLAN[1]} seconds after your frames arrived, and the task asks for the dict as soon as the "
               f"last reply is in (the check allows {LINGER_S} seconds).",
               hint="Return as soon as no request is waiting: no sleep, and no reading on to see whether more lines "
                    "come (the lesson's bare-SDK cell does that only to show what else arrives). The timeout is a "
                    "limit, not a wait.", more=LOOP_HINT)
        return False
    return True


def _judge_partial(outcome, took, after_reply):
    sent = (f"Then the check sent two requests (ids 'quick' and 'unanswered') and a notification between them to a "
            f"server that answered 'quick' after about {PARTIAL_REPLY_S} seconds and never answered 'unanswered', "
            f"with timeout={PARTIAL_TIMEOUT_S}.")
    if outcome is None:
        say_lab_did_not_start()
        return False
    if outcome.hung:
        failed(f"{sent} Your function was still waiting {GRACE_S} seconds after its timeout.",
               hint="Something waited past the deadline: a read that has no timeout waits for ever on a silent "
                    "server, and a wait of a fixed length longer than what is left of the deadline, a wait that "
                    "starts over after each line and a deadline set later than time.monotonic() + timeout all run "
                    "past it.", more=TIMEOUT_HINT)
        return False
    if isinstance(outcome.error, TimeoutError):
        text = str(outcome.error)
        if took < PARTIAL_TIMEOUT_S - EARLY_S:
            failed(f"{sent} Your function raised TimeoutError after {took:.1f} seconds, before its "
                   f"{PARTIAL_TIMEOUT_S}-second timeout had run out.",
                   hint="Wait until the deadline, not for a fixed time: a reply may come at any moment before it.",
                   more="Compute one deadline, time.monotonic() + timeout, before the loop; each wait gets what "
                        "is left of it.")
            return False
        if took > PARTIAL_TIMEOUT_S + LATE_S:
            # What the check saw, not a guess at which wait overran: several loops overrun it by similar amounts.
            reply = f", {after_reply:.1f} seconds after the reply to 'quick' came" if after_reply is not None else ""
            failed(f"{sent} Your function raised TimeoutError only after {took:.1f} seconds{reply}: it ran past the "
                   f"deadline by {took - PARTIAL_TIMEOUT_S:.2f} seconds, and the check allows {LATE_S}.",
                   hint="The timeout is for the whole call, not for each line or each wait: a wait may last only "
                        "what is left of the deadline. Any of these overruns it: a wait of a fixed length (a second, "
                        "say) that looks at the deadline only when it ends; a wait that starts over with its whole "
                        "timeout when a line comes; a deadline set later than time.monotonic() + timeout.",
                   more="Compute one deadline, time.monotonic() + timeout, before the loop; each wait gets what "
                        "is left of it, max(0, deadline - time.monotonic()).")
            return False
        if not _names(text, UNANSWERED["id"]):
            failed(f"{sent} Your function raised TimeoutError, but its message does not name the id still waiting, "
                   f"{UNANSWERED['id']!r}: {outcome.error_text}",
                   hint="Whoever catches the error needs to know which requests went unanswered: put the ids still "
                        "waiting in its message.")
            return False
        if re.search(r"(?<![\w-])(None|null)(?![\w-])", text):
            failed(f"{sent} Your function raised {outcome.error_text}: it names None (or null), which is no id.",
                   hint="The notification has no id and waits for no reply: name only the ids of requests still "
                        "waiting, the frames that have an \"id\" member.")
            return False
        if _names(text, QUICK["id"]):
            failed(f"{sent} Your function raised {outcome.error_text}: it also names 'quick', which had its reply.",
                   hint="Name only the ids still waiting: whoever catches the error must not send again a request "
                        "that was answered.")
            return False
        return True
    if not _negative_wait(sent, outcome):
        return False
    if outcome.error:
        failed(f"{sent} Your function raised {outcome.error_text}, not TimeoutError.",
               hint="When the deadline passes, raise TimeoutError naming the ids still waiting.")
        return False
    failed(f"{sent} Your function returned {short(outcome.value)} instead of raising TimeoutError.",
           hint="A caller cannot tell a partial answer from a whole one: raise TimeoutError naming the ids still "
                "waiting.")
    return False


def _names(text, request_id):
    """Whether the text names the id as a word of its own: 'quick' in "['quick']", not in "quickly"."""
    return re.search(rf"(?<![\w-]){re.escape(request_id)}(?![\w-])", text) is not None


def _negative_wait(sent, outcome):
    """Say so when the function raised ValueError for a negative timeout; False if so."""
    if isinstance(outcome.error, ValueError) and "timeout" in str(outcome.error) and "negative" in str(outcome.error):
        failed(f"{sent} Your function raised {outcome.error_text}, not TimeoutError.", hint=NEGATIVE_HINT)
        return False
    return True


def _judge_no_time(outcome):
    sent = ("Then the check sent one request (id 'no-time') to a server that never answers, with timeout=0: the "
            "deadline has passed before the first wait.")
    if outcome is None:
        say_lab_did_not_start()
        return False
    if outcome.hung:
        failed(f"{sent} Your function was still waiting {GRACE_S} seconds later.",
               hint="With timeout=0 nothing is left to wait: a wait given no timeout (None) waits for ever.",
               more=TIMEOUT_HINT)
        return False
    if not _negative_wait(sent, outcome):
        return False
    if isinstance(outcome.error, TimeoutError):
        if not _names(str(outcome.error), NO_TIME[0]["id"]):
            failed(f"{sent} Your function raised TimeoutError, but its message does not name the id still waiting, "
                   f"{NO_TIME[0]['id']!r}: {outcome.error_text}",
                   hint="Put the ids still waiting in the TimeoutError's message.")
            return False
        return True
    if outcome.error:
        failed(f"{sent} Your function raised {outcome.error_text}, not TimeoutError.",
               hint="When the deadline passes, raise TimeoutError naming the ids still waiting; with timeout=0 it "
                    "has passed before the first read.")
        return False
    failed(f"{sent} Your function returned {short(outcome.value)} instead of raising TimeoutError.",
           hint="With timeout=0 the deadline has passed at once: raise TimeoutError naming the ids still waiting.")
    return False


def _judge_chatter(outcome):
    sent = (f"Then the check gave your function a server that never answers but writes a notification every "
            f"{CHATTY_EVERY_S} seconds (notifications/message and notifications/progress in turn), with "
            f"timeout={SILENT_TIMEOUT_S}.")
    if outcome.hung:
        failed(f"{sent} Your function was still waiting {GRACE_S} seconds after its timeout.",
               hint="The timeout is for the whole call, not for each line: look at the deadline after every line, "
                    "not only when a wait comes back empty. While the server keeps writing notifications, faster "
                    "than any poll, a wait never comes back empty, whether it starts over with every line, has a "
                    "floor (max(0.5, ...)) or is a short poll.",
               more="Compute one deadline, time.monotonic() + timeout, before the loop; each wait gets what is "
                    "left of it.")
        return False
    if isinstance(outcome.error, TimeoutError):
        return True
    if not _negative_wait(sent, outcome):
        return False
    if outcome.error:
        failed(f"{sent} Your function raised {outcome.error_text}, not TimeoutError.",
               hint="From a 2026-07-28 server, any line with a \"method\" is a notification, whichever method it "
                    "names (it may not send requests on stdout): skip them all.",
               more=LOOP_HINT)
        return False
    failed(f"{sent} Your function returned {short(outcome.value)} instead of raising TimeoutError.",
           hint="A notification answers nothing: only a line with the request's id and no \"method\" does.",
           more=LOOP_HINT)
    return False

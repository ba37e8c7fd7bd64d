"""Checks for exercise 01: the stdio loop that matches replies to requests by id."""

from mcpwire import frames
from .attempt import attempt, missing
from .servers import SILENT_COMMAND, raw_process, stdio_lab, stop
from .verdict import failed, not_done, passed, server_said, short

TIMEOUT_S = 5
SILENT_TIMEOUT_S = 1
GRACE_S = 4  # how long past its own timeout a loop may run before the check gives up on it

# Sent first, answered last: a reindex pauses after each note and reports progress on the way.
SLOW = frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 40}}, id="slow",
                      meta={"progressToken": "reindex"})
FAST = frames.request("tools/call", {"name": "search_notes", "arguments": {"query": "spindle", "limit": 1}}, id=2)
NEVER_ANSWERED = frames.notification("notifications/cancelled", {"requestId": "not-in-flight"})
DISCOVER = frames.request("server/discover", id=3)
BATCH = [SLOW, FAST, NEVER_ANSWERED, DISCOVER]
EXPECTED_IDS = ["slow", 2, 3]

LOOP_HINT = ("Keep a set of the ids still waiting; for each line you read, parse it, skip it if it has a "
             "\"method\" (a notification), otherwise file it under its \"id\"; stop when the set is empty.")
TIMEOUT_HINT = ("readline() blocks until a line comes. Read lines on a thread into a queue.Queue (the lesson's pump) "
                "and wait with lines.get(timeout=seconds_left); raise TimeoutError when the deadline passes.")



def _sample_messages(wire):
    """Real messages of each kind: two requests, notifications both ways, a result and an error reply."""
    reindex = frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 0}}, id=11,
                             meta={"progressToken": 11})
    no_envelope = frames.request("tools/list", {}, id="twelve", meta=None)
    result = wire.send(reindex)
    error = wire.send(no_envelope)
    cancelled = frames.notification("notifications/cancelled", {"requestId": 10})
    return [
        (reindex, "request", "it has a method and an id: the sender waits for a reply with that id"),
        (result.notifications[0], "notification", "it has a method and no id: nobody answers it"),
        (result.message, "response", "it has an id and a result, and no method"),
        (cancelled, "notification", "it has a method and no id: nobody answers it"),
        (error.message, "response", "it has an id and an error, and no method: an error reply is a response too"),
        (no_envelope, "request", "it has a method and an id, even though the server refuses it"),
    ]


def check_message_kinds(kind_of, lab=None):
    """kind_of(message) must say "request", "notification" or "response" for real messages from both sides."""
    if missing(kind_of):
        not_done("define kind_of(message) first.")
        return
    with stdio_lab(lab) as wire:
        samples = _sample_messages(wire)
    for message, kind, why in samples:
        outcome = attempt(kind_of, message)
        if outcome.not_done:
            not_done("kind_of still raises NotImplementedError. Look at which of \"method\" and \"id\" a message has.")
            return
        if outcome.error:
            failed(f"kind_of raised {outcome.error_text} for {short(message)}",
                   hint="Not every message has every key: test with `\"id\" in message`.")
            return
        if outcome.value != kind:
            failed(f"kind_of says {outcome.value!r} for {short(message)}", hint=f"It is a {kind}: {why}.")
            return
    passed(f"kind_of sorted {len(samples)} real messages: 2 requests, 2 notifications and 2 responses "
           "(one of them an error).")


def check_stdio_loop(send_and_match):
    """send_and_match(proc, frames, timeout) must return {id: reply} and raise TimeoutError on silence."""
    if missing(send_and_match):
        not_done("define send_and_match(proc, frames, timeout) first.")
        return
    with raw_process() as proc:
        outcome = attempt(send_and_match, proc, [dict(f) for f in BATCH], TIMEOUT_S,
                          guard=TIMEOUT_S + GRACE_S, unblock=lambda: stop(proc))
    if outcome.not_done:
        not_done("send_and_match still raises NotImplementedError. Write every frame, then read lines "
                 "until each request id has its reply.")
        return
    if not _judge_matching(outcome):
        return
    with raw_process(SILENT_COMMAND) as proc:
        silent = attempt(send_and_match, proc, [dict(DISCOVER)], SILENT_TIMEOUT_S,
                         guard=SILENT_TIMEOUT_S + GRACE_S, unblock=lambda: stop(proc))
    if not _judge_silence(silent):
        return
    passed("Your loop filed all three replies under their ids (the slow reindex, sent first, was answered last), "
           "skipped the progress notifications, waited for no reply to the notification, and raised "
           "TimeoutError when a server stayed silent.")


def _judge_matching(outcome):
    sent = "The check sent reindex (id 'slow'), search_notes (id 2), a notification and server/discover (id 3)."
    if outcome.hung:
        failed(f"{sent} Your function was still running {GRACE_S} seconds after its {TIMEOUT_S}-second timeout.",
               hint="Only requests (frames with an id) get a reply: a notification never does. " + TIMEOUT_HINT)
        return False
    if isinstance(outcome.error, TimeoutError):
        failed(f"{sent} Every request was answered, yet your function raised {outcome.error_text}",
               hint="Wait only for frames that have an id; a notification gets no reply. " + LOOP_HINT)
        return False
    if isinstance(outcome.error, KeyError):
        failed(f"{sent} Your function raised {outcome.error_text}: a message without that key broke the loop.",
               hint="The server also writes notifications/progress lines (no id) while reindex runs. " + LOOP_HINT)
        return False
    if outcome.error:
        failed(f"{sent} Your function raised {outcome.error_text}", hint=LOOP_HINT)
        return False
    replies = outcome.value
    if not isinstance(replies, dict):
        failed(f"{sent} Your function returned {type(replies).__name__}; return a dict {{id: reply}}.")
        return False
    missing_ids = [i for i in EXPECTED_IDS if i not in replies]
    if missing_ids:
        failed(f"{sent} Your dict has no reply under {', '.join(map(repr, missing_ids))} "
               f"(its keys: {', '.join(map(repr, replies))}).",
               hint="File each reply under reply[\"id\"], the id of the request it answers. " + LOOP_HINT)
        return False
    for request_id in EXPECTED_IDS:
        reply = replies[request_id]
        if not isinstance(reply, dict):
            failed(f"{sent} Under id {request_id!r} you filed {type(reply).__name__}, not a parsed reply: "
                   f"{short(reply)}", hint="Parse each line with json.loads.")
            return False
        if "method" in reply and "id" not in reply:
            failed(f"{sent} Under id {request_id!r} you filed a {reply['method']} notification, not a reply.",
                   hint="While reindex runs, the server writes progress notifications between the replies. "
                        + LOOP_HINT)
            return False
        if reply.get("id") != request_id:
            failed(f"{sent} The reply you filed under id {request_id!r} answers id {reply.get('id')!r}.",
                   server=server_said(reply),
                   hint="Replies come back in the order the server finishes, not the order you sent. Match them "
                        "by id, never by position.")
            return False
    return True


def _judge_silence(outcome):
    sent = f"Then the check gave your function a server that never answers, with timeout={SILENT_TIMEOUT_S}."
    if outcome.hung:
        failed(f"{sent} Your function was still waiting {GRACE_S} seconds after its timeout.", hint=TIMEOUT_HINT)
        return False
    if isinstance(outcome.error, TimeoutError):
        return True
    if outcome.error:
        failed(f"{sent} Your function raised {outcome.error_text}, not TimeoutError.",
               hint="When the deadline passes, raise TimeoutError naming the ids still waiting.")
        return False
    failed(f"{sent} Your function returned {short(outcome.value)} instead of raising TimeoutError.",
           hint="A caller cannot tell an empty answer from a lost one: raise TimeoutError naming the ids still waiting.")
    return False

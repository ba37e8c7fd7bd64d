"""Checks for exercise 10: follow a progress stream as fractions, and cancel a slow call on stdio.

The cancel check hands the learner a fresh lab server whose wire records every frame
written to it, then watches for anything the server still sends about the cancelled call.
"""

import copy
import json
import math
import numbers
import time

from mcpwire import frames
from mcpwire.errors import WireError, WireTimeout
from mcpwire.reply import Reply
from mcpwire.stdio import StdioWire
from .attempt import attempt, missing
from .servers import REPLY_WAIT_S, STARTUP_WAIT_S, http_lab, stdio_lab
from .verdict import failed, not_done, passed, server_said, short

MIN_PAUSE_MS = 200
WATCH_S = 1.0  # how long past one pause the check watches for signs of life from a cancelled call
LATE_WAIT_S = 0.9  # the task's one-second wait for the cancelled call's reply, less the clock's jitter
GUARD_S = 8  # the solution needs about 2 s once the server is up; a function that waits for ever is stopped here


def _reindex(request_id, token, pause_ms=0):
    return frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": pause_ms}}, id=request_id,
                          meta={"progressToken": token})


def _stdio_messages(wire):
    """Everything a client read while a listen was open and three reindex calls ran at once.

    Tokens 7 and "7" both run, so comparing tokens as text keeps another call's progress.
    """
    start = len(wire.notifications)
    wire.write(frames.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="listen"))
    wire.read(timeout=5)  # the acknowledgement (it stays in wire.notifications)
    wire.write(_reindex("reindex-a", "a", 2))
    wire.write(_reindex("reindex-7", 7, 2))
    wire.write(_reindex("reindex-7-text", "7", 2))
    replies = [wire.wait("reindex-a"), wire.wait("reindex-7"), wire.wait("reindex-7-text")]
    wire.send(frames.notification("notifications/cancelled", {"requestId": "listen"}))
    return wire.notifications[start:] + [reply.message for reply in replies]


def _fraction(params):
    """progress / total, or None when the server left total out (the spec allows that)."""
    return params["progress"] / params["total"] if "total" in params else None


def _expected(messages, token):
    return [_fraction(m["params"]) for m in messages
            if m.get("method") == "notifications/progress" and m["params"].get("progressToken") == token]


def _without_total(messages, position):
    """The messages with `total` left out of the progress notification at `position`, as a server unsure of it would."""
    changed = copy.deepcopy(messages)
    progress = [m for m in changed if m.get("method") == "notifications/progress"]
    progress[position]["params"].pop("total", None)
    return changed


def check_progress_fractions(progress_fractions, lab=None, http_wire=None):
    """progress_fractions(messages, token) must give progress/total of that token's notifications, in order.

    `lab` (stdio) and `http_wire` are lab servers to use; without them the check starts its own.
    """
    if missing(progress_fractions):
        not_done("define progress_fractions(messages, token) first.")
        return
    with stdio_lab(lab) as wire:
        mixed = _stdio_messages(wire)
    with http_lab(http_wire) as http:
        streamed = http.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 0}}, id="reindex-http",
                                meta={"progressToken": "p-http"})
    sse = streamed.notifications + [streamed.message]
    cases = [
        ("the messages read on stdio while three reindex calls ran (tokens 'a', 7 and '7') and a listen was open; "
         "token 'a'", mixed, "a"),
        ("the same stdio messages; token 7 (an integer)", mixed, 7),
        ("the same stdio messages; token '7' (a string)", mixed, "7"),
        ("the events of one SSE reply over HTTP; token 'p-http'", sse, "p-http"),
        ("the same SSE events; token 'other', which no message carries", sse, "other"),
        ("the same SSE events with total left out of the fifth notification, as a server that does not know its "
         "total sends it; token 'p-http'", _without_total(sse, 4), "p-http"),
    ]
    for story, messages, token in cases:
        outcome = attempt(progress_fractions, copy.deepcopy(messages), token)
        if outcome.not_done:
            not_done("progress_fractions still raises NotImplementedError. Keep the notifications/progress whose "
                     "progressToken is token, and divide progress by total.")
            return
        if not _judge_fractions(f"The check gave your function {story}.", messages, token, outcome):
            return
    passed("progress_fractions followed the three interleaved stdio calls and the SSE stream: 13 fractions each, "
           "rising to 1.0, with the listen's acknowledgement, the responses and the other tokens' progress left out, "
           "and None where a notification had no total.")


def _judge_fractions(story, messages, token, outcome):
    expected = _expected(messages, token)
    if outcome.error:
        hint = ("Not every message is a progress notification: a response has no \"method\", the listen's "
                "acknowledgement has no progressToken, and a progress notification may have no total. Test with "
                "message.get(\"method\") and params.get(...).")
        failed(f"{story} Your function raised {outcome.error_text}", hint=hint)
        return False
    given = outcome.value
    if not isinstance(given, (list, tuple)):
        shown = "None" if given is None else short(given)
        failed(f"{story} Your function returned {shown}; return a list of numbers.")
        return False
    if len(given) != len(expected):
        every = _expected_any_token(messages)
        as_text = [_fraction(m["params"]) for m in messages if m.get("method") == "notifications/progress"
                   and str(m["params"].get("progressToken")) == str(token)]
        if len(given) == len(every) and every != expected:
            hint = ("Keep only the notifications whose params.progressToken equals token: the other calls' progress "
                    "is on the same wire.")
        elif len(given) == len(as_text) != len(expected):
            hint = ("7 and \"7\" are different tokens, and both are on this wire: compare the token as it is, "
                    "without converting either side to text.")
        else:
            hint = "One fraction per notifications/progress with this token, in the order they came."
        failed(f"{story} You returned {len(given)} fractions; the token {token!r} has {len(expected)} "
               "progress notifications.", hint=hint)
        return False
    progress = [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"
                and m["params"].get("progressToken") == token]
    for value, want, count in zip(given, expected, progress):
        if want is None:
            if value is not None:
                failed(f"{story} For the notification without a total you returned {short(value)}.",
                       hint="Without params.total there is no fraction to compute; the task asks for None in its "
                            "place, not a guess.")
                return False
            continue
        number = isinstance(value, numbers.Real) and not isinstance(value, bool)  # a Fraction is as right as a float
        if not number or not math.isclose(value, want):
            if number and math.isclose(value, count):
                hint = "That is params.progress itself; divide it by params.total."
            elif number and math.isclose(value, 100 * want):
                hint = "That is a percentage; a fraction runs from 0 to 1."
            else:
                hint = "The fraction of one notification is params[\"progress\"] / params[\"total\"]."
            failed(f"{story} One of your values is {short(value)}, where {want:.4f} was expected.", hint=hint)
            return False
    return True


def _expected_any_token(messages):
    return [_fraction(m["params"]) for m in messages if m.get("method") == "notifications/progress"]


class WatchedWire(StdioWire):
    """A StdioWire that records every frame written to it, with the time it was written.

    Each record also keeps how many notifications had arrived by then, so that the check can tell
    whether the call was seen running before it was cancelled.
    """

    def __init__(self, *args, **kwargs):
        self.written = []
        super().__init__(*args, **kwargs)

    def write(self, frame):
        self.written.append((time.monotonic(), copy.deepcopy(frame), len(self.notifications)))
        super().write(frame)


def check_cancel(cancel_slow_call):
    """cancel_slow_call(wire) must start a slow reindex, cancel it, and return (None, the next reply)."""
    if missing(cancel_slow_call):
        not_done("define cancel_slow_call(wire) first.")
        return
    with WatchedWire.labserver(timeout=STARTUP_WAIT_S) as wire:
        wire.request("server/discover", id="check-ready")  # started and modern before the learner's clock runs
        wire.written.clear()
        wire.timeout = REPLY_WAIT_S
        outcome = attempt(cancel_slow_call, wire, guard=GUARD_S, unblock=wire.close)
        if outcome.not_done:
            not_done("cancel_slow_call still raises NotImplementedError. Write a slow reindex, wait until it runs, "
                     "send notifications/cancelled naming its id, and wait a little for a reply that never comes.")
            return
        if not _judge_cancel(wire, outcome):
            return
    passed("The server stopped your reindex: after your notifications/cancelled no reply and no progress came for it, "
           "and your next request was answered.")


def _judge_cancel(wire, outcome):
    if outcome.hung:
        failed(f"Your function was still running after {GUARD_S} seconds.",
               hint="A cancelled call never gets its reply: a wait for it without a timeout never ends.",
               more="Wait for the cancelled call with a short timeout; mcpwire.WireTimeout when nothing comes is "
                    "the answer you expect.")
        return False
    if isinstance(outcome.error, WireTimeout):
        failed(f"Your function raised {outcome.error_text}",
               hint="A cancelled request never gets a reply, so waiting for it always times out. Catch "
                    "mcpwire.WireTimeout: it is the proof that no reply came.")
        return False
    if isinstance(outcome.error, WireError):
        failed(f"Your function raised {outcome.error_text}",
               hint="Keep the wire open: the check closes the server when your function has returned.")
        return False
    if isinstance(outcome.error, KeyError):
        _explain_key_error(wire, outcome)
        return False
    if outcome.error:
        failed(f"Your function raised {outcome.error_text}")
        return False
    slow = _slow_call(wire.written)
    if slow is None:
        failed("Your function wrote no reindex request.",
               hint="The call to cancel is a tools/call of reindex, written without waiting for its reply.",
               more="Give it a pause_ms long enough to catch it running and a progressToken in its _meta, and "
                    "write it with wire.write(frame).")
        return False
    sent_at, frame = slow
    pause = frame["params"].get("arguments", {}).get("pause_ms", 50)
    token = (frame["params"].get("_meta") or {}).get("progressToken")
    if not isinstance(pause, numbers.Real) or isinstance(pause, bool) or pause < MIN_PAUSE_MS:
        failed(f"Your reindex has pause_ms {short(pause)}: it may finish before your cancel arrives.",
               hint=f"Use a pause_ms of at least {MIN_PAUSE_MS}, so that the call is still running when you cancel it.")
        return False
    if token is None:
        failed("Your reindex has no progressToken, so neither you nor the check can see whether it is running.",
               hint="Progress is only reported for a request that asks for it, with a token of its own.",
               more="The token goes in params._meta.progressToken.")
        return False
    cancelled = _cancel_is_right(wire, sent_at, frame, token)
    if cancelled is None:
        return False
    cancelled_at, seen = cancelled
    value = outcome.value
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        failed(f"Your function returned {short(value, 80)}; return a pair (late_reply, next_reply).")
        return False
    late, following = value
    if not _judge_late(late, frame["id"], _finished(wire.notifications[:seen], token)):
        return False
    if not _stopped(wire, frame["id"], token, pause):
        return False
    return _judge_following(wire, following, cancelled_at)


def _explain_key_error(wire, outcome):
    token = next(((f["params"].get("_meta") or {}).get("progressToken") for _, f, _ in wire.written
                  if f.get("method") == "tools/call" and isinstance(f.get("params"), dict)), None)
    if token is not None and f"id {token!r} was written" in str(outcome.error):
        hint = ("wire.wait(...) takes the id of the request, not its progressToken: the token only labels the "
                "progress notifications.")
    else:
        hint = ("wire.wait(id) collects the reply of a request written with wire.write; wire.request (or wire.send) "
                "waits for the reply itself, so a reindex sent that way had finished before your cancel.")
    failed(f"Your function raised {outcome.error_text}", hint=hint,
           more="Write the reindex with wire.write(frame), and later wait for it with wire.wait(its id, timeout=1).")


def _judge_late(late, request_id, finished_before_cancel):
    if late is None:
        return True
    if isinstance(late, BaseException):
        failed(f"The first value you returned is a {type(late).__name__}, not a reply.",
               hint="When no reply comes for the cancelled call within the second, the task asks for None in its place.")
        return False
    message = late.message if isinstance(late, Reply) else late
    answered = message.get("id") if isinstance(message, dict) else None
    if answered != request_id:
        failed(f"The first value you returned is the reply to your request {_as_json(answered)}, not to the "
               f"reindex you cancelled ({_as_json(request_id)}).",
               server=server_said(message),
               hint="The pair is (the cancelled call's reply or None, the next request's reply), in that order.")
        return False
    if finished_before_cancel:
        failed("A reply came for the call you cancelled: your cancel went out after the call had finished (its "
               "last progress notification, at 100%, had already come), so there was nothing left to stop.",
               server=server_said(message),
               hint="Cancel as soon as the call runs: right after its first progress notification, not after a "
                    "fixed sleep or a wait for something else.",
               more="wait_for_progress(wire, token) returns once the first one has come.")
        return False
    failed("A reply came for the call you cancelled, and your function returned it.",
           server=server_said(message),
           hint="Send notifications/cancelled while the call is running: wait for its first progress notification "
                "first, then cancel.")
    return False


def _finished(notifications, token):
    """Whether the call's progress had reached its total among these notifications."""
    done = [n["params"] for n in notifications if n.get("method") == "notifications/progress"
            and (n.get("params") or {}).get("progressToken") == token]
    return bool(done) and "total" in done[-1] and done[-1]["progress"] >= done[-1]["total"]


def _slow_call(written):
    for sent_at, frame, _ in written:
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        if "id" in frame and frame.get("method") == "tools/call" and params.get("name") == "reindex":
            return sent_at, frame
    return None


def _cancel_is_right(wire, sent_at, frame, token):
    """(when the cancel was written, how many notifications had come by then), or None (after saying what is
    wrong) when it is not right."""
    cancels = [record for record in wire.written if record[1].get("method") == "notifications/cancelled"]
    if not cancels:
        failed("Your function never sent notifications/cancelled.",
               hint="Stopping a call is a message of its own, sent while the call runs.",
               more="It is the notification notifications/cancelled, naming the call in params.requestId.")
        return None
    at, cancel, seen = cancels[0]
    if "id" in cancel:
        failed(f"Your cancel has an id, which makes it a request: {short(frames.dumps(cancel))}",
               server=_answer_to(wire, cancel["id"]),
               hint="Build it with frames.notification(...): a notification has no id, and nobody answers it.")
        return None
    params = cancel.get("params") if isinstance(cancel.get("params"), dict) else {}
    named = params.get("requestId", params.get("id"))
    if "requestId" not in params or named != frame["id"]:
        if named == token and token != frame["id"]:
            why = f"it names {named!r}, the progressToken of the call, not its id {frame['id']!r}"
        elif "requestId" not in params:
            why = f"its params are {short(params)}, with no requestId"
        else:
            why = f"it names {_as_json(named)}, but the call's id is {_as_json(frame['id'])}"
        failed(f"Your notifications/cancelled does not name the call: {why}.",
               hint="params.requestId is the id of the request to stop, exactly as the request wrote it.")
        return None
    if at < sent_at:
        failed("Your notifications/cancelled went out before the reindex itself.",
               hint="A server ignores a cancel for a request it has not seen. Write the request first, wait until "
                    "it runs, then cancel.")
        return None
    if not any(n.get("method") == "notifications/progress" and (n.get("params") or {}).get("progressToken") == token
               for n in wire.notifications[:seen]):
        failed("Your notifications/cancelled went out before any progress of the reindex had come.",
               hint="Wait until the call runs before you cancel it: its first progress notification is the sign.",
               more="wait_for_progress(wire, token) returns once one has come.")
        return None
    return at, seen


def _as_json(value):
    """A value as the wire writes it: 1 and "1" look different, as they are."""
    return json.dumps(value, default=repr)


def _answer_to(wire, request_id):
    """What the server answered to a request, in a few words, from the wire's transcript."""
    for exchange in wire.transcript:
        if exchange.id == request_id and exchange.down_payloads:
            return server_said(Reply.from_bytes(exchange.down_payloads[-1].encode()).message)
    return "nothing yet"


def _progress_count(wire, token):
    return sum(1 for note in wire.notifications if note.get("method") == "notifications/progress"
               and (note.get("params") or {}).get("progressToken") == token)


def _stopped(wire, request_id, token, pause):
    """Watch for signs that the cancelled call still runs: more progress, or a reply after all."""
    before = _progress_count(wire, token)
    watch = min(pause / 1000 + WATCH_S, 3.0)
    reply = _late_reply(wire, request_id, watch)
    after = _progress_count(wire, token)
    if reply is not None or after > before:
        seen = f"a reply ({server_said(reply.message)})" if reply is not None else f"{after - before} more progress"
        failed(f"The server was still working on your reindex after your function returned: {seen} came.",
               server=seen,
               hint="The cancel must reach the server while the call runs and name its id exactly.")
        return False
    return True


def _late_reply(wire, request_id, watch):
    try:
        return wire.wait(request_id, timeout=watch)
    except KeyError:
        pass  # the learner's own wait already gave up on it: a late reply lands in wire.read()
    except WireTimeout:
        return None
    deadline = time.monotonic() + watch
    while (left := deadline - time.monotonic()) > 0:
        reply = wire.read(timeout=left)
        if reply is not None and reply.id == request_id:
            return reply
    return None


def _judge_following(wire, following, cancelled_at):
    message = following.message if isinstance(following, Reply) else following
    if not (isinstance(message, dict) and "result" in message):
        failed(f"The second value you returned is {short(message)}, not the reply to a request sent after the cancel.",
               hint="Send one more request, e.g. wire.request(\"server/discover\"), and return its reply: "
                    "it shows the server still answers.")
        return False
    sent = [at for at, f, _ in wire.written if "method" in f and f.get("id") == message.get("id")]
    if sent and sent[-1] < cancelled_at:
        failed(f"Your last request ({_as_json(message.get('id'))}) went out before your cancel, so its reply "
               "does not show that the server still answers after it.",
               hint="Send the last request after the cancel and after the second of waiting for the cancelled call.")
        return False
    if sent and sent[-1] - cancelled_at < LATE_WAIT_S:
        failed(f"Your last request went out {sent[-1] - cancelled_at:.2f} s after your cancel: you did not wait the "
               "second for a reply to the cancelled call.",
               hint="Only a wait that found nothing shows that no reply came: wait one second for the cancelled "
                    "call's reply, then send the last request.",
               more="wire.wait(its id, timeout=1) raises WireTimeout after the second: catch it.")
        return False
    return True

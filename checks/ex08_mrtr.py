"""Checks for exercise 08: the retry that finishes a multi round-trip request, and a client loop around it.

The check sends the first leg itself, hands the `input_required` reply to the learner's
function, sends the frame it returns, and explains the answer: a reused id, changed
arguments, answers under the wrong key, a changed or missing `requestState`.
"""

import copy
import sysconfig
import traceback
from pathlib import Path

from mcpwire import frames
from mcpwire.validate import validate
from .attempt import RecordingSend, TooManySends, attempt, missing
from .servers import REPLY_WAIT_S, stdio_lab
from .verdict import failed, not_done, passed, server_said, short, shown

MAX_SENDS = 6
ASKS_USER = {frames.CLIENT_CAPABILITIES_KEY: {"elicitation": {"form": {}}}}
SCRATCH = {"title": "Draft to delete", "body": "A note the exercise check deletes.", "tags": ["scratch"]}
SCRATCH_ID = "draft-to-delete"
STATE_HINT = "Copy reply[\"result\"][\"requestState\"] into params[\"requestState\"] exactly as it came: do not parse, strip or re-encode it."


def _first_leg(tool, arguments, request_id):
    return frames.request("tools/call", {"name": tool, "arguments": arguments}, id=request_id, meta=ASKS_USER)


# story, first leg, what the user filled in (None: declined), the id the retry should use, what the final text says
RETRY_CASES = [
    ("tag_note on spindle-density; the user types the tag 'sleep-spindles'",
     _first_leg("tag_note", {"note_id": "spindle-density"}, "tag-1"), {"tag": "sleep-spindles"}, "tag-2",
     "now has the tags"),
    (f"delete_note on {SCRATCH_ID}; the user declines", _first_leg("delete_note", {"note_id": SCRATCH_ID}, "delete-1"),
     None, "delete-2", "Nothing deleted"),
    # Number ids here, string ids above: a retry id turned into text ("4") is another request's id.
    (f"delete_note on {SCRATCH_ID}; the user confirms", _first_leg("delete_note", {"note_id": SCRATCH_ID}, 3),
     {"confirm": True}, 4, "Deleted note"),
]


def _send(wire, frame):
    """The server's answer to a frame, as a parsed message (None for silence)."""
    reply = wire.send_raw(frames.dumps(frame), timeout=REPLY_WAIT_S)
    return None if reply is None else reply.message


def _make_scratch_note(wire):
    """Create the note the delete cases delete (it may be left over from an earlier run: that is fine)."""
    _send(wire, frames.request("tools/call", {"name": "create_note", "arguments": dict(SCRATCH)}, id="scratch"))


def check_retry_frame(retry_frame, lab=None):
    """retry_frame(request, reply, form, new_id) must return the retry that finishes the call."""
    if missing(retry_frame):
        not_done("define retry_frame(request, reply, form, new_id) first.")
        return
    with stdio_lab(lab) as wire:
        _make_scratch_note(wire)
        for story, request, form, new_id, expected in RETRY_CASES:
            first = _send(wire, request)
            if not _is_input_required(first):
                failed(f"The check's own first leg ({story}) did not get an input_required result.",
                       server=server_said(first),
                       hint="Restart the kernel and run the notebook from the top: the lab server may hold "
                            "changes from an earlier run.")
                return
            given = copy.deepcopy(request)
            outcome = attempt(retry_frame, given, copy.deepcopy(first), copy.deepcopy(form), new_id)
            if outcome.not_done:
                not_done("retry_frame still raises NotImplementedError. Copy the request, give it new_id, "
                         "and add inputResponses and requestState to its params.")
                return
            if not _judge_retry(story, request, first, form, outcome, wire, expected, new_id):
                return
            if given != request:
                failed(f"retry_frame changed the request it was given ({story}): {_changes(request, given)}.",
                       hint="The caller still holds its first leg, and a loop builds every retry from it: build "
                            "the retry from a copy that shares nothing with the request.",
                       more="dict(request) and request.copy() copy only the outer dict: params and _meta are "
                            "still the caller's. Copy the nested dicts too.")
                return
    passed("retry_frame finished all three calls: the tag was added, the declined delete deleted nothing, "
           "and the confirmed one deleted the note. Each retry had a new id, the same arguments, answers under "
           "the keys of inputRequests and the requestState as it came.")


def _changes(before, after):
    """What a learner's code changed in the request it was given, in a few words."""
    if not isinstance(after, dict):
        return f"it is now {short(after)}"
    changed = [key for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]
    params, old = after.get("params"), before["params"]
    if changed == ["params"] and isinstance(params, dict):
        added = [key for key in params if key not in old]
        altered = [key for key in old if key in params and params[key] != old[key]]
        words = ([f"its params gained {', '.join(added)}"] if added else []) + (
            [f"its params.{', params.'.join(altered)} changed"] if altered else [])
        return "; ".join(words) or "its params lost keys"
    return f"its {', '.join(changed)} changed"


def _is_input_required(message):
    result = message.get("result") if isinstance(message, dict) else None
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def _judge_retry(story, request, first, form, outcome, wire, expected, new_id):
    told = f"The check sent {request['params']['name']} (id {request['id']!r}) and got input_required: {story}."
    if outcome.error:
        failed(f"{told} retry_frame raised {outcome.error_text}",
               hint="reply is the whole message: the questions are in reply[\"result\"][\"inputRequests\"], the token "
                    "in reply[\"result\"][\"requestState\"]. form is None when the user declined.")
        return False
    retry = outcome.value
    if not isinstance(retry, dict):
        shown = "None" if retry is None else short(retry)
        failed(f"{told} retry_frame returned {shown}; return the retry frame as a dict.")
        return False
    answer = _send(wire, retry)
    said = server_said(answer) if answer is not None else f"nothing within {REPLY_WAIT_S} seconds"
    problem = _what_is_wrong(request, first, form, retry, new_id=new_id)
    if problem is not None:
        what, hint = problem
        failed(f"{told} {what}", server=said, hint=hint)
        return False
    result = answer.get("result") if isinstance(answer, dict) else None
    texts = " ".join(c.get("text", "") for c in (result or {}).get("content", []) if isinstance(c, dict))
    if not isinstance(result, dict) or result.get("resultType") != "complete" or expected not in texts:
        failed(f"{told} The retry looked right, but the call did not finish as expected ({expected!r}).",
               server=said, hint="Compare your frame with tag_retry in the lesson, field by field.")
        return False
    return True


def _what_is_wrong(request, first, form, retry, *, judge_id=True, new_id=None):
    """(what is wrong, hint) for the first mistake in the retry, or None (judge_id=False: the caller chose the id)."""
    params = retry.get("params")
    if judge_id and retry.get("id") == request["id"]:
        return (f"Your retry reuses the first leg's id {request['id']!r}.",
                "The retry is a new request and needs a new id (use new_id). The server cannot tell a reused id "
                "here, because the first leg has its answer; but a client that matches replies by id could take "
                "a late reply to one leg for the other.")
    if judge_id and retry.get("id") != new_id:
        retyped = type(retry.get("id")) is not type(new_id) and str(retry.get("id")) == str(new_id)
        return (f"Your retry has the id {shown(retry.get('id'))}, not new_id ({new_id!r}).",
                "JSON-RPC ids keep their type: 4 and \"4\" are two different ids. Use new_id as given, unconverted."
                if retyped else
                "The caller picks each retry's id (this check's rule: none repeats in its session): use new_id as given.")
    if retry.get("method") != request["method"] or not isinstance(params, dict):
        return (f"Your retry is {short(retry)}, not a {request['method']} request with params.",
                "Start from a copy of the request: same jsonrpc, method and params, a new id.")
    for field in ("name", "arguments"):
        given = params.get(field)
        if field == "arguments" and isinstance(given, dict):  # answers put inside arguments are reported below
            given = {key: value for key, value in given.items() if key not in ("inputResponses", "requestState")}
        if given != request["params"][field]:
            return (f"Your retry changed params.{field}: {short(params.get(field))} instead of "
                    f"{short(request['params'][field])}.",
                    "The requestState is bound to the tool and its arguments: copy them unchanged.")
    if "inputResponses" not in params:
        where = _misplaced(retry, "inputResponses")
        return (f"Your retry has no params.inputResponses{where}, so the server asked its question again.",
                "inputResponses sits in params, next to name and arguments (not inside arguments, not in _meta).")
    responses = params["inputResponses"]
    asked = first["result"]["inputRequests"]
    if not isinstance(responses, dict) or set(responses) != set(asked):
        given = sorted(responses) if isinstance(responses, dict) else short(responses)
        return (f"Your inputResponses are keyed {given}, but the server asked under {sorted(asked)}.",
                "Answer under exactly the keys of reply[\"result\"][\"inputRequests\"]; the server ignores an answer "
                "under any other key and asks again.")
    wanted = {"action": "decline"} if form is None else {"action": "accept", "content": form}
    for key, given in responses.items():
        if given != wanted:
            return (f"Your answer under {key!r} is {short(given)}, but the user's answer is {short(wanted)}.",
                    "An answer is an ElicitResult: {\"action\": \"accept\", \"content\": form} when the user filled in "
                    "the form, {\"action\": \"decline\"} (no content) when form is None.")
    state = first["result"]["requestState"]
    if "requestState" not in params:
        where = _misplaced(retry, "requestState")
        return (f"Your retry has no params.requestState{where}. Without it the server has no record that it asked, "
                "so it asked again.", STATE_HINT)
    if params["requestState"] != state:
        return ("Your retry's requestState is not the one the server sent "
                f"({_how_it_differs(params['requestState'], state)}).", STATE_HINT)
    lost = _meta_changes(request, params.get("_meta"))
    if lost:
        return (f"Your retry's params._meta does not keep the request's envelope: {lost}.",
                "The retry is the same request again: keep its _meta envelope as it was, elicitation capability "
                "included. A server may refuse to ask a client that no longer says it can show a form.")
    if validate(retry):
        return (f"Your retry is not a valid request: {'; '.join(validate(retry))}.",
                "Keep the request's _meta envelope (with its elicitation capability) in params.")
    return None


def _meta_changes(request, meta):
    """How the retry's _meta lost or changed the request's envelope ('' if it kept it: a key added, such as a
    progressToken, changes nothing the server needs)."""
    old = request["params"].get("_meta")
    if old is None:
        return ""
    if not isinstance(meta, dict):
        return f"it is {short(meta)}"
    return "; ".join(f"{key} is {short(meta[key]) if key in meta else 'missing'} instead of {short(old[key])}"
                     for key in sorted(old) if key not in meta or meta[key] != old[key])


def _misplaced(retry, field):
    params = retry.get("params") if isinstance(retry.get("params"), dict) else {}
    arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    if field in arguments:
        return " (you put it inside arguments, where the tool sees an unknown argument)"
    if field in meta:
        return " (you put it in _meta)"
    if field in retry:
        return " (you put it next to params, at the top of the frame)"
    return ""


def _how_it_differs(given, state):
    if not isinstance(given, str):
        return f"yours is {type(given).__name__}, not a string"
    if given.strip("\"'") == state:
        return "yours has quotes around it"
    if state.endswith(given) or state.startswith(given):
        return "yours is cut short"
    return "it differs in some characters"


class ScriptedUser:
    """Plays the user: records each question it is shown, answers with the same form every time."""

    def __init__(self, form):
        self.form = form
        self.questions = []

    def __call__(self, question):
        self.questions.append(copy.deepcopy(question))
        return copy.deepcopy(self.form)


# story, request, the user's form (None: declines), questions the user should see, frames the loop should send
LOOP_CASES = [
    ("tag_note on targeted-memory-reactivation; the user types 'cueing'",
     _first_leg("tag_note", {"note_id": "targeted-memory-reactivation"}, "loop-1"), {"tag": "cueing"}, 1, 2),
    ("search_notes, which asks nothing", frames.request("tools/call", {"name": "search_notes", "arguments": {
        "query": "spindle", "limit": 1}}, id="loop-2", meta=ASKS_USER), {"tag": "never-asked"}, 0, 1),
    # A number id among string ids: JSON-RPC allows both, and a retry id built by string arithmetic breaks on it.
    (f"delete_note on {SCRATCH_ID} (request id 3, a number); the user declines",
     _first_leg("delete_note", {"note_id": SCRATCH_ID}, 3), None, 1, 2),
    ("tag_note from a client that did not declare elicitation (the server answers -32021)",
     frames.request("tools/call", {"name": "tag_note", "arguments": {"note_id": "welcome"}}, id="loop-4"),
     {"tag": "never-asked"}, 0, 1),
]


STUBBORN_ROUNDS = 2  # max_rounds the check passes when the server keeps asking


class StubbornSend(RecordingSend):
    """A server that asks again after every answer: replays its first input_required reply under each new id."""

    def __init__(self, wire, first_reply, *, max_sends):
        super().__init__(wire, max_sends=max_sends, wait_s=REPLY_WAIT_S)
        self.first_reply = first_reply

    def __call__(self, frame):
        self._one_more()
        self.sent.append(copy.deepcopy(frame))
        reply = {**copy.deepcopy(self.first_reply), "id": frame.get("id") if isinstance(frame, dict) else None}
        self.replies.append(reply)
        return copy.deepcopy(reply)


def check_finish_call(finish_call, lab=None):
    """finish_call(send, request, ask_user, max_rounds) must ask the user once per question and return the final reply."""
    if missing(finish_call):
        not_done("define finish_call(send, request, ask_user) first.")
        return
    used = {}  # every id sent in this session: a retry id may not repeat one from an earlier call either
    with stdio_lab(lab) as wire:
        _make_scratch_note(wire)
        for story, request, form, questions, sends in LOOP_CASES:
            send, user = RecordingSend(wire, max_sends=MAX_SENDS, wait_s=REPLY_WAIT_S), ScriptedUser(form)
            outcome = attempt(finish_call, send, copy.deepcopy(request), user)
            if outcome.not_done:
                not_done("finish_call still raises NotImplementedError. Send the request; while the reply is "
                         "input_required, ask the user and send the retry.")
                return
            if not _judge_loop(f"The check called finish_call with {story}.", outcome, send, user, questions,
                               sends, used):
                return
        if not _judge_stubborn(finish_call, wire, used):
            return
    passed("finish_call asked the user once for each question, sent each retry with a fresh id, returned at once when "
           "no input was needed, handed back the -32021 error instead of asking a user the client cannot show, and "
           f"stopped after max_rounds={STUBBORN_ROUNDS} retries to a server that kept asking.")


ID_HINT = ("Each retry is a new request: 2026-07-28 asks for an id that differs from the first leg's and from "
           "any request still waiting; this check asks for more, an id no earlier frame used, in this call or an "
           "earlier one (2025-11-25's rule within a session), which is what keeps a transcript readable.")
ID_MORE = ("Give every request an id of its own: an id made from the request's id and the round stays unique; a "
           "fixed suffix or a count restarting at 1 does not.")


def _ids_fresh(story, send, used):
    """Fail when a frame reuses an id sent before in this call or in an earlier call of the same session."""
    ids = [frame.get("id") for frame in send.sent if isinstance(frame, dict)]
    if len(set(map(repr, ids))) != len(ids):
        failed(f"{story} Your loop sent the ids {ids}: one of them twice.", hint=ID_HINT, more=ID_MORE)
        return False
    for frame_id in ids:
        if repr(frame_id) in used:
            failed(f"{story} Your loop sent the id {frame_id!r}, which an earlier call in the same session "
                   f"already used ({used[repr(frame_id)]}).", hint=ID_HINT, more=ID_MORE)
            return False
    used.update({repr(frame_id): f"while finishing {ids[0]!r}" for frame_id in ids})
    return True


def _judge_stubborn(finish_call, wire, used):
    request = _first_leg("tag_note", {"note_id": "welcome"}, "stubborn-1")
    first = _send(wire, request)
    story = (f"The check called finish_call with max_rounds={STUBBORN_ROUNDS} and a server that asks again after "
             "every answer.")
    send, user = StubbornSend(wire, first, max_sends=MAX_SENDS), ScriptedUser({"tag": "again"})
    outcome = attempt(finish_call, send, copy.deepcopy(request), user, STUBBORN_ROUNDS)
    if isinstance(outcome.error, TooManySends):
        failed(f"{story} Your loop sent {MAX_SENDS} frames and was still going: it never stopped at max_rounds.",
               hint="A server may keep asking for ever; max_rounds is the client's limit on how often it answers.",
               more="Count the retries and stop once max_rounds of them were sent, returning the last reply.")
        return False
    if isinstance(outcome.error, TypeError) and not send.sent:
        failed(f"{story} Calling it raised {outcome.error_text}",
               hint="The task's signature has a fourth parameter, max_rounds=3.")
        return False
    if outcome.error:
        _report_exception(story, outcome.error, send)
        return False
    wanted = 1 + STUBBORN_ROUNDS
    if len(send.sent) != wanted:
        failed(f"{story} Your loop sent {len(send.sent)} frame(s); it should send {wanted}: the request and "
               f"{STUBBORN_ROUNDS} retries.",
               hint="Count the retries, not the frames, and check the count before each retry: an off-by-one "
                    "sends one retry too many or too few.")
        return False
    if not _ids_fresh(story, send, used):
        return False
    if outcome.value != send.replies[-1]:
        failed(f"{story} After the last retry your function returned {short(outcome.value)}, not the last reply.",
               hint="When max_rounds runs out, return the last reply as it is, input_required and all: the caller "
                    "decides what to tell the user.")
        return False
    return True


def _report_exception(story, error, send):
    """The learner's function raised: match the hint to what went wrong."""
    last = send.replies[-1] if send.replies else None
    where = _learner_line(error)
    where_text = f" at `{where}`" if where else ""
    if isinstance(error, TimeoutError):
        failed(f"{story} No reply came to a frame your function sent: {error}",
               hint="Only a frame with an id is answered; send whole requests.")
    elif isinstance(last, dict) and "error" in last and isinstance(error, (KeyError, TypeError, AttributeError)):
        failed(f"{story} After an error reply, your function raised {_error_text(error)}{where_text}",
               server=server_said(last),
               hint="An error reply has no \"result\": return such a reply as it is instead of reading into it.")
    elif isinstance(error, TypeError) and ("'int' and 'str'" in str(error) or "not \"int\"" in str(error)):
        failed(f"{story} Your function raised {_error_text(error)}{where_text}",
               hint="A request id is a number or a string (JSON-RPC allows both): build a retry id that works for "
                    "either, such as f\"{request['id']}-retry-{round}\", or pick one of your own.")
    else:
        failed(f"{story} Your function raised {_error_text(error)}{where_text}",
               server=server_said(last) if last is not None else None,
               hint="The exception comes from your own code, not from the server's reply: read that line again.")


def _error_text(error):
    return f"{type(error).__name__}: {error}"


def _learner_line(error):
    """The source line of the learner's code where the exception was raised, if it can be read."""
    library = (str(Path(__file__).parent), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"])
    own = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(library)]
    return (own[-1].line or "").strip() if own else ""


def _judge_loop(story, outcome, send, user, questions, sends, used):
    if isinstance(outcome.error, TooManySends):
        failed(f"{story} Your loop sent {MAX_SENDS} frames and was still going.",
               server=server_said(send.replies[-1]) if send.replies else None,
               hint="Stop as soon as a reply is not input_required. If the server keeps asking, your retry is wrong: "
                    "run check_retry_frame first.")
        return False
    if not _judge_retries(story, send, user):
        return False
    if outcome.error:
        _report_exception(story, outcome.error, send)
        return False
    if not _ids_fresh(story, send, used):
        return False
    if len(user.questions) != questions:
        asked = "no question" if questions == 0 else "one question"
        failed(f"{story} Your loop asked the user {len(user.questions)} time(s); the server asked {asked}.",
               server=server_said(send.replies[0]) if send.replies else None,
               hint="Ask the user only while the reply's result has resultType \"input_required\", once per question.")
        return False
    for question in user.questions:
        if not (isinstance(question, dict) and "message" in question and "requestedSchema" in question):
            failed(f"{story} The user was shown {short(question)}.",
                   hint="ask_user gets what the server asks: a message and the schema of the form.",
                   more="That is the params of one entry of inputRequests, not the entry itself.")
            return False
    if len(send.sent) != sends:
        failed(f"{story} Your loop sent {len(send.sent)} frame(s); it should send {sends}.",
               server=server_said(send.replies[-1]) if send.replies else None,
               hint="One frame for the request, then one retry for each input_required reply.")
        return False
    reply = outcome.value
    if reply != send.replies[-1]:
        failed(f"{story} Your function returned {short(reply)}, not the last reply the server sent.",
               server=server_said(send.replies[-1]),
               hint="Return the reply send() gave you for the last frame.")
        return False
    return True


def _judge_retries(story, send, user):
    """Blame a wrong retry on retry_frame, not on the loop, when the server asked again because of it."""
    for number, retry in enumerate(send.sent[1:], start=1):
        prompt = send.replies[number - 1] if number - 1 < len(send.replies) else None
        if not (isinstance(retry, dict) and _is_input_required(prompt)):
            continue
        problem = _what_is_wrong(send.sent[0], prompt, user.form, retry, judge_id=False)
        if problem is not None:
            what, hint = problem
            failed(f"{story} Retry {number} was wrong: {what}",
                   server=server_said(send.replies[number]) if number < len(send.replies) else None,
                   hint="finish_call sends the frames retry_frame makes: run check_retry_frame first.", more=hint)
            return False
    return True

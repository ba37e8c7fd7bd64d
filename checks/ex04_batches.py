"""Exercise 04, the batch: predict what one POST of a JSON array gets, then send its requests one by one.

2026-07-28 has no batch form: the lab server answers an array with one `-32600` for the
whole of it, `"id": null`, status 400, and runs none of its requests.
"""

import json
import types

from mcpwire import frames
from .attempt import attempt
from .servers import http_lab
from .verdict import failed, not_done, passed, said, short, shown

# Ids of both JSON types, 1 and "1" (two requests whose ids have the same text), and a query that is not ASCII:
# a body must keep both exactly as the array holds them.
BATCH = [
    frames.request("server/discover", id=1),
    frames.request("tools/list", id="1"),
    frames.request("tools/call", {"name": "search_notes", "arguments": {"query": "Tomás", "limit": 1}}, id=2),
]
BATCH_BODY = frames.dumps(BATCH)
BATCH_IDS = [frame["id"] for frame in BATCH]


def check_batch(prediction, split_batch, lab=None):
    """Score the (status, code, id) prediction for BATCH_BODY, then POST each body split_batch(BATCH_BODY) returns."""
    if prediction is ... or isinstance(prediction, (tuple, list)) and any(part is ... for part in prediction):
        not_done("replace each ... in batch_prediction with what you expect")
        return
    if not isinstance(prediction, (tuple, list)):
        failed(f"batch_prediction is {short(prediction)}, a {type(prediction).__name__}; write it as three values "
               "in a tuple: (status, code, id).")
        return
    with http_lab(lab) as http:
        reply = http.send_raw(BATCH_BODY)
        if reply is None or not isinstance(reply.message, dict):
            failed("The lab server did not answer the batch with a JSON-RPC message.",
                   hint="Run the first cell of this notebook again to start a fresh server.")
            return
        actual = (reply.status, reply.code, reply.message.get("id"))
        if not _prediction_right(prediction, actual, reply):
            return
        outcome = attempt(split_batch, BATCH_BODY)
        if outcome.not_done:
            not_done("split_batch")
            return
        if outcome.error is not None:
            failed(f"split_batch raised {outcome.error_text}.",
                   hint="Parse the body first: it is JSON text, and the array holds one request per item.")
            return
        bodies = outcome.value
        if isinstance(bodies, types.GeneratorType):  # one body per request all the same, handed out one by one
            listed = attempt(list, bodies)
            if listed.error is not None:
                failed(f"split_batch's generator raised {listed.error_text}.",
                       hint="Parse the body first: it is JSON text, and the array holds one request per item.")
                return
            bodies = listed.value
        _check_bodies(bodies, http)


def _prediction_right(prediction, actual, reply):
    answered = f"HTTP {reply.status} with {said(reply.message)}, id {actual[2]!r}"
    if len(prediction) != 3:
        failed(f"batch_prediction has {len(prediction)} values; it needs three: (status, code, id).",
               server=answered)
        return False
    status, code, reply_id = prediction
    if not _is_int(status) or not (code is None or _is_int(code)):
        failed(f"batch_prediction holds status {status!r} and code {code!r}; both are whole numbers "
               "(the code None when you expect no error).",
               hint="An HTTP status is an integer such as 200, and a JSON-RPC error code an integer such as -32601.")
        return False
    if status != actual[0] or code != actual[1]:
        if status == 200:
            problem = (f"You predicted status 200, as if the server answered the batch with an array of "
                       f"responses; the server answered status {actual[0]} and code {actual[1]}.")
        else:
            problem = f"You predicted status {status!r} and code {code!r}."
        failed(problem, server=answered,
               hint="Does 2026-07-28 have a batch form? Read what the transport says the body of a POST holds.",
               more="An array is JSON but not a request: which JSON-RPC code is for a message that parses "
                    "but is not a valid request?")
        return False
    if reply_id != actual[2]:
        failed(f"Status and code are right, but you predicted the error carries id {reply_id!r}.",
               server=answered,
               hint="The error answers the array as a whole. Which id could the server read from an array?",
               more="When no id can be read, JSON-RPC writes null, which is None in Python.")
        return False
    return True


def _check_bodies(bodies, http):
    if not isinstance(bodies, (list, tuple)):
        failed(f"split_batch returned {short(bodies)}; it must return a list of bodies, one per request.")
        return
    if len(bodies) == 1 and _as_text(bodies[0]) == BATCH_BODY:
        failed("split_batch returned the batch itself as one body, so the server refuses it again.",
               server=said(http.send_raw(BATCH_BODY).message),
               hint="Each body holds one item of the array, not the array.")
        return
    if len(bodies) < len(BATCH) and _lost_for_its_ids_text(bodies):
        failed(f"split_batch returned {len(bodies)} bodies for the {len(BATCH)} requests in the batch: one of the "
               "requests with ids 1 (a number) and \"1\" (a string) is gone, as if they were one request.",
               hint="JSON-RPC ids keep their type: 1 and \"1\" are two different requests. Keep every item of the "
                    "array; never key requests by str(id).")
        return
    if len(bodies) != len(BATCH):
        failed(f"split_batch returned {len(bodies)} bodies for the {len(BATCH)} requests in the batch.",
               hint="One body per item of the array: no more, no fewer.")
        return
    texts = []
    for number, (body, request) in enumerate(zip(bodies, BATCH), start=1):
        text = _as_text(body)
        if text is None:
            failed(f"Body {number} is {short(body)}: a body must be JSON text (a str, or UTF-8 bytes) or a dict.",
                   hint="JSON-RPC messages are UTF-8: encode a body with .encode() (UTF-8, the default), never with "
                        "latin-1 or another code page." if isinstance(body, bytes) else None)
            return
        changed = _changed_members(text, request)
        if changed:
            failed(f"Body {number} is not request {number} of the batch as it was: {changed}.",
                   hint="Each item of the array is already a complete request: send it as it is, in the order "
                        "of the array.")
            return
        texts.append(text)
    answered = []
    for number, text in enumerate(texts, start=1):
        reply = http.send_raw(text)
        if reply is None or not reply.ok:
            server = said(reply.message) if reply is not None else "nothing within the timeout"
            cut = not _is_json(text) and not text.lstrip().startswith("{'")
            failed(f"Body {number} was refused: {short(text)}", server=server,
                   hint="Parse the body with json.loads and write each item of the array with json.dumps: cutting "
                        "the text (at \"},{\" or at commas) also cuts the objects inside a request." if cut else
                        "Each body must be one JSON-RPC request written as JSON, the way json.dumps writes it "
                        "(str() of a dict writes Python, with single quotes).")
            return
        answered.append(reply.message.get("id"))
    if answered != BATCH_IDS:
        failed(f"Your bodies were answered with ids {answered}; the batch held ids {BATCH_IDS}, in that order.",
               hint="Keep each request as it is, id included, and keep the order of the array.")
        return
    passed(f"A batch gets one -32600 with id null (HTTP 400) and runs nothing; your {len(bodies)} bodies were "
           f"each answered on their own, ids {', '.join(map(json.dumps, answered))} (a number and a string kept "
           "apart).")


def _lost_for_its_ids_text(bodies):
    """True when the bodies hold one of the two requests whose ids have the same text, and not the other."""
    ids = []
    for body in bodies:
        text = _as_text(body)
        message = json.loads(text) if text is not None and _is_json(text) else None
        ids.append(message.get("id") if isinstance(message, dict) else None)
    same_text = [i for i in BATCH_IDS if str(i) == "1"]
    kept = [i for i in same_text if any(type(i) is type(found) and i == found for found in ids)]
    return len(kept) == 1


def _changed_members(text, request):
    """What differs between a body and the request it should carry, in a few words ("" when nothing does)."""
    try:
        sent = json.loads(text)
    except ValueError:
        return ""  # not JSON: sending it shows the server's -32700, which says more
    if not isinstance(sent, dict):
        return f"it is {short(sent, 60)}, not one request object"
    differs = [name for name in sorted(set(sent) | set(request)) if sent.get(name, ...) != request.get(name, ...)]
    if not differs:
        return ""
    return "its " + ", ".join(f"{name} is {_member(sent[name]) if name in sent else 'missing'}" for name in differs)


def _member(value):
    """A member's value: a string quoted (so "2" and 2 differ on the page), anything else as compact JSON."""
    return shown(value) if isinstance(value, str) else short(value)


def _is_json(text):
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _as_text(body):
    if isinstance(body, str):
        return body
    if isinstance(body, bytes):  # what actually goes on the wire; JSON-RPC messages are UTF-8
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if isinstance(body, dict):
        try:
            return json.dumps(body, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError):  # a value JSON cannot hold
            return None
    return None

"""Exercise 08's checks (the retry frame, finish a call): right answers pass, wrong ones name their mistake."""

import copy

import pytest

import checks
from mcpwire import frames


def stub(*args):
    raise NotImplementedError("your code here")


def retry_frame_right(request, reply, form, new_id):
    result = reply["result"]
    answer = {"action": "decline"} if form is None else {"action": "accept", "content": form}
    retry = copy.deepcopy(request)
    retry["id"] = new_id
    retry["params"]["inputResponses"] = {key: answer for key in result["inputRequests"]}
    retry["params"]["requestState"] = result["requestState"]
    return retry


def changed(**how):
    """retry_frame with one mistake: each keyword replaces one part of the right retry."""
    def wrong(request, reply, form, new_id):
        retry = retry_frame_right(request, reply, form, new_id)
        params = retry["params"]
        if "id" in how:
            retry["id"] = request["id"]
        if "state" in how:
            params["requestState"] = how["state"](params["requestState"])
        if "key" in how:
            params["inputResponses"] = {how["key"]: value for value in params["inputResponses"].values()}
        if "arguments" in how:
            params["arguments"] = how["arguments"]
        return retry
    return wrong


def test_retry_frame_right(verdict, lab):
    assert verdict(checks.check_retry_frame, retry_frame_right, lab).startswith("✓ retry_frame finished all three calls")


def test_retry_frame_stub(verdict, lab):
    assert verdict(checks.check_retry_frame, stub, lab).startswith("not done yet")


def test_retry_frame_reusing_the_first_id(verdict, lab):
    out = verdict(checks.check_retry_frame, changed(id=True), lab)
    assert out.startswith("✗") and "reuses the first leg's id 'tag-1'" in out and "new id" in out


def test_retry_frame_with_a_quoted_state(verdict, lab):
    out = verdict(checks.check_retry_frame, changed(state=lambda state: f'"{state}"'), lab)
    assert "requestState is not the one the server sent (yours has quotes around it)" in out
    assert "error -32602 'Invalid or expired requestState'" in out


def test_retry_frame_with_the_wrong_key(verdict, lab):
    out = verdict(checks.check_retry_frame, changed(key="tag"), lab)
    assert "keyed ['tag'], but the server asked under ['labserver.tools:ask_tag']" in out
    assert "resultType 'input_required'" in out  # the server asked again


def test_retry_frame_with_changed_arguments(verdict, lab):
    out = verdict(checks.check_retry_frame, changed(arguments={"note_id": "welcome"}), lab)
    assert "changed params.arguments" in out and "-32602" in out


def test_retry_frame_answers_inside_arguments(verdict, lab):
    def inside(request, reply, form, new_id):
        retry = retry_frame_right(request, reply, form, new_id)
        retry["params"]["arguments"]["inputResponses"] = retry["params"].pop("inputResponses")
        return retry
    out = verdict(checks.check_retry_frame, inside, lab)
    assert "no params.inputResponses (you put it inside arguments" in out


def finish_call_right(send, request, ask_user, max_rounds=3):
    reply = send(request)
    for round_number in range(1, max_rounds + 1):
        result = reply.get("result", {})
        if result.get("resultType") != "input_required":
            return reply
        question = next(iter(result["inputRequests"].values()))
        reply = send(retry_frame_right(request, reply, ask_user(question["params"]), f"{request['id']}-{round_number}"))
    return reply


def test_finish_call_right(verdict, lab):
    assert verdict(checks.check_finish_call, finish_call_right, lab).startswith("✓ finish_call asked the user once")


def test_finish_call_that_crashes_on_an_error_reply(verdict, lab):
    def trusting(send, request, ask_user, max_rounds=3):
        reply = send(request)
        while reply["result"]["resultType"] == "input_required":
            question = next(iter(reply["result"]["inputRequests"].values()))
            reply = send(retry_frame_right(request, reply, ask_user(question["params"]), f"{request['id']}-again"))
        return reply
    out = verdict(checks.check_finish_call, trusting, lab)
    assert "tag_note from a client that did not declare elicitation" in out
    assert "raised KeyError: 'result'" in out and "-32021" in out


def test_finish_call_that_always_asks(verdict, lab):
    def always_asks(send, request, ask_user, max_rounds=3):
        reply = send(request)
        result = reply.get("result", {})
        questions = list(result.get("inputRequests", {}).values()) or [{"params": {}}]
        form = ask_user(questions[0]["params"])
        if result.get("resultType") == "input_required":
            reply = send(retry_frame_right(request, reply, form, "retry"))
        return reply
    out = verdict(checks.check_finish_call, always_asks, lab)
    assert "search_notes, which asks nothing" in out and "asked the user 1 time(s); the server asked no question" in out


def test_finish_call_reusing_the_request_id(verdict, lab):
    def same_id(send, request, ask_user, max_rounds=3):
        reply = send(request)
        result = reply.get("result", {})
        if result.get("resultType") == "input_required":
            question = next(iter(result["inputRequests"].values()))
            reply = send(retry_frame_right(request, reply, ask_user(question["params"]), request["id"]))
        return reply
    out = verdict(checks.check_finish_call, same_id, lab)
    assert "sent the ids ['loop-1', 'loop-1']" in out


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


# --- 08 task 1 · the retry frame -----------------------------------------------------------------------

def retry_frame(*, deep=True, new_id=True, state=True, state_change=None, keys=None, decline_content=False,
                where="params", keep_arguments=True):
    def work(request, reply, form, given_id):
        result = reply["result"]
        if form is None:
            answer = {"action": "decline", "content": {}} if decline_content else {"action": "decline"}
        else:
            answer = {"action": "accept", "content": form}
        retry = copy.deepcopy(request) if deep else dict(request)
        if new_id:
            retry["id"] = given_id
        target = {"params": retry["params"], "arguments": retry["params"]["arguments"], "top": retry}[where]
        target["inputResponses"] = {key: answer for key in (keys or result["inputRequests"])}
        if state:
            token = result["requestState"]
            target["requestState"] = state_change(token) if state_change else token
        if not keep_arguments:
            retry["params"]["arguments"] = {}
        return retry
    return work


def retry_frame_rebuilt_without_meta(request, reply, form, new_id):
    result = reply["result"]
    answer = {"action": "decline"} if form is None else {"action": "accept", "content": form}
    return frames.request("tools/call", {
        "name": request["params"]["name"], "arguments": request["params"]["arguments"],
        "inputResponses": {key: answer for key in result["inputRequests"]},
        "requestState": result["requestState"]}, id=new_id)


def retry_frame_capabilities_emptied(request, reply, form, new_id):
    retry = retry_frame()(request, reply, form, new_id)
    retry["params"]["_meta"][frames.CLIENT_CAPABILITIES_KEY] = {}
    return retry


def retry_frame_built_fresh(request, reply, form, new_id):
    params = {key: value for key, value in request["params"].items()}
    asked = reply["result"]["inputRequests"]
    params["inputResponses"] = {key: ({"action": "accept", "content": dict(form)} if form else {"action": "decline"})
                                for key in asked}
    params["requestState"] = reply["result"]["requestState"]
    return {"jsonrpc": "2.0", "id": new_id, "method": request["method"], "params": params}


def retry_frame_with_a_progress_token(request, reply, form, new_id):
    retry = retry_frame()(request, reply, form, new_id)
    retry["params"]["_meta"] = {"progressToken": new_id, **reversed_dict(retry["params"]["_meta"])}
    return retry


def reversed_dict(mapping):
    return dict(reversed(list(mapping.items())))


RETRY_RIGHT = [
    pytest.param(retry_frame(), id="solution"),
    pytest.param(retry_frame_built_fresh, id="new-dicts-no-deepcopy"),
    # The envelope kept whole, in another order and with a progressToken added, is still the request's envelope.
    pytest.param(retry_frame_with_a_progress_token, id="envelope-reordered-with-a-progress-token"),
]
RETRY_WRONG = [
    pytest.param(retry_frame(deep=False), ("changed the request it was given", "gained inputResponses",
                                           "copy only the outer dict"), id="shallow-copy"),
    pytest.param(retry_frame(new_id=False), ("reuses the first leg's id",), id="same-id"),
    pytest.param(retry_frame(state=False), ("no params.requestState", "asked again"), id="no-state"),
    pytest.param(retry_frame(state_change=lambda t: f'"{t}"'), ("quotes around it",), id="quoted-state"),
    pytest.param(retry_frame(state_change=lambda t: t[:-4]), ("cut short",), id="truncated-state"),
    pytest.param(retry_frame(keys=["answer"]), ("keyed ['answer']",), id="wrong-key"),
    pytest.param(retry_frame(decline_content=True), ("the user's answer is", "decline"), id="decline-with-content"),
    pytest.param(retry_frame(where="arguments"), ("inside arguments",), id="answers-inside-arguments"),
    pytest.param(retry_frame(where="top"), ("next to params",), id="answers-beside-params"),
    pytest.param(retry_frame(keep_arguments=False), ("changed params.arguments",), id="arguments-dropped"),
    pytest.param(lambda request, reply, form, new_id: retry_frame()(request, reply, form, 1),
                 ("has the id 1, not new_id ('tag-2')",), id="id-1-instead-of-new-id"),
    pytest.param(retry_frame_rebuilt_without_meta, ("params._meta", "elicitation capability"),
                 id="rebuilt-with-the-default-envelope"),
    pytest.param(retry_frame_capabilities_emptied, ("params._meta", "elicitation capability"),
                 id="capabilities-emptied"),
    # Ids of both JSON types: the third case's new_id is the number 4, so text is another id.
    pytest.param(lambda request, reply, form, new_id: retry_frame()(request, reply, form, str(new_id)),
                 ("has the id '4', not new_id (4)", "keep their type"), id="new-id-turned-into-text"),
    pytest.param(lambda request, reply, form, new_id: retry_frame()(request, reply, form, f"{request['id']}-retry"),
                 ("has the id 'tag-1-retry', not new_id ('tag-2')",), id="id-made-from-the-first-legs"),
]


@pytest.mark.parametrize("work", RETRY_RIGHT)
def test_retry_frame_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_retry_frame, work, lab).startswith("✓ retry_frame finished all three calls")


@pytest.mark.parametrize("work, phrases", RETRY_WRONG)
def test_retry_frame_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_retry_frame, work, lab)
    assert fails_naming(out, phrases), out


# --- 08 task 2 · finish a call -------------------------------------------------------------------------------

def finish_call(*, retry=retry_frame(), bound=0, ids="fresh", question="params", get=True, ret="last"):
    """The solution's loop; `bound` shifts the number of retries (an off-by-one), None ignores max_rounds."""
    def work(send, request, ask_user, max_rounds=3):
        reply = first = send(request)
        rounds = 0
        while True:
            result = reply.get("result", {}) if get else reply["result"]
            if result.get("resultType") != "input_required":
                break
            if bound is not None and rounds >= max_rounds + bound:
                break
            rounds += 1
            asked = next(iter(result["inputRequests"].values()))
            form = ask_user(asked["params"] if question == "params" else asked)
            new_id = (request["id"] + "-again" if ids == "concatenated" else
                      {"fresh": f"{request['id']}-{rounds}", "same": request["id"], "fixed": "retry",
                       "suffix": f"{request['id']}-retry", "counter": rounds}[ids])
            reply = send(retry(request, reply, form, new_id))
        return first if ret == "first" else reply
    return work


def finish_call_recursive(send, request, ask_user, max_rounds=3, _round=1, _reply=None):
    reply = _reply or send(request)
    result = reply.get("result") or {}
    if result.get("resultType") != "input_required" or _round > max_rounds:
        return reply
    (asked,) = result["inputRequests"].values()
    retry = retry_frame()(request, reply, ask_user(asked["params"]), f"r{_round}-{request['id']}")
    return finish_call_recursive(send, request, ask_user, max_rounds, _round + 1, send(retry))


def finish_call_with_arithmetic_slip(send, request, ask_user, max_rounds=3):
    reply = send(request)
    rounds = "0"
    while (reply.get("result") or {}).get("resultType") == "input_required" and rounds < max_rounds:
        rounds += 1
    return reply


FINISH_RIGHT = [
    pytest.param(finish_call(), id="solution"),
    pytest.param(finish_call_recursive, id="recursive"),
]
FINISH_WRONG = [
    pytest.param(finish_call(bound=None), ("never stopped at max_rounds",), id="max-rounds-ignored"),
    pytest.param(finish_call(bound=1), ("sent 4 frame(s); it should send 3",), id="one-retry-too-many"),
    pytest.param(finish_call(bound=-1), ("sent 2 frame(s); it should send 3",), id="one-retry-too-few"),
    pytest.param(finish_call(retry=retry_frame(state=False)), ("Retry 1 was wrong", "no params.requestState",
                                                               "run check_retry_frame"), id="retry-without-state"),
    pytest.param(finish_call(ids="same"), ("sent the ids", "one of them twice"), id="reuses-the-request-id"),
    pytest.param(finish_call(ids="suffix"), ("max_rounds=2", "sent the ids", "one of them twice"),
                 id="same-retry-id-every-round"),
    pytest.param(finish_call(ids="counter"), ("sent the id 1", "an earlier call in the same session"),
                 id="count-from-1-in-every-call"),
    pytest.param(finish_call(question="whole"), ("The user was shown", "message and the schema"),
                 id="shows-the-whole-input-request"),
    pytest.param(finish_call(get=False), ("After an error reply", "KeyError", "return such a reply as it is"),
                 id="reads-result-of-an-error"),
    pytest.param(finish_call(ret="first"), ("not the last reply",), id="returns-the-first-reply"),
    pytest.param(finish_call_with_arithmetic_slip, ("TypeError", "rounds < max_rounds", "your own code"),
                 id="own-type-error"),
    # Ids of both JSON types: the declining delete's request id is the number 3.
    pytest.param(finish_call(ids="concatenated"), ("request id 3, a number", "TypeError",
                                                   "a number or a string"), id="retry-id-by-string-concatenation"),
]


@pytest.mark.parametrize("work", FINISH_RIGHT)
def test_finish_call_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_finish_call, work, lab).startswith("✓ finish_call asked the user once")


@pytest.mark.parametrize("work, phrases", FINISH_WRONG)
def test_finish_call_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_finish_call, work, lab)
    assert fails_naming(out, phrases), out

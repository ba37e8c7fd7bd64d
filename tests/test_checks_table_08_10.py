"""Exercises 08 and 10: each wrong answer a learner might write gets ✗ with a message naming its mistake."""

import copy
import time

import pytest

import checks
from mcpwire import WireTimeout, frames


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
            new_id = {"fresh": f"{request['id']}-{rounds}", "same": request["id"], "fixed": "retry",
                      "suffix": f"{request['id']}-retry", "counter": rounds}[ids]
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
]


@pytest.mark.parametrize("work", FINISH_RIGHT)
def test_finish_call_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_finish_call, work, lab).startswith("✓ finish_call asked the user once")


@pytest.mark.parametrize("work, phrases", FINISH_WRONG)
def test_finish_call_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_finish_call, work, lab)
    assert fails_naming(out, phrases), out


# --- 10 task 1 · progress fractions ----------------------------------------------------------------------------

def progress_fractions(*, token_check=True, method_check=True, scale=1, divide=True, use_get=True):
    def work(messages, token):
        fractions = []
        for message in messages:
            params = (message.get("params") or {}) if use_get else message["params"]
            if method_check and message.get("method") != "notifications/progress":
                continue
            if token_check and params.get("progressToken") != token:
                continue
            if "progress" not in params:
                continue
            if divide and "total" not in params:  # the spec lets a server leave total out: no fraction then
                fractions.append(None)
                continue
            fractions.append(scale * (params["progress"] / params["total"] if divide else params["progress"]))
        return fractions
    return work


FRACTIONS_RIGHT = [
    pytest.param(progress_fractions(), id="solution"),
    pytest.param(lambda messages, token: [m["params"]["progress"] / m["params"]["total"] if "total" in m["params"] else None
                                          for m in messages if m.get("method") == "notifications/progress"
                                          and m["params"]["progressToken"] == token], id="comprehension"),
]
FRACTIONS_WRONG = [
    pytest.param(progress_fractions(token_check=False), ("fractions; the token 'a' has", "progressToken equals token"),
                 id="every-token"),
    pytest.param(progress_fractions(divide=False), ("params.progress itself",), id="progress-not-divided"),
    pytest.param(progress_fractions(scale=100), ("a percentage",), id="percentages"),
    pytest.param(progress_fractions(use_get=False), ("raised KeyError",), id="reads-params-of-a-response"),
    pytest.param(lambda messages, token: [m["params"]["progress"] / m["params"]["total"] for m in messages
                                          if str((m.get("params") or {}).get("progressToken")) == token],
                 ("token 7",), id="token-compared-as-text"),
    pytest.param(lambda messages, token: None, ("returned None",), id="returns-nothing"),
]


@pytest.mark.parametrize("work", FRACTIONS_RIGHT)
def test_progress_fractions_right_answers_pass(verdict, lab, http, work):
    assert verdict(checks.check_progress_fractions, work, lab, http).startswith("✓ progress_fractions followed")


@pytest.mark.parametrize("work, phrases", FRACTIONS_WRONG)
def test_progress_fractions_wrong_answers_name_their_mistake(verdict, lab, http, work, phrases):
    out = verdict(checks.check_progress_fractions, work, lab, http)
    assert fails_naming(out, phrases), out


# --- 10 task 2 · cancel a slow call --------------------------------------------------------------------------------

def cancel_slow_call(*, pause=300, token=True, wait_running=True, name="id", cancel_as="notification",
                     wait_timeout=1, next_request=True):
    def work(wire):
        meta = {"progressToken": "slow-progress"} if token else None
        slow = frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": pause}}, id="slow-call",
                              meta=meta)
        wire.write(slow)
        if wait_running:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not any(
                    n.get("method") == "notifications/progress" for n in wire.notifications):
                time.sleep(0.01)
        named = {"id": "slow-call", "token": "slow-progress"}[name]
        if cancel_as == "notification":
            wire.send(frames.notification("notifications/cancelled", {"requestId": named}))
        else:
            wire.write(frames.request("notifications/cancelled", {"requestId": named}, id="cancel"))
        try:
            late = wire.wait("slow-call", timeout=wait_timeout)
        except WireTimeout:
            late = None
        return late, (wire.request("server/discover") if next_request else None)
    return work


CANCEL_WRONG = [
    pytest.param(cancel_slow_call(name="token"), ("does not name the call", "progressToken of the call"),
                 id="names-the-token"),
    pytest.param(cancel_slow_call(cancel_as="request"), ("has an id, which makes it a request",), id="cancel-as-request"),
    pytest.param(cancel_slow_call(pause=10), ("pause_ms 10",), id="too-fast-to-catch"),
    pytest.param(cancel_slow_call(token=False, wait_running=False), ("no progressToken",), id="no-token"),
    pytest.param(cancel_slow_call(wait_timeout=60), ("still running after",), id="waits-for-ever"),
    pytest.param(cancel_slow_call(next_request=False), ("not the reply to a request sent after the cancel",),
                 id="no-next-request"),
]


def test_cancel_right_answer_passes(verdict):
    assert verdict(checks.check_cancel, cancel_slow_call()).startswith("✓ The server stopped your reindex")


@pytest.mark.parametrize("work, phrases", CANCEL_WRONG)
def test_cancel_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_cancel, work)
    assert fails_naming(out, phrases), out

"""Exercise 08 checks: a right retry passes; reused ids, changed tokens, wrong keys and changed arguments are explained."""

import copy


import checks


def stub(*args):
    raise NotImplementedError("your code here")


def retry_frame(request, reply, form, new_id):
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
        retry = retry_frame(request, reply, form, new_id)
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
    assert verdict(checks.check_retry_frame, retry_frame, lab).startswith("✓ retry_frame finished all three calls")


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
        retry = retry_frame(request, reply, form, new_id)
        retry["params"]["arguments"]["inputResponses"] = retry["params"].pop("inputResponses")
        return retry
    out = verdict(checks.check_retry_frame, inside, lab)
    assert "no params.inputResponses (you put it inside arguments" in out


def finish_call(send, request, ask_user, max_rounds=3):
    reply = send(request)
    for round_number in range(1, max_rounds + 1):
        result = reply.get("result", {})
        if result.get("resultType") != "input_required":
            return reply
        question = next(iter(result["inputRequests"].values()))
        reply = send(retry_frame(request, reply, ask_user(question["params"]), f"{request['id']}-{round_number}"))
    return reply


def test_finish_call_right(verdict, lab):
    assert verdict(checks.check_finish_call, finish_call, lab).startswith("✓ finish_call asked the user once")


def test_finish_call_that_crashes_on_an_error_reply(verdict, lab):
    def trusting(send, request, ask_user, max_rounds=3):
        reply = send(request)
        while reply["result"]["resultType"] == "input_required":
            question = next(iter(reply["result"]["inputRequests"].values()))
            reply = send(retry_frame(request, reply, ask_user(question["params"]), f"{request['id']}-again"))
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
            reply = send(retry_frame(request, reply, form, "retry"))
        return reply
    out = verdict(checks.check_finish_call, always_asks, lab)
    assert "search_notes, which asks nothing" in out and "asked the user 1 time(s); the server asked no question" in out


def test_finish_call_reusing_the_request_id(verdict, lab):
    def same_id(send, request, ask_user, max_rounds=3):
        reply = send(request)
        result = reply.get("result", {})
        if result.get("resultType") == "input_required":
            question = next(iter(result["inputRequests"].values()))
            reply = send(retry_frame(request, reply, ask_user(question["params"]), request["id"]))
        return reply
    out = verdict(checks.check_finish_call, same_id, lab)
    assert "sent the ids ['loop-1', 'loop-1']" in out

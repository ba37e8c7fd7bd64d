"""`python -m labserver --tasks` serves the io.modelcontextprotocol/tasks extension: every status, every error,
on stdio and on Streamable HTTP. Each task frame is checked with mcpwire.tasks.problems (the schema's rules)."""

from __future__ import annotations

import time

import pytest

from labserver.tasks import jobs
from labserver.tasks.tools import ReviewNightArguments
from mcpwire import HttpWire, StdioWire, frames, tasks

FORM = {"elicitation": {"form": {}}}
DECLARED = tasks.declare()
DECLARED_FORM = tasks.declare(FORM)
LEGACY = frames.LEGACY_PROTOCOL_VERSION


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    return tmp_path_factory.mktemp("notes")


@pytest.fixture(scope="module", params=["stdio", "http"])
def wire(request, notes):
    start = StdioWire.labserver if request.param == "stdio" else HttpWire.labserver
    with start("--tasks", "--notes", str(notes)) as lab:
        yield lab


def call(wire, name, arguments, meta=DECLARED, **params):
    return wire.request("tools/call", {"name": name, "arguments": arguments, **params}, meta=meta)


def start_task(wire, name, arguments, meta=DECLARED):
    reply = call(wire, name, arguments, meta)
    assert tasks.problems(reply.result, result_type="task") == [], reply.text
    return reply.result["taskId"]


def poll_until(wire, task_id, done, *, capabilities=None, limit_s=30.0):
    """Every tasks/get result until done(result) is true."""
    seen = []
    ends = time.monotonic() + limit_s
    while time.monotonic() < ends:
        reply = tasks.get(wire, task_id, capabilities=capabilities)
        assert tasks.problems(reply.result, result_type="complete") == [], reply.text
        seen.append(reply.result)
        if done(reply.result):
            return seen
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never got there; last seen {seen[-1]}")


def status_is(*statuses):
    return lambda task: task["status"] in statuses


def test_discover_advertises_the_extension_with_no_settings(wire):
    assert wire.request("server/discover").result["capabilities"]["extensions"] == {tasks.EXTENSION: {}}


def test_without_the_flag_the_lab_is_unchanged(stdio_wire):
    assert "extensions" not in stdio_wire.request("server/discover").result["capabilities"]
    names = [tool["name"] for tool in stdio_wire.request("tools/list").result["tools"]]
    assert "score_night" not in names and "review_night" not in names


def test_the_task_tools_are_listed_after_the_lab_tools(wire):
    names = [tool["name"] for tool in wire.request("tools/list").result["tools"]]
    assert names[-2:] == ["score_night", "review_night"]


def test_an_undeclared_call_is_answered_synchronously(wire):
    reply = call(wire, "score_night", {"night": "P07", "epochs": 3, "pause_ms": 0}, meta=frames.DEFAULT)
    assert reply.result["resultType"] == "complete"
    assert reply.result["content"][0]["text"] == "Night P07: 3 epochs scored. W 2, N1 1."


def test_a_task_member_in_params_is_ignored(wire):
    reply = call(wire, "score_night", {"night": "P07", "epochs": 1, "pause_ms": 0}, meta=frames.DEFAULT,
                 task={"ttl": 60000})
    assert reply.result["resultType"] == "complete" and "taskId" not in reply.result


def test_other_tools_stay_synchronous_when_declared(wire):
    reply = call(wire, "search_notes", {"query": "spindle", "limit": 1})
    assert reply.result["resultType"] == "complete" and reply.result["structuredContent"]["hits"]


def test_a_declared_slow_call_is_a_flat_task_that_tasks_get_resolves_at_once(wire):
    reply = call(wire, "score_night", {"night": "P07", "epochs": 4, "pause_ms": 200})
    task = reply.result
    assert list(task)[:1] == ["resultType"] and task["resultType"] == "task" and "task" not in task
    assert task["status"] == "working" and task["pollIntervalMs"] == 1000 and task["ttlMs"] == 600_000
    assert task["createdAt"] == task["lastUpdatedAt"]
    first = tasks.get(wire, task["taskId"]).result
    assert first["resultType"] == "complete" and first["taskId"] == task["taskId"]


def test_working_to_completed_with_a_changing_status_message(wire):
    task_id = start_task(wire, "score_night", {"night": "P07", "epochs": 5, "pause_ms": 200})
    seen = poll_until(wire, task_id, status_is("completed"))
    messages = [task.get("statusMessage") for task in seen if task["status"] == "working"]
    assert len(set(messages)) >= 2, messages
    stamps = [task["lastUpdatedAt"] for task in seen]
    assert stamps == sorted(stamps)
    assert seen[-1]["result"] == {"content": [{"type": "text", "text": "Night P07: 5 epochs scored. W 2, N1 1, N2 2."}],
                                  "isError": False}


def test_a_tool_error_completes_the_task_it_does_not_fail_it(wire):
    task_id = start_task(wire, "score_night", {"night": "P99"})
    last = poll_until(wire, task_id, status_is("completed", "failed"))[-1]
    assert last["status"] == "completed" and last["result"]["isError"] is True
    assert "No recording for night 'P99'" in last["result"]["content"][0]["text"]


def test_a_task_only_tool_refuses_an_undeclared_call_with_32021(wire):
    reply = call(wire, "review_night", {"night": "P07"}, meta=frames.DEFAULT)
    assert reply.code == -32021
    assert reply.error["data"] == {"requiredCapabilities": {"extensions": {tasks.EXTENSION: {}}}}


def test_the_review_asks_through_form_elicitation_so_it_needs_that_declared_too(wire):
    reply = call(wire, "review_night", {"night": "P07"}, meta=DECLARED)
    assert reply.code == -32021 and reply.error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


def test_input_required_round_trips_through_tasks_update(wire):
    task_id = start_task(wire, "review_night", {"night": "P07", "pause_ms": 10}, DECLARED_FORM)
    asked = poll_until(wire, task_id, status_is("input_required"))[-1]
    assert list(asked["inputRequests"]) == ["epoch-7"]
    question = asked["inputRequests"]["epoch-7"]
    assert question["method"] == "elicitation/create" and question["params"]["mode"] == "form"
    assert "jsonrpc" not in question and "id" not in question
    ack = tasks.update(wire, task_id, {"epoch-7": {"action": "accept", "content": {"stage": "REM"}},
                                       "no-such-key": {"action": "accept", "content": {}}})
    assert ack.result == {"resultType": "complete", "_meta": ack.result["_meta"]}
    second = poll_until(wire, task_id, lambda task: task["status"] == "input_required"
                        and "epoch-14" in task["inputRequests"])[-1]
    assert list(second["inputRequests"]) == ["epoch-14"]  # a new key: keys are never reused
    # The first answer again, now for an answered key, changes nothing.
    tasks.update(wire, task_id, {"epoch-7": {"action": "accept", "content": {"stage": "N1"}}})
    tasks.update(wire, task_id, {"epoch-14": {"action": "decline"}})
    last = poll_until(wire, task_id, status_is("completed", "failed"))[-1]
    text = last["result"]["content"][0]["text"]
    assert "epoch 7 REM (your answer)" in text and "epoch 14 N1 (no answer: the scorer kept its guess)" in text


def test_a_malformed_answer_fails_the_task_with_a_json_rpc_error(wire):
    task_id = start_task(wire, "review_night", {"night": "P08", "pause_ms": 10}, DECLARED_FORM)
    poll_until(wire, task_id, status_is("input_required"))
    tasks.update(wire, task_id, {"epoch-7": {"action": "accept", "content": {"stage": "N4"}}})
    last = poll_until(wire, task_id, status_is("completed", "failed"))[-1]
    assert last["status"] == "failed" and last["error"]["code"] == -32602
    assert last["statusMessage"] == last["error"]["message"] and "epoch-7" in last["statusMessage"]


def test_review_nights_recheck_is_listed_with_todays_two_seconds_as_its_default(wire):
    review = next(tool for tool in wire.request("tools/list").result["tools"] if tool["name"] == "review_night")
    recheck = review["inputSchema"]["properties"]["recheck_ms"]
    assert (recheck["type"], recheck["default"], recheck["minimum"], recheck["maximum"]) == ("integer", 2000, 100, 2000)
    assert "recheck_ms" not in review["inputSchema"]["required"]


class Recorder:
    """A job's Progress that answers every question with the scorer's second candidate and keeps each pause."""

    def __init__(self):
        self.pauses = []

    def status(self, message):
        pass

    def pause(self, seconds):
        self.pauses.append(seconds)

    def ask(self, key, request, message):
        return {"action": "accept", "content": {"stage": request["params"]["requestedSchema"]["properties"]["stage"]["enum"][1]}}


@pytest.mark.parametrize("given, reread_s", [({}, 2.0), ({"recheck_ms": 300}, 0.3)])
def test_the_scorer_rereads_each_answer_for_recheck_ms(given, reread_s):
    progress = Recorder()
    arguments = ReviewNightArguments.model_validate({"night": "P07", "pause_ms": 0, **given}).model_dump()
    jobs.review_night(arguments, progress)
    assert [pause for pause in progress.pauses if pause] == [reread_s, reread_s]  # one reread per question


def test_a_short_recheck_moves_on_soon_after_the_answer(wire):
    task_id = start_task(wire, "review_night", {"night": "P07", "pause_ms": 0, "recheck_ms": 100}, DECLARED_FORM)
    poll_until(wire, task_id, status_is("input_required"))
    tasks.update(wire, task_id, {"epoch-7": {"action": "accept", "content": {"stage": "REM"}}})
    answered = time.monotonic()
    poll_until(wire, task_id, lambda task: "epoch-14" in task.get("inputRequests", {}))
    assert time.monotonic() - answered < 1.5  # the default reread alone would take 2 s
    tasks.update(wire, task_id, {"epoch-14": {"action": "decline"}})
    assert poll_until(wire, task_id, status_is("completed", "failed"))[-1]["status"] == "completed"


@pytest.mark.parametrize("value", [50, 2001, "soon"])
def test_a_bad_recheck_is_refused_as_any_bad_argument_is(wire, value):
    reply = call(wire, "review_night", {"night": "P07", "recheck_ms": value}, DECLARED_FORM)
    assert "taskId" not in reply.result and reply.result["isError"] is True
    text = reply.result["content"][0]["text"]
    assert text.startswith("Error executing tool review_night: 1 validation error") and "\nrecheck_ms\n" in text


def test_cancel_is_an_empty_ack_and_the_task_ends_cancelled(wire):
    task_id = start_task(wire, "score_night", {"night": "P07", "pause_ms": 300})
    ack = tasks.cancel(wire, task_id)
    assert {key for key in ack.result if key != "_meta"} == {"resultType"} and ack.result["resultType"] == "complete"
    last = poll_until(wire, task_id, status_is("completed", "failed", "cancelled"))[-1]
    assert last["status"] == "cancelled" and "result" not in last and "error" not in last


def test_cancelling_a_waiting_task_ends_it_too(wire):
    task_id = start_task(wire, "review_night", {"night": "P07", "pause_ms": 10}, DECLARED_FORM)
    poll_until(wire, task_id, status_is("input_required"))
    tasks.cancel(wire, task_id)
    assert poll_until(wire, task_id, status_is("cancelled", "completed", "failed"))[-1]["status"] == "cancelled"


def test_cancelling_a_finished_task_leaves_it_finished(wire):
    task_id = start_task(wire, "score_night", {"night": "P07", "epochs": 1, "pause_ms": 0})
    poll_until(wire, task_id, status_is("completed"))
    assert tasks.cancel(wire, task_id).result["resultType"] == "complete"
    assert tasks.get(wire, task_id).result["status"] == "completed"


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_an_unknown_task_is_32602_task_not_found(wire, method):
    params = {"taskId": "00000000-0000-4000-8000-000000000000"}
    if method == "tasks/update":
        params["inputResponses"] = {}
    reply = wire.request(method, params, meta=DECLARED, **_name_header(wire, params["taskId"]))
    assert reply.code == -32602 and reply.error["message"].endswith("Task not found")


@pytest.mark.parametrize("method", ["tasks/get", "tasks/cancel"])
def test_tasks_methods_need_the_declaration_on_that_request(wire, method):
    task_id = start_task(wire, "score_night", {"night": "P07", "epochs": 1, "pause_ms": 0})
    reply = wire.request(method, {"taskId": task_id}, **_name_header(wire, task_id))
    assert reply.code == -32021
    assert reply.error["data"] == {"requiredCapabilities": {"extensions": {tasks.EXTENSION: {}}}}


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
def test_the_removed_2025_methods_are_method_not_found(wire, method):
    reply = wire.request(method, {"taskId": "x"}, meta=DECLARED, **_name_header(wire, "x"))
    assert reply.code == -32601


def test_a_listen_with_task_ids_follows_the_task_to_its_end(wire):
    task_id = start_task(wire, "score_night", {"night": "P07", "epochs": 3, "pause_ms": 150})
    frame = frames.request("subscriptions/listen", {"notifications": {"taskIds": [task_id, "not-a-task"]}},
                           id=9000 + wire.next_id, meta=DECLARED)
    received = _listen(wire, frame, until=lambda notes: notes[-1]["params"].get("status") == "completed")
    ack, *updates = received
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}  # only the ids it accepted
    assert updates and all(note["method"] == "notifications/tasks" for note in updates)
    for note in updates:
        params = dict(note["params"])
        assert params.pop("_meta") == {"io.modelcontextprotocol/subscriptionId": frame["id"]}
        assert tasks.problems(params) == []
    assert updates[-1]["params"]["result"]["content"][0]["text"].startswith("Night P07: 3 epochs scored")


def test_a_listen_without_task_ids_is_the_sdks_own(wire):
    frame = frames.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}},
                           id=9500 + wire.next_id)
    ack = _listen(wire, frame, until=lambda notes: True, stream_s=1.0)[0]
    assert ack["params"]["notifications"] == {"toolsListChanged": True}


def test_listening_for_tasks_needs_the_declaration(wire):
    frame = frames.request("subscriptions/listen", {"notifications": {"taskIds": ["x"]}}, id=9800 + wire.next_id)
    reply = wire.send(frame, stream_for=5.0)
    assert reply.code == -32021


def test_a_2025_11_25_client_never_gets_a_task(notes):
    with StdioWire.labserver("--tasks", "--notes", str(notes)) as lab:
        capabilities = {"extensions": {tasks.EXTENSION: {}}}
        assert lab.send(frames.legacy_initialize(LEGACY, capabilities, id=1)).ok
        lab.send(frames.legacy_initialized())
        reply = lab.send(frames.legacy_request("tools/call", {
            "name": "score_night", "arguments": {"night": "P07", "epochs": 1, "pause_ms": 0}, "task": {"ttl": 60000}},
            id=2))
        assert "taskId" not in reply.result and reply.result["content"][0]["text"].startswith("Night P07")
        assert lab.send(frames.legacy_request("tasks/get", {"taskId": "x"}, id=3)).code == -32601


@pytest.mark.parametrize("start", [StdioWire.labserver, HttpWire.labserver], ids=["stdio", "http"])
def test_an_expired_task_is_32602_task_has_expired(notes, start):
    with start("--tasks", "--notes", str(notes), "--task-ttl", "300") as lab:
        task_id = start_task(lab, "score_night", {"night": "P07", "epochs": 1, "pause_ms": 0})
        time.sleep(0.5)
        reply = tasks.get(lab, task_id)
        assert reply.code == -32602 and reply.error["message"] == "Failed to retrieve task: Task has expired"
        assert tasks.cancel(lab, task_id).error["message"] == "Failed to cancel task: Task has expired"


def test_http_tasks_requests_carry_mcp_name_like_tool_names(notes):
    with HttpWire.labserver("--tasks", "--notes", str(notes)) as lab:
        task_id = start_task(lab, "score_night", {"night": "P07", "epochs": 1, "pause_ms": 0})
        missing = lab.request("tasks/get", {"taskId": task_id}, meta=DECLARED)
        wrong = lab.request("tasks/get", {"taskId": task_id}, meta=DECLARED, headers={"Mcp-Name": "another"})
        right = lab.request("tasks/get", {"taskId": task_id}, meta=DECLARED, headers={"Mcp-Name": task_id})
        assert (missing.status, missing.code) == (wrong.status, wrong.code) == (400, -32020)
        assert right.status == 200 and right.result["taskId"] == task_id
        unknown = lab.request("tasks/get", {"taskId": "x"}, meta=DECLARED, headers={"Mcp-Name": "x"})
        assert (unknown.status, unknown.code) == (400, -32602)


def _name_header(wire, task_id):
    return {"headers": {"Mcp-Name": task_id}} if wire.transport == "http" else {}


def _listen(wire, frame, until, stream_s=4.0):
    """The listen stream's notifications, up to the first list of them until(...) accepts (or stream_s)."""
    if wire.transport == "http":
        return list(wire.send(frame, stream_for=stream_s).notifications)
    wire.write(frame)
    notes = []
    ends = time.monotonic() + stream_s
    while time.monotonic() < ends and not (notes and until(notes)):
        message = wire.read(0.2)
        if message is not None:
            notes.append(message.message)
    wire.notify("notifications/cancelled", {"requestId": frame["id"]})  # on stdio, how a listen ends
    return notes

"""`python -m labserver --conformance` adds the official conformance suite's fixture tool names as aliases over
the lab's own task machinery (labserver.conformance); without the flag none of them exists. Each alias is checked
here on the wire the way the suite's tasks-* and server-stateless scenarios use it, without Node."""

from __future__ import annotations

import time

import pytest

from labserver.cli import parse_args
from labserver.conformance import FIXTURE
from mcpwire import HttpWire, frames, tasks

FIXTURES = ("greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "test_missing_capability")
DECLARED = tasks.declare()
DECLARED_FORM = tasks.declare({"elicitation": {"form": {}}})
TASK_ONLY_REFUSAL = {"requiredCapabilities": {"extensions": {tasks.EXTENSION: {}}}}


@pytest.fixture(scope="module")
def lab():
    with HttpWire.labserver("--conformance") as wire:
        yield wire


@pytest.fixture(scope="module")
def tasks_lab():
    with HttpWire.labserver("--tasks") as wire:
        yield wire


def names(wire):
    return [tool["name"] for tool in wire.request("tools/list").result["tools"]]


def call(wire, name, arguments, meta=DECLARED):
    return wire.request("tools/call", {"name": name, "arguments": arguments}, meta=meta)


def start_task(wire, name, arguments, meta=DECLARED):
    reply = call(wire, name, arguments, meta)
    assert tasks.problems(reply.result, result_type="task") == [], reply.text
    return reply.result["taskId"]


def poll_until(wire, task_id, *statuses, limit_s=30.0):
    ends = time.monotonic() + limit_s
    while time.monotonic() < ends:
        task = tasks.get(wire, task_id).result
        assert tasks.problems(task, result_type="complete") == [], task
        if task["status"] in statuses:
            return task
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {statuses}; last seen {task}")


def test_the_flag_is_off_by_default_implies_tasks_and_says_what_it_is_for(capsys):
    assert parse_args([]).conformance is False
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    assert "conformance suite" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("wire", ["http_wire", "tasks_lab"])
def test_without_the_flag_no_fixture_name_is_listed_or_callable(wire, request):
    wire = request.getfixturevalue(wire)
    assert not set(FIXTURES) & set(names(wire))
    for name in FIXTURES:
        result = call(wire, name, {"seconds": 0} if name == "slow_compute" else {}).result
        assert result["resultType"] == "complete" and result["isError"] is True, (name, result)
        assert result["content"][0]["text"] == f"Unknown tool: {name}"


def test_without_the_flag_the_task_tools_still_come_last(tasks_lab):
    assert names(tasks_lab)[-2:] == ["score_night", "review_night"]


def test_with_the_flag_every_fixture_is_listed_after_the_lab_and_labelled(lab, tasks_lab):
    listed = {tool["name"]: tool for tool in lab.request("tools/list").result["tools"]}
    lab_tools = names(tasks_lab)
    # Other fixture modules (labserver.conformance_content) add their own names after these.
    assert [name for name in listed if name in lab_tools or name in FIXTURES] == [*lab_tools, *FIXTURES]
    assert list(listed)[:len(lab_tools)] == lab_tools
    assert lab.request("server/discover").result["capabilities"]["extensions"] == {tasks.EXTENSION: {}}
    for name in FIXTURES:
        assert listed[name]["description"].startswith(FIXTURE), name


def test_greet_is_a_plain_synchronous_call(lab):
    result = call(lab, "greet", {"name": "sep-2243"}).result
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "Hello, sep-2243!"


def test_slow_compute_is_score_nights_task_when_declared(lab):
    reply = call(lab, "slow_compute", {"seconds": 0.4, "label": "lifecycle-create"})
    assert reply.result["resultType"] == "task" and reply.result["pollIntervalMs"] == 1000
    done = poll_until(lab, reply.result["taskId"], "completed", "failed")
    assert done["status"] == "completed" and done["result"]["isError"] is False
    assert done["result"]["content"][0]["text"].startswith("Night P07: 20 epochs scored.")


def test_slow_compute_is_a_plain_call_when_not_declared(lab):
    result = call(lab, "slow_compute", {"seconds": 0, "label": "capability-no-ext"}, meta=frames.DEFAULT).result
    assert result["resultType"] == "complete" and "taskId" not in result
    assert result["content"][0]["text"].startswith("Night P07: 20 epochs scored.")


def test_slow_compute_settles_cancelled_when_cancelled(lab):
    task_id = start_task(lab, "slow_compute", {"seconds": 60, "label": "lifecycle-cancel"})
    assert tasks.cancel(lab, task_id).result["resultType"] == "complete"
    assert poll_until(lab, task_id, "completed", "failed", "cancelled")["status"] == "cancelled"


def test_failing_job_ends_completed_with_is_error(lab):
    done = poll_until(lab, start_task(lab, "failing_job", {}), "completed", "failed")
    assert done["status"] == "completed" and done["result"]["isError"] is True
    assert "No recording for night 'P99'" in done["result"]["content"][0]["text"]


@pytest.mark.parametrize("name", ["failing_job", "protocol_error_job"])
def test_the_task_only_fixtures_refuse_an_undeclared_call_with_32021(lab, name):
    reply = call(lab, name, {}, meta=frames.DEFAULT)
    assert reply.status == 400 and reply.code == -32021 and reply.error["data"] == TASK_ONLY_REFUSAL


def test_protocol_error_job_ends_failed_with_a_json_rpc_error(lab):
    done = poll_until(lab, start_task(lab, "protocol_error_job", {}), "completed", "failed")
    assert done["status"] == "failed" and "result" not in done
    assert done["error"] == {"code": -32603, "message": "Internal error"}


def test_confirm_delete_reaches_input_required_and_completes_on_the_answer(lab):
    task_id = start_task(lab, "confirm_delete", {"filename": "mrtr-input.txt"}, DECLARED_FORM)
    asked = poll_until(lab, task_id, "input_required")
    assert list(asked["inputRequests"]) == ["confirm"]
    assert asked["inputRequests"]["confirm"]["method"] == "elicitation/create"
    ack = tasks.update(lab, task_id, {"confirm": {"action": "accept", "content": {"confirm": True}}})
    assert ack.result["resultType"] == "complete" and "status" not in ack.result
    done = poll_until(lab, task_id, "completed", "failed", "cancelled")
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "mrtr-input.txt: confirmed; nothing was deleted."


def test_confirm_delete_refuses_an_undeclared_call_with_32021(lab):
    reply = call(lab, "confirm_delete", {"filename": "x.txt"}, meta=frames.DEFAULT)
    assert reply.code == -32021 and reply.error["data"] == TASK_ONLY_REFUSAL


def test_test_missing_capability_is_summarize_notes_sampling_requirement(lab):
    reply = call(lab, "test_missing_capability", {}, meta=frames.DEFAULT)
    assert reply.status == 400 and reply.code == -32021
    assert reply.error["data"] == {"requiredCapabilities": {"sampling": {}}}

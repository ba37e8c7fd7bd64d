"""The official conformance suite's Tasks checks that the lab's own task tests do not already make, aimed at the
lab's own tools.

The suite (`@modelcontextprotocol/conformance`, scenarios tasks-*) calls fixture tools of its reference server
(greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input, test_tool_with_task), which the
lab does not have, so against the lab most of its task checks never reach a task. Here the same shape rules
are checked on score_night and review_night: no 2025-11-25 key (`ttl`, `pollInterval`, a nested `task`, the
`related-task` _meta on an inlined result) and no MRTR `requestState` on any task frame, and a CreateTaskResult that
carries the Task alone (result, error and inputRequests belong to tasks/get). Every other check of those
scenarios is made in tests/labserver/test_labserver_tasks.py.
"""

from __future__ import annotations

import time

import pytest

from mcpwire import HttpWire, tasks

DECLARED = tasks.declare()
DECLARED_FORM = tasks.declare({"elicitation": {"form": {}}})
TASK_KEYS = {"resultType", "taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs",
             "_meta"}
NEVER_ON_A_TASK = ("ttl", "pollInterval", "task", "requestState")
RELATED_TASK = "io.modelcontextprotocol/related-task"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with HttpWire.labserver("--tasks", "--notes", str(tmp_path_factory.mktemp("notes"))) as wire:
        yield wire


def start(lab, name, arguments, meta=DECLARED):
    created = lab.request("tools/call", {"name": name, "arguments": arguments}, meta=meta).result
    assert created["resultType"] == "task", created
    return created


def polls(lab, task_id, until):
    """Every tasks/get result until until(result); each checked for keys no task frame may carry."""
    seen = []
    ends = time.monotonic() + 30
    while time.monotonic() < ends:
        task = tasks.get(lab, task_id).result
        assert [key for key in NEVER_ON_A_TASK if key in task] == [], task
        seen.append(task)
        if until(task):
            return seen
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never got there; last seen {seen[-1]}")


def test_a_create_task_result_is_the_task_alone(lab):
    created = start(lab, "score_night", {"night": "P07", "epochs": 2, "pause_ms": 100})
    assert set(created) == TASK_KEYS


def test_working_and_completed_carry_no_v1_keys_and_the_inlined_result_no_related_task_meta(lab):
    created = start(lab, "score_night", {"night": "P07", "epochs": 3, "pause_ms": 150})
    seen = polls(lab, created["taskId"], lambda task: task["status"] == "completed")
    working = [task for task in seen if task["status"] == "working"]
    assert working and all("result" not in task and "error" not in task for task in working)
    assert RELATED_TASK not in seen[-1]["result"].get("_meta", {})


def test_input_required_failed_and_cancelled_carry_no_request_state(lab):
    asked = start(lab, "review_night", {"night": "P08", "pause_ms": 10}, DECLARED_FORM)
    polls(lab, asked["taskId"], lambda task: task["status"] == "input_required")
    # A stage the question did not offer: the task fails with a JSON-RPC error (labserver.tasks.jobs.chosen_stage).
    tasks.update(lab, asked["taskId"], {"epoch-7": {"action": "accept", "content": {"stage": "N4"}}})
    failed = polls(lab, asked["taskId"], lambda task: task["status"] in tasks.TERMINAL)[-1]
    assert failed["status"] == "failed" and "result" not in failed
    stopped = start(lab, "score_night", {"night": "P07", "pause_ms": 300})
    tasks.cancel(lab, stopped["taskId"])
    assert polls(lab, stopped["taskId"], lambda task: task["status"] in tasks.TERMINAL)[-1]["status"] == "cancelled"

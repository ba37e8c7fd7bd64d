"""mcpwire.tasks: the shape rules of the tasks extension, and follow(), the poll loop a client writes
(honour pollIntervalMs as it changes, answer each input key once, cancel at the deadline)."""

from __future__ import annotations

import pytest

from mcpwire import HttpWire, Reply, StdioWire, WireError, tasks

DROP = object()  # a script step's value that removes the key from the task
TASK = {"taskId": "t-1", "status": "working", "createdAt": "2026-07-28T10:00:00Z",
        "lastUpdatedAt": "2026-07-28T10:00:01.250Z", "ttlMs": 60000, "pollIntervalMs": 500}


class ScriptedWire:
    """A wire whose tasks/get answers come from a script; it records every request and the clock."""

    def __init__(self, transport, script):
        self.transport = transport
        self.script = list(script)
        self.sent = []
        self.now = 0.0

    def request(self, method, params=None, *, meta=None, headers=None):
        self.sent.append((self.now, method, params, meta, headers))
        if method != "tasks/get":
            return Reply({"jsonrpc": "2.0", "id": len(self.sent), "result": {"resultType": "complete"}}, b"")
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        task = {key: value for key, value in {**TASK, **step}.items() if value is not DROP}
        body = {"error": step} if "code" in step else {"result": {"resultType": "complete", **task}}
        return Reply({"jsonrpc": "2.0", "id": len(self.sent), **body}, b"")

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def follow(wire, **kwargs):
    return tasks.follow(wire, "t-1", clock=wire.clock, sleep=wire.sleep, **kwargs)


def methods(wire):
    return [method for _, method, *_ in wire.sent]


def test_polls_at_the_interval_the_task_asks_for_even_when_it_changes():
    wire = ScriptedWire("stdio", [{"pollIntervalMs": 500}, {"pollIntervalMs": 2000}, {"pollIntervalMs": 2000},
                                  {"status": "completed", "result": {"content": []}}])
    last = follow(wire)
    assert last.result["status"] == "completed"
    assert [at for at, *_ in wire.sent] == [0.0, 0.5, 2.5, 4.5]


def test_a_task_without_poll_interval_is_polled_once_a_second():
    wire = ScriptedWire("stdio", [{"pollIntervalMs": DROP}, {"pollIntervalMs": DROP}, {"status": "cancelled"}])
    assert follow(wire).result["status"] == "cancelled"
    assert [at for at, *_ in wire.sent] == [0.0, 1.0, 2.0]


def test_each_input_key_is_answered_once_however_many_polls_show_it():
    asked = {"epoch-7": {"method": "elicitation/create", "params": {"mode": "form", "message": "?"}}}
    wire = ScriptedWire("stdio", [{"status": "input_required", "inputRequests": asked}] * 3
                        + [{"status": "completed", "result": {}}])
    answers = []
    follow(wire, answer=lambda key, request: answers.append(key) or {"action": "accept", "content": {"stage": "REM"}})
    assert answers == ["epoch-7"]
    updates = [params for _, method, params, *_ in wire.sent if method == "tasks/update"]
    assert updates == [{"taskId": "t-1", "inputResponses": {"epoch-7": {"action": "accept", "content": {"stage": "REM"}}}}]


def test_input_required_is_not_the_end():
    asked = {"k": {"method": "elicitation/create", "params": {}}}
    wire = ScriptedWire("stdio", [{"status": "input_required", "inputRequests": asked}, {"status": "working"},
                                  {"status": "completed", "result": {}}])
    assert follow(wire, answer=lambda key, request: {"action": "decline"}).result["status"] == "completed"


def test_the_deadline_cancels_with_tasks_cancel_never_notifications_cancelled():
    wire = ScriptedWire("http", [{"pollIntervalMs": 1000}])
    with pytest.raises(tasks.TaskTimeout) as raised:
        follow(wire, deadline_s=3.5)
    # Polls at 0, 1, 2 and 3 s; the next would come after the deadline, so the task is cancelled at 3 s.
    assert methods(wire) == ["tasks/get"] * 4 + ["tasks/cancel"]
    assert wire.sent[-1][0] == 3.0 and raised.value.task_id == "t-1" and len(raised.value.polls) == 4


def test_over_http_every_tasks_request_names_the_task_in_mcp_name():
    asked = {"k": {"method": "elicitation/create", "params": {}}}
    wire = ScriptedWire("http", [{"status": "input_required", "inputRequests": asked}, {"status": "completed",
                                                                                       "result": {}}])
    follow(wire, answer=lambda key, request: {"action": "cancel"})
    assert {str(headers) for *_, headers in wire.sent} == {"{'Mcp-Name': 't-1'}"}
    assert all(meta == tasks.declare() for _, _, _, meta, _ in wire.sent)


def test_an_unknown_task_raises_with_the_servers_words():
    wire = ScriptedWire("stdio", [{"code": -32602, "message": "Failed to retrieve task: Task not found"}])
    with pytest.raises(WireError, match="Task not found"):
        follow(wire)


def test_a_question_with_nobody_to_answer_it_cancels_the_task():
    wire = ScriptedWire("stdio", [{"status": "input_required", "inputRequests": {"k": {"method": "roots/list"}}}])
    with pytest.raises(WireError, match="no answer function"):
        follow(wire)
    assert methods(wire) == ["tasks/get", "tasks/cancel"]


@pytest.mark.parametrize("task, result_type, expected", [
    ({**TASK, "resultType": "task"}, "task", []),
    ({**TASK, "resultType": "complete"}, "complete", []),
    (TASK, None, []),
    ({**TASK, "ttlMs": None}, None, []),
    ({**TASK, "resultType": "complete"}, None, ["notifications/tasks params carry no resultType"]),
    ({**TASK, "resultType": "complete"}, "task", ["resultType must be 'task', not 'complete'"]),
    ({**TASK, "ttlMs": 1.5}, None, ["ttlMs must be an integer number of milliseconds, or null for unlimited"]),
    ({k: v for k, v in TASK.items() if k != "ttlMs"}, None,
     ["ttlMs must be an integer number of milliseconds, or null for unlimited"]),
    ({**TASK, "pollIntervalMs": True}, None, ["pollIntervalMs must be an integer number of milliseconds"]),
    ({**TASK, "status": "done"}, None,
     ["status must be one of working, input_required, completed, failed, cancelled, not 'done'"]),
    ({**TASK, "createdAt": "yesterday"}, None, ["createdAt must be an ISO 8601 timestamp"]),
    ({**TASK, "status": "completed"}, None,
     ["a completed task carries result, the request's whole result (a CallToolResult for tools/call)"]),
    ({**TASK, "status": "failed", "error": {"code": "x", "message": "m"}}, None,
     ["a failed task carries error, a JSON-RPC error object {code, message}"]),
    ({**TASK, "status": "input_required", "inputRequests": {"k": {"method": "tools/call", "params": {}}}}, None,
     ["inputRequests['k'] must be {method, params} with method one of sampling/createMessage, roots/list, "
      "elicitation/create"]),
    ({**TASK, "status": "completed", "resultType": "task"}, "task", []),  # a handle carries no variant fields
])
def test_problems_names_what_the_schema_would_refuse(task, result_type, expected):
    assert tasks.problems(task, result_type=result_type) == expected


@pytest.mark.parametrize("start", [StdioWire.labserver, HttpWire.labserver])
def test_follow_drives_a_real_task_on_both_wires(start, tmp_path):
    with start("--tasks", "--notes", str(tmp_path)) as lab:
        reply = lab.request("tools/call", {"name": "review_night", "arguments": {"night": "P07", "pause_ms": 5}},
                            meta=tasks.declare({"elicitation": {"form": {}}}))
        assert tasks.is_task(reply)
        keys = []
        last = tasks.follow(lab, reply.result["taskId"], deadline_s=60,
                            answer=lambda key, request: keys.append(key) or {"action": "decline"})
        assert keys == ["epoch-7", "epoch-14"] and last.result["status"] == "completed"
        sent = [exchange.method for exchange in lab.transcript]
        assert sent.count("tasks/update") == 2 and "notifications/cancelled" not in sent

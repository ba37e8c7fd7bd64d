"""Exercise 20 (drive a task to its end), task 3 (stop_at_deadline), what it sends and returns: the cancel request and
its Mcp-Name, the status it returns, a task that ended first, each mistake with its own verdict, and right answers
written differently. The rows run at a quick pace (QUICK_DEADLINES, a 2 s task) on one lab pair; the rows whose verdict
turns on the deadline's geometry are test_ex20_tasks_deadline.py's."""

import re
import time

import pytest

import checks
from checks.ex20_tasks import lab_pair
from ex20_answers import deadline_right, QUICK_DEADLINES, QUICK_PAUSE_MS, TASKS, lent, task_request
from mcpwire import tasks


@pytest.fixture(scope="module")
def labs():
    """One lab pair for every row: each check runs on tasks of its own, and no answer here hangs or closes a wire."""
    with lab_pair() as pair:
        yield pair


def quick(labs):
    return lent(checks.check_deadline, labs, pause_ms=QUICK_PAUSE_MS)


def deadline_sleeping_to_it(wire, task_id, deadline_s):
    """Written differently (a blind learner's): when the next poll would come after the deadline, sleep to it, cancel."""
    end = time.monotonic() + deadline_s
    while True:
        task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        if task["status"] in ("completed", "failed", "cancelled"):
            return task["status"]
        if time.monotonic() + task["pollIntervalMs"] / 1000 > end:
            time.sleep(max(0, end - time.monotonic()))
            task_request(wire, "tasks/cancel", {"taskId": task_id})
            return "cancelled"
        time.sleep(task["pollIntervalMs"] / 1000)


@pytest.mark.parametrize("stop", [deadline_right, deadline_sleeping_to_it])
def test_deadline_right_at_a_quicker_pace(verdict, labs, stop):
    assert verdict(quick(labs), stop, QUICK_DEADLINES).startswith("✓ stop_at_deadline slept")


def deadline_with_the_helpers(wire, task_id, deadline_s):
    """Written differently: mcpwire.tasks for the requests, perf_counter, the time left counted down."""
    started = time.perf_counter()
    while (task := tasks.get(wire, task_id).result)["status"] == "working":
        left_s = deadline_s - (time.perf_counter() - started)
        if left_s < task["pollIntervalMs"] / 1000:
            tasks.cancel(wire, task_id)
            return "cancelled"
        time.sleep(task["pollIntervalMs"] / 1000)
    return task["status"]


def test_deadline_right_with_the_helpers(verdict, labs):
    assert verdict(quick(labs), deadline_with_the_helpers, QUICK_DEADLINES).startswith("✓ stop_at_deadline slept")


def ignoring_the_status(only_completed):
    """A blind learner run: the status never read (or only completed), which passed on a task that outlived the deadline."""
    def stop_at_deadline(wire, task_id, deadline_s):
        started = time.monotonic()
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if only_completed and task["status"] == "completed":
                return "completed"
            wait_s = task["pollIntervalMs"] / 1000
            if time.monotonic() - started + wait_s > deadline_s:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return "cancelled"
            time.sleep(wait_s)
    return stop_at_deadline


@pytest.mark.parametrize("only_completed", [False, True])
def test_deadline_on_a_task_that_ended_first(verdict, labs, only_completed):
    out = verdict(quick(labs), ignoring_the_status(only_completed), QUICK_DEADLINES)
    assert out.startswith("✗ stop_at_deadline, given a task that had already failed, polled "), out
    assert "and sent tasks/cancel; its first tasks/get showed failed." in out, out
    assert "completed, failed and cancelled are ends" in out


def deadline_then_follow(wire, task_id, deadline_s):
    """Written differently: after the cancel it follows the task to cancelled and returns that status."""
    ends_at = time.monotonic() + deadline_s
    cancelled = False
    while True:
        task = tasks.get(wire, task_id).result
        if task["status"] in ("completed", "failed", "cancelled"):
            return task["status"]
        if not cancelled and time.monotonic() + task["pollIntervalMs"] / 1000 > ends_at:
            tasks.cancel(wire, task_id)
            cancelled = True
        time.sleep(task["pollIntervalMs"] / 1000)


def test_deadline_right_following_the_cancel(verdict, labs):
    assert verdict(quick(labs), deadline_then_follow, QUICK_DEADLINES).startswith("✓ stop_at_deadline slept")


def returning(value):
    """The reference stop_at_deadline, but it returns value(cancel reply, last task) once it has cancelled."""
    def stop_at_deadline(wire, task_id, deadline_s):
        ends_at = time.monotonic() + deadline_s
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if time.monotonic() + task["pollIntervalMs"] / 1000 > ends_at:
                return value(task_request(wire, "tasks/cancel", {"taskId": task_id}), task)
            time.sleep(task["pollIntervalMs"] / 1000)
    return stop_at_deadline


@pytest.mark.parametrize("value, said", [
    # A fresh reader's run: the task text did not say what to return, and nothing was returned.
    (lambda reply, task: None, "returned None"),
    (lambda reply, task: task, "returned the task dict (status 'working')"),
    (lambda reply, task: reply, "returned a Reply object"),
    (lambda reply, task: reply.result, "returned {'resultType': 'complete', '_meta'"),
    (lambda reply, task: task["status"], "returned 'working'"),
])
def test_deadline_returning_something_else(verdict, labs, value, said):
    out = verdict(quick(labs), returning(value), QUICK_DEADLINES)
    assert out.startswith(f"✗ stop_at_deadline cancelled the task, then {said}"), out
    assert "the task asks for the status you leave the task in, the string \"cancelled\"." in out


def test_deadline_cancel_without_mcp_name_over_http(verdict, labs):
    def cancel_bare(wire, task_id, deadline_s):
        ends_at = time.monotonic() + deadline_s
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task["status"]
            if time.monotonic() + task["pollIntervalMs"] / 1000 > ends_at:
                wire.request("tasks/cancel", {"taskId": task_id}, meta=TASKS)
                return "cancelled"
            time.sleep(task["pollIntervalMs"] / 1000)
    out = verdict(quick(labs), cancel_bare, QUICK_DEADLINES)
    assert "Your tasks/cancel over HTTP went without Mcp-Name" in out


def test_deadline_cancel_naming_the_task_id(verdict, labs):
    def cancel_by_id(wire, task_id, deadline_s):
        ends_at = time.monotonic() + deadline_s
        while True:
            wait_s = task_request(wire, "tasks/get", {"taskId": task_id}).result["pollIntervalMs"] / 1000
            if time.monotonic() + wait_s > ends_at:
                break
            time.sleep(wait_s)
        wire.request("tasks/cancel", {"id": task_id}, meta=TASKS)
    out = verdict(quick(labs), cancel_by_id, QUICK_DEADLINES)
    assert "The task ended completed, not cancelled: the lab answered your tasks/cancel with error -32602" in out


def test_deadline_with_notifications_cancelled(verdict, labs):
    def with_notification(wire, task_id, deadline_s):
        time.sleep(deadline_s)
        wire.notify("notifications/cancelled", {"requestId": 1})
    out = verdict(quick(labs), with_notification, QUICK_DEADLINES)
    assert "You sent notifications/cancelled" in out and "tasks/cancel request" in out


def test_deadline_that_only_stops_polling(verdict, labs):
    def gives_up(wire, task_id, deadline_s):
        time.sleep(deadline_s)
    assert "sent no tasks/cancel" in verdict(quick(labs), gives_up, QUICK_DEADLINES)


def test_deadline_polling_without_a_pause(verdict, labs):
    # A blind learner run (issue 40): a loop that polls every 50 ms was told its last poll came at the deadline; its
    # first came 50 ms after the one before.
    def every_50_ms(wire, task_id, deadline_s):
        ends_at = time.monotonic() + deadline_s
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task["status"]
            if time.monotonic() + 0.05 > ends_at:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return "cancelled"
            time.sleep(0.05)
    out = verdict(quick(labs), every_50_ms, QUICK_DEADLINES)
    assert re.match(r"✗ You polled \d+ ms after the previous tasks/get; the task asked for 200 ms", out), out
    assert "Sleep pollIntervalMs between polls" in out and "at the deadline" not in out, out


def looking_at_once_after_the_cancel(sleep_to_it):
    """Right (blind learners' d_R5, d_R6): after the cancel, a poll at once to see it taken, then at pace."""
    def stop_at_deadline(wire, task_id, deadline_s):
        end = time.monotonic() + deadline_s
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task["status"]
            pause = task["pollIntervalMs"] / 1000
            if time.monotonic() + pause >= end:
                if sleep_to_it:
                    time.sleep(max(0.0, end - time.monotonic()))
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                seen = task_request(wire, "tasks/get", {"taskId": task_id}).result
                while seen["status"] not in ("completed", "failed", "cancelled"):
                    time.sleep(seen.get("pollIntervalMs", 1000) / 1000)
                    seen = task_request(wire, "tasks/get", {"taskId": task_id}).result
                return "cancelled"
            time.sleep(pause)
    return stop_at_deadline


@pytest.mark.parametrize("sleep_to_it", [False, True])
def test_deadline_polling_at_once_after_the_cancel(verdict, labs, sleep_to_it):
    # Blind learner runs (s11): "Polling after the cancel ... is not judged", yet the at-once poll was refused for pace.
    out = verdict(quick(labs), looking_at_once_after_the_cancel(sleep_to_it), QUICK_DEADLINES)
    assert out.startswith("✓ stop_at_deadline slept"), out


def test_deadline_returning_the_status_seen_after_the_cancel(verdict, labs):
    # A blind learner run (s11): told it polled too soon, where what it returned was the status of that poll.
    def returns_a_look(wire, task_id, deadline_s):
        end = time.monotonic() + deadline_s
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task["status"]
            if time.monotonic() + task["pollIntervalMs"] / 1000 >= end:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return task_request(wire, "tasks/get", {"taskId": task_id}).result["status"]
            time.sleep(task["pollIntervalMs"] / 1000)
    out = verdict(quick(labs), returns_a_look, QUICK_DEADLINES)
    assert "You polled" not in out, out
    assert re.match(r"✗ stop_at_deadline cancelled the task, then returned 'working'", out) or out.startswith("✓"), out

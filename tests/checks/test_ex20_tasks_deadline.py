"""Exercise 20 (drive a task to its end), task 3 (stop_at_deadline): the mistakes learners make get their own verdict, and right
answers written differently pass. The rows of each task are a file of their own so the test runs spread them over
workers: most of their time is the lab's polling pace, spent waiting."""

import time

import pytest

import checks
from ex20_answers import TASKS, task_request
from mcpwire import tasks


def deadline_right(wire, task_id, deadline_s):
    ends_at = time.monotonic() + deadline_s
    while True:
        task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        if task["status"] in ("completed", "failed", "cancelled"):
            return task["status"]
        if time.monotonic() + task["pollIntervalMs"] / 1000 > ends_at:
            task_request(wire, "tasks/cancel", {"taskId": task_id})
            return "cancelled"
        time.sleep(task["pollIntervalMs"] / 1000)


def deadline_after_the_sleep(wire, task_id, deadline_s):
    """Written differently: wall-clock time, the deadline tested after each sleep, the status kept in a variable."""
    start = time.time()
    status = "working"
    while status == "working":
        task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        time.sleep(task["pollIntervalMs"] / 1000)
        status = task["status"]
        if status == "working" and time.time() - start >= deadline_s:
            task_request(wire, "tasks/cancel", {"taskId": task_id})
            status = "cancelled"
    return status


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
def test_deadline_right(verdict, stop):
    assert verdict(checks.check_deadline, stop).startswith("✓ stop_at_deadline slept the pollIntervalMs of the "
                                                           "latest reply")


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


def test_deadline_right_with_the_helpers(verdict):
    assert verdict(checks.check_deadline, deadline_with_the_helpers).startswith("✓ stop_at_deadline slept")


def deadline_at_the_first_poll_past_it(wire, task_id, deadline_s):
    """Right, written differently: the deadline tested after each poll, so the cancel follows one poll past it."""
    ends_at = time.monotonic() + deadline_s
    while True:
        task = tasks.get(wire, task_id).result
        if task["status"] != "working" or time.monotonic() >= ends_at:
            break
        time.sleep(task["pollIntervalMs"] / 1000)
    if task["status"] == "working":
        tasks.cancel(wire, task_id)
        task["status"] = "cancelled"
    return task["status"]


@pytest.mark.parametrize("stop", [deadline_after_the_sleep, deadline_at_the_first_poll_past_it])
def test_deadline_cancelled_a_poll_interval_late(verdict, stop):
    # A blind learner run: a cancel at 4 s passed "at the 3 s deadline"; the task asks for the cancel by the deadline.
    out = verdict(checks.check_deadline, stop)
    assert out.startswith("✗ stop_at_deadline cancelled 4.") and "after the 3 s deadline: it slept past" in out, out
    assert "if the next poll would come after it, cancel now" in out


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
def test_deadline_on_a_task_that_ended_first(verdict, only_completed):
    out = verdict(checks.check_deadline, ignoring_the_status(only_completed))
    assert out.startswith("✗ stop_at_deadline, given a task that had already failed, polled "), out
    assert "and sent tasks/cancel; its first tasks/get showed failed." in out, out
    assert "completed, failed and cancelled are ends" in out


def test_deadline_polling_early_to_meet_it(verdict):
    # A blind learner run: min(pollIntervalMs, time left) was told its loop "kept the old pace".
    def shortened(wire, task_id, deadline_s):
        end = time.monotonic() + deadline_s
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            left = end - time.monotonic()
            if left <= 0:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return "cancelled"
            time.sleep(min(task["pollIntervalMs"] / 1000, left))
    out = verdict(checks.check_deadline, shortened)
    assert out.startswith("✗ You polled ") and "the task asked for 1500 ms" in out and "old pace" not in out, out
    # A blind learner run: this poll at the deadline was told only to sleep pollIntervalMs.
    assert "Your last poll came at the deadline" in out and "cancel without it" in out, out


def test_deadline_clock_started_after_the_first_sleep(verdict):
    # A blind learner run: the deadline counted from the second poll passed, as 1 s late changed nothing on stdio.
    def late_clock(wire, task_id, deadline_s):
        end = None
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task["status"]
            wait_s = task["pollIntervalMs"] / 1000
            if end is None:
                time.sleep(wait_s)
                end = time.monotonic() + deadline_s
                continue
            if time.monotonic() + wait_s > end:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return "cancelled"
            time.sleep(wait_s)
    out = verdict(checks.check_deadline, late_clock)
    assert out.startswith("✗ stop_at_deadline sent 2 tasks/get after the 2.3 s deadline had passed"), out


def test_deadline_on_a_schedule_written_in(verdict):
    # Sleeps that fit the stdio wire (1 s, then 1.5 s), never read from pollIntervalMs.
    def by_poll_count(wire, task_id, deadline_s):
        ends_at, polls = time.monotonic() + deadline_s, 0
        while True:
            status = task_request(wire, "tasks/get", {"taskId": task_id}).result["status"]
            if status in ("completed", "failed", "cancelled"):
                return status
            polls += 1
            wait_s = 1.0 if polls == 1 else 1.5
            if time.monotonic() + wait_s > ends_at:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return "cancelled"
            time.sleep(wait_s)
    out = verdict(checks.check_deadline, by_poll_count)
    assert out.startswith("✗ You polled 10") and "the task asked for 2000 ms (pollIntervalMs)" in out, out


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


def test_deadline_right_following_the_cancel(verdict):
    assert verdict(checks.check_deadline, deadline_then_follow).startswith("✓ stop_at_deadline slept")


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
def test_deadline_returning_something_else(verdict, value, said):
    out = verdict(checks.check_deadline, returning(value))
    assert out.startswith(f"✗ stop_at_deadline cancelled the task, then {said}"), out
    assert "the task asks for the status you leave the task in, the string \"cancelled\"." in out


def test_deadline_at_a_fixed_pace(verdict):
    # A fresh reader's run: time.sleep(1) passed "polled at pollIntervalMs" while the lab kept score_night at 1000 ms.
    def one_second(wire, task_id, deadline_s):
        ends_at = time.monotonic() + deadline_s
        while True:
            task_request(wire, "tasks/get", {"taskId": task_id})
            if time.monotonic() + 1 > ends_at:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return "cancelled"
            time.sleep(1)
    out = verdict(checks.check_deadline, one_second)
    assert "the task asked for 1500 ms (pollIntervalMs). Its previous replies asked for 1000 ms" in out, out


def test_deadline_at_the_first_replys_pace(verdict):
    def read_once(wire, task_id, deadline_s):
        ends_at = time.monotonic() + deadline_s
        wait_s = task_request(wire, "tasks/get", {"taskId": task_id}).result["pollIntervalMs"] / 1000
        while time.monotonic() + wait_s <= ends_at:
            time.sleep(wait_s)
            task_request(wire, "tasks/get", {"taskId": task_id})
        task_request(wire, "tasks/cancel", {"taskId": task_id})
        return "cancelled"
    out = verdict(checks.check_deadline, read_once)
    assert "the task asked for 1500 ms" in out and "kept the old pace" in out, out


def test_deadline_polled_past(verdict):
    # A blind learner run: a cancel one interval past the deadline passed within the 2.5 s of slack.
    def one_interval_late(wire, task_id, deadline_s):
        started = time.monotonic()
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            wait_s = task["pollIntervalMs"] / 1000
            if time.monotonic() - started > deadline_s + wait_s:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return
            time.sleep(wait_s)
    out = verdict(checks.check_deadline, one_interval_late)
    assert out.startswith("✗ stop_at_deadline sent 2 tasks/get after the 3 s deadline had passed"), out
    assert "the first poll that finds the deadline passed is the last one" in out


def test_deadline_without_polling(verdict):
    def sleeps_then_cancels(wire, task_id, deadline_s):
        time.sleep(deadline_s)
        task_request(wire, "tasks/cancel", {"taskId": task_id})
    out = verdict(checks.check_deadline, sleeps_then_cancels)
    assert "without a single tasks/get before it cancelled" in out and "Keep polling at pollIntervalMs" in out


def test_deadline_polling_once_then_sleeping(verdict):
    def polls_once(wire, task_id, deadline_s):
        started = time.monotonic()
        if task_request(wire, "tasks/get", {"taskId": task_id}).result["status"] == "working":
            time.sleep(max(0, deadline_s - (time.monotonic() - started)))
            task_request(wire, "tasks/cancel", {"taskId": task_id})
    out = verdict(checks.check_deadline, polls_once)
    assert "with 1 tasks/get before it cancelled" in out


def test_deadline_cancel_without_mcp_name_over_http(verdict):
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
    out = verdict(checks.check_deadline, cancel_bare)
    assert "Your tasks/cancel over HTTP went without Mcp-Name" in out


def test_deadline_cancel_naming_the_task_id(verdict):
    def cancel_by_id(wire, task_id, deadline_s):
        ends_at = time.monotonic() + deadline_s
        while True:
            wait_s = task_request(wire, "tasks/get", {"taskId": task_id}).result["pollIntervalMs"] / 1000
            if time.monotonic() + wait_s > ends_at:
                break
            time.sleep(wait_s)
        wire.request("tasks/cancel", {"id": task_id}, meta=TASKS)
    out = verdict(checks.check_deadline, cancel_by_id)
    assert "The task ended completed, not cancelled: the lab answered your tasks/cancel with error -32602" in out


def test_deadline_with_notifications_cancelled(verdict):
    def with_notification(wire, task_id, deadline_s):
        time.sleep(deadline_s)
        wire.notify("notifications/cancelled", {"requestId": 1})
    out = verdict(checks.check_deadline, with_notification)
    assert "You sent notifications/cancelled" in out and "tasks/cancel request" in out


def test_deadline_that_only_stops_polling(verdict):
    def gives_up(wire, task_id, deadline_s):
        time.sleep(deadline_s)
    assert "sent no tasks/cancel" in verdict(checks.check_deadline, gives_up)


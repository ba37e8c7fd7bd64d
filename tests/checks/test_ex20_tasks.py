"""Exercise 20 (drive a task to its end): the mistakes learners make get their own verdict, and right answers
written differently pass."""

import json
import time
from pathlib import Path

import pytest

import checks
from checks.ex20_tasks import outcome_cases
from mcpwire import frames, tasks

TASKS = {frames.CLIENT_CAPABILITIES_KEY: {"extensions": {tasks.EXTENSION: {}}}}
ARGUMENTS = {"epochs": 4, "pause_ms": 300}


def stub(*args):
    raise NotImplementedError("your code here")


def task_request(wire, method, params, *, name_header=True, meta=TASKS):
    frame = frames.request(method, params, id=wire.next_id, meta=meta)
    headers = {"Mcp-Name": params["taskId"]} if wire.transport == "http" and name_header else None
    return wire.send(frame, headers)


def follower(*, pace=None, dedup=True, stop_at_input=False, name_header=True, meta=TASKS):
    """A follow_task with one mistake switched on."""
    def follow_task(wire, task_id, answer):
        answered = set()
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}, name_header=name_header, meta=meta).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            if task["status"] == "input_required":
                if stop_at_input:
                    return task
                fresh = {k: r for k, r in task["inputRequests"].items() if not dedup or k not in answered}
                if fresh:
                    task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": {
                        k: answer(k, r) for k, r in fresh.items()}}, name_header=name_header, meta=meta)
                    answered.update(fresh)
            time.sleep(task["pollIntervalMs"] / 1000 if pace is None else pace)
    return follow_task


def test_follow_right(verdict):
    assert verdict(checks.check_follow, follower()).startswith("✓ follow_task drove review_night")


def test_follow_with_the_mcpwire_helper(verdict):
    def with_helper(wire, task_id, answer):
        return tasks.follow(wire, task_id, answer=answer, deadline_s=30).result
    assert verdict(checks.check_follow, with_helper).startswith("✓")


def test_follow_returning_the_reply(verdict):
    # A blind learner run: the Reply passed, though the task asks for the dict (Task 2's outcome reads it).
    def with_helper(wire, task_id, answer):
        return tasks.follow(wire, task_id, answer=answer, deadline_s=30)
    out = verdict(checks.check_follow, with_helper)
    assert out.startswith("✗ follow_task returned a Reply object") and "Return reply.result" in out, out


def test_follow_returning_the_whole_message(verdict):
    def whole_message(wire, task_id, answer):
        return tasks.follow(wire, task_id, answer=answer, deadline_s=30).message
    out = verdict(checks.check_follow, whole_message)
    assert out.startswith("✗ follow_task returned the whole JSON-RPC message") and 'message["result"]' in out, out


def test_polling_at_a_fixed_pace(verdict):
    # A blind learner run: 500 ms written in, which passed while the lab never changed pollIntervalMs.
    out = verdict(checks.check_follow, follower(pace=0.5))
    assert "the task asked for 2000 ms (pollIntervalMs)" in out and "asked for 500 ms: the server raised" in out, out


@pytest.mark.parametrize("pace, said", [
    # A blind learner run: time.sleep(1), 0.9 and 2 passed while the wire asked for 500 ms, then 900.
    (1.0, " ms after the previous tasks/get; the task asked for 2000 ms (pollIntervalMs)."),
    (2.0, " s after a tasks/get that asked for 500 ms (pollIntervalMs)."),
])
def test_polling_at_a_fixed_round_pace(verdict, pace, said):
    out = verdict(checks.check_follow, follower(pace=pace))
    assert out.startswith("✗ You polled ") and said in out and "kept the old pace" not in out, out


def test_polling_again_right_after_an_update(verdict):
    # A blind learner run: the sleep skipped after tasks/update was told its loop "kept the old pace".
    def no_sleep_after_update(wire, task_id, answer):
        answered = set()
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            fresh = {k: r for k, r in task.get("inputRequests", {}).items() if k not in answered}
            if fresh:
                task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": {
                    k: answer(k, r) for k, r in fresh.items()}})
                answered.update(fresh)
                continue
            time.sleep(task["pollIntervalMs"] / 1000)
    out = verdict(checks.check_follow, no_sleep_after_update)
    assert out.startswith("✗ You polled ") and "(pollIntervalMs)." in out and "kept the old pace" not in out, out


def test_follow_ending_only_at_completed(verdict):
    # A blind learner run: `while status != "completed"` passed, and never returns from a task that failed.
    def only_completed(wire, task_id, answer):
        answered = set()
        task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        while task["status"] != "completed":
            fresh = {k: r for k, r in task.get("inputRequests", {}).items() if k not in answered}
            if fresh:
                task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": {
                    k: answer(k, r) for k, r in fresh.items()}})
                answered.update(fresh)
            time.sleep(task["pollIntervalMs"] / 1000)
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        return task
    out = verdict(checks.check_follow, only_completed)
    assert out.startswith("✗ follow_task, given a review_night that had already failed, was still polling"), out
    assert "waits for completed alone" in out


def pace_read_once(wire, task_id, answer):
    """The interval taken from the first poll and kept."""
    answered, wait_s = set(), None
    while True:
        task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        if task["status"] in ("completed", "failed", "cancelled"):
            return task
        wait_s = wait_s or task["pollIntervalMs"] / 1000
        fresh = {k: r for k, r in task.get("inputRequests", {}).items() if k not in answered}
        if fresh:
            task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": {
                k: answer(k, r) for k, r in fresh.items()}})
            answered.update(fresh)
        time.sleep(wait_s)


def test_polling_at_the_first_replys_pace(verdict):
    out = verdict(checks.check_follow, pace_read_once)
    assert "the task asked for 2000 ms" in out and "kept the old pace" in out and "read from the latest" in out, out


def passing_to_answer(given):
    """A follow_task right but for what it passes to answer as the request: given(key, entry, task)."""
    def follow_task(wire, task_id, answer):
        answered = set()
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            fresh = {k: r for k, r in task.get("inputRequests", {}).items() if k not in answered}
            if fresh:
                task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": {
                    k: answer(k, given(k, r, task)) for k, r in fresh.items()}})
                answered.update(fresh)
            time.sleep(task["pollIntervalMs"] / 1000)
    return follow_task


@pytest.mark.parametrize("given, said", [
    # A fresh reader's run: the params passed, which an answer function reading request["params"] cannot use.
    (lambda key, entry, task: entry["params"], 'with request["params"], the params alone as the request'),
    (lambda key, entry, task: None, "with None as the request"),
    (lambda key, entry, task: task["inputRequests"], "with the whole inputRequests object as the request"),
    (lambda key, entry, task: task, "with the whole tasks/get result as the request"),
    (lambda key, entry, task: entry["params"]["message"], "with 'Epoch 7 of night P07"),
])
def test_follow_passing_another_request_to_answer(verdict, given, said):
    out = verdict(checks.check_follow, passing_to_answer(given))
    assert out.startswith("✗ follow_task called answer('epoch-7', request) " + said), out
    assert "Pass task[\"inputRequests\"][key] unchanged" in out, out


def test_follow_passing_key_and_request_swapped(verdict):
    def swapped(wire, task_id, answer):
        return follower()(wire, task_id, lambda key, request: answer(request, key))
    out = verdict(checks.check_follow, swapped)
    assert out.startswith("✗ follow_task called answer with {'method': 'elicitation/create'"), out
    assert "as the key; no inputRequests held it" in out


def one_key_a_round(pick):
    """A follow_task that answers one key per poll: pick(inputRequests, answered) chooses it, or None."""
    def follow_task(wire, task_id, answer):
        answered = set()
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            key = pick(task.get("inputRequests", {}), answered)
            if key is not None:
                task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": {
                    key: answer(key, task["inputRequests"][key])}})
                answered.add(key)
            time.sleep(task["pollIntervalMs"] / 1000)
    return follow_task


def only_the_first_key(asked, answered):
    """A fresh reader's run: next(iter(inputRequests)), passed while the lab never had two questions open."""
    key = next(iter(asked), None)
    return None if key in answered else key


def the_first_key_not_answered(asked, answered):
    return next((key for key in asked if key not in answered), None)


@pytest.mark.parametrize("pick", [only_the_first_key, the_first_key_not_answered])
def test_follow_answering_one_question_a_poll(verdict, pick):
    out = verdict(checks.check_follow, one_key_a_round(pick))
    assert out.startswith("✗ A tasks/get result showed 2 questions you had not answered, 'epoch-7' and 'epoch-8'; "
                          "before your next poll you answered only 'epoch-7'."), out
    assert "not only the first" in out


def follow_one_update_per_key(wire, task_id, answer):
    """Written differently: answer called by keyword, a tasks/update for each key, all before the next poll."""
    answered = []
    task = tasks.get(wire, task_id).result
    while task["status"] not in ("completed", "failed", "cancelled"):
        for key in task.get("inputRequests", {}):
            if key not in answered:
                response = answer(key=key, request=task["inputRequests"][key])
                tasks.update(wire, task_id, {key: response})
                answered.append(key)
        time.sleep(task["pollIntervalMs"] / 1000)
        task = tasks.get(wire, task_id).result
    return task


def test_follow_right_with_one_update_per_key(verdict):
    assert verdict(checks.check_follow, follow_one_update_per_key).startswith("✓ follow_task drove review_night")


def test_follow_stub(verdict):
    assert verdict(checks.check_follow, stub).startswith("not done yet")


def test_polling_faster_than_poll_interval(verdict):
    out = verdict(checks.check_follow, follower(pace=0.05))
    assert "after the previous tasks/get; the task asked for 500 ms (pollIntervalMs)" in out


def test_stopping_at_input_required(verdict):
    out = verdict(checks.check_follow, follower(stop_at_input=True))
    assert "returned while the task was input_required" in out and "input_required is not an end" in out


def test_answering_a_key_on_every_poll(verdict):
    out = verdict(checks.check_follow, follower(dedup=False))
    assert "You answered 'epoch-7' twice with tasks/update" in out


def test_forgetting_mcp_name_on_http(verdict):
    out = verdict(checks.check_follow, follower(name_header=False))
    assert "Your tasks/get over HTTP went without Mcp-Name" in out and "-32020" in out


def test_declaring_the_extension_only_on_the_call(verdict):
    out = verdict(checks.check_follow, follower(meta=frames.DEFAULT))
    assert "did not declare the tasks extension" in out and "-32021" in out


def follow_with_the_helpers(wire, task_id, answer):
    """Written differently: mcpwire.tasks requests, the answers kept in a dict, the interval read up front."""
    given = {}
    task = tasks.get(wire, task_id).result
    while task["status"] not in ("completed", "failed", "cancelled"):
        asked = {key: request for key, request in task.get("inputRequests", {}).items() if key not in given}
        if asked:
            given.update({key: answer(key, request) for key, request in asked.items()})
            tasks.update(wire, task_id, {key: given[key] for key in asked})
        time.sleep(task["pollIntervalMs"] / 1000)
        task = tasks.get(wire, task_id).result
    return task


def test_follow_right_with_the_helpers(verdict):
    assert verdict(checks.check_follow, follow_with_the_helpers).startswith("✓ follow_task drove review_night")


def asking_every_poll(wire, task_id, answer):
    sent = set()
    while True:
        task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        if task["status"] in ("completed", "failed", "cancelled"):
            return task
        answers = {key: answer(key, request) for key, request in task.get("inputRequests", {}).items()}
        fresh = {key: value for key, value in answers.items() if key not in sent}
        if fresh:
            task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": fresh})
            sent.update(fresh)
        time.sleep(task["pollIntervalMs"] / 1000)


def test_asking_the_user_on_every_poll(verdict):
    out = verdict(checks.check_follow, asking_every_poll)
    assert "follow_task called answer for 'epoch-7'" in out and "keep a set of the keys you answered" in out


def test_wrapping_the_answer_again(verdict):
    def wraps(wire, task_id, answer):
        return follower()(wire, task_id, lambda key, request: {"action": "accept", "content": answer(key, request)})
    out = verdict(checks.check_follow, wraps)
    assert "review_night ended failed: Invalid input response for 'epoch-7'" in out and "unchanged" in out


def test_sending_the_answers_as_a_list(verdict):
    def as_list(wire, task_id, answer):
        answered = set()
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            fresh = [(key, request) for key, request in task.get("inputRequests", {}).items() if key not in answered]
            if fresh:
                task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": [
                    {key: answer(key, request)} for key, request in fresh]})
                answered.update(key for key, _ in fresh)
            time.sleep(task["pollIntervalMs"] / 1000)
    out = verdict(checks.check_follow, as_list)
    assert "The lab answered your tasks/update with error -32602" in out and "keyed like inputRequests" in out


@pytest.fixture(scope="module")
def cases():
    return outcome_cases()


def outcome_right(task):
    if task["status"] == "completed":
        return "tool error" if task["result"].get("isError") else "done"
    return task["status"] if task["status"] in ("failed", "cancelled") else "not finished"


def outcome_by_table(task):
    finished = {"failed": "failed", "cancelled": "cancelled", "working": "not finished", "input_required": "not finished"}
    return finished.get(task["status"]) or ("tool error" if task.get("result", {}).get("isError") is True else "done")


@pytest.mark.parametrize("outcome", [outcome_right, outcome_by_table])
def test_outcome_right(verdict, cases, outcome):
    assert verdict(checks.check_outcome, outcome, cases).startswith("✓ outcome read all 8 tasks right")


def test_outcome_treating_is_error_as_failed(verdict, cases):
    def is_error_fails(task):
        if task["status"] == "completed" and task["result"].get("isError"):
            return "failed"
        return outcome_right(task)
    out = verdict(checks.check_outcome, is_error_fails, cases)
    assert "expected 'tool error'" in out and "failed is only for a JSON-RPC error" in out


@pytest.mark.parametrize("read_is_error, said", [
    (lambda result: result.get("isError", True), "expected 'done'"),
    (lambda result: result["isError"], "outcome raised KeyError: 'isError' for a completed task"),
    (lambda result: "No " in result["content"][0]["text"] or "error" in result["content"][0]["text"].lower(),
     "expected 'done'"),
])
def test_outcome_reading_is_error_otherwise(verdict, cases, read_is_error, said):
    def reads_it_otherwise(task):
        if task["status"] == "completed":
            return "tool error" if read_is_error(task["result"]) else "done"
        return outcome_right(task)
    out = verdict(checks.check_outcome, reads_it_otherwise, cases)
    assert said in out and ("assumed to be false" in out or "missing means false" in out
                            or "never from the words of the content" in out)


@pytest.mark.parametrize("outcome, said, hint", [
    # Blind learner runs: the hints blamed reading the content's words, or not reading isError.
    (lambda task: task["status"] if task["status"] in ("completed", "failed", "cancelled") else "not finished",
     "outcome gave 'completed'", 'Return one of the five labels exactly'),
    (lambda task: "tool_error" if task.get("result", {}).get("isError") else outcome_right(task),
     "outcome gave 'tool_error'", 'Return one of the five labels exactly'),
    (lambda task: "tool error" if "isError" in task.get("result", {}) else outcome_right(task),
     "outcome gave 'tool error'", "not whether the key is present"),
    (lambda task: ("tool error" if task["result"].get("isError") == "true" else "done") if task["status"] == "completed"
     else outcome_right(task),
     "outcome gave 'done'", "which no string equals"),
])
def test_outcome_with_the_mistake_named(verdict, cases, outcome, said, hint):
    out = verdict(checks.check_outcome, outcome, cases)
    assert out.startswith("✗ " + said) and hint in out and "words of the content" not in out, out


@pytest.mark.parametrize("outcome", [
    # Blind learner runs, right on every valid task: failed carries error; str(True) is "True".
    lambda task: ("failed" if "error" in task else task["status"] if task["status"] == "cancelled" else
                  "not finished" if task["status"] != "completed" else
                  "tool error" if str(task["result"].get("isError", False)).lower() == "true" else "done"),
])
def test_outcome_right_written_differently(verdict, cases, outcome):
    assert verdict(checks.check_outcome, outcome, cases).startswith("✓ outcome read all 8 tasks right")


def test_outcome_treating_input_required_as_the_end(verdict, cases):
    def waiting_is_done(task):
        return "done" if task["status"] == "input_required" else outcome_right(task)
    out = verdict(checks.check_outcome, waiting_is_done, cases)
    assert "expected 'not finished'" in out and "input_required is not an end" in out


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
    assert verdict(checks.check_deadline, stop).startswith("✓ stop_at_deadline polled at the pollIntervalMs of the "
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
    assert verdict(checks.check_deadline, deadline_with_the_helpers).startswith("✓ stop_at_deadline polled")


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
    assert verdict(checks.check_deadline, deadline_then_follow).startswith("✓ stop_at_deadline polled")


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


def start_and_save_json(wire, night, path):
    reply = wire.request("tools/call", {"name": "score_night", "arguments": {"night": night, "epochs": 4, "pause_ms": 300}},
                         meta=TASKS)
    Path(path).write_text(json.dumps({"taskId": reply.result["taskId"]}))


def resume_json(wire, path):
    return follower()(wire, json.loads(Path(path).read_text())["taskId"], None)


def start_and_save_text(wire, night, path):
    reply = wire.request("tools/call", {"name": "score_night", "arguments": {"night": night, "epochs": 4, "pause_ms": 300}},
                         meta=TASKS)
    with open(path, "w") as file:
        file.write(reply.result["taskId"] + "\n")


def resume_text(wire, path):
    task_id = Path(path).read_text().strip()
    return tasks.follow(wire, task_id, deadline_s=30).result


@pytest.mark.parametrize("start, resume", [(start_and_save_json, resume_json), (start_and_save_text, resume_text)])
def test_restart_right(verdict, start, resume):
    assert verdict(checks.check_restart, start, resume).startswith("✓ The task id outlived its client")


def test_resume_returning_the_reply(verdict):
    def resume_reply(wire, path):
        return tasks.follow(wire, Path(path).read_text().strip(), deadline_s=30)
    out = verdict(checks.check_restart, start_and_save_text, resume_reply)
    assert out.startswith("✗ resume returned a Reply object") and "Return reply.result" in out, out


def test_restart_with_the_id_in_memory(verdict):
    kept = {}

    def start_in_memory(wire, night, path):
        reply = wire.request("tools/call", {"name": "score_night", "arguments": {
            "night": night, "epochs": 4, "pause_ms": 300}}, meta=TASKS)
        kept["task"] = reply.result["taskId"]
        Path(path).write_text("started")

    def resume_from_memory(wire, path):
        return follower()(wire, kept["task"], None)
    out = verdict(checks.check_restart, start_in_memory, resume_from_memory)
    assert "does not hold its task id" in out


def test_restart_reading_another_task(verdict):
    kept = {}

    def start_both_ways(wire, night, path):
        start_and_save_json(wire, night, path)
        kept["task"] = json.loads(Path(path).read_text())["taskId"]

    def resume_the_last(wire, path):
        return follower()(wire, kept["task"], None)
    out = verdict(checks.check_restart, start_both_ways, resume_the_last)
    assert "resume polled the other night's task" in out


def test_restart_with_the_id_kept_by_path(verdict):
    # A blind learner run: a dict keyed by path passed, as the check called resume in the same process on the same path.
    saved = {}

    def start_keyed(wire, night, path):
        start_and_save_text(wire, night, path)
        saved[str(path)] = Path(path).read_text().strip()

    def resume_keyed(wire, path):
        return follower()(wire, saved[str(path)], None)
    out = verdict(checks.check_restart, start_keyed, resume_keyed)
    assert out.startswith("✗ resume polled no task the file named, not the task in the file it was given; it raised "
                          "KeyError"), out


def test_starting_the_same_night_every_time(verdict):
    # A blind learner run: night P07 written in crashed the check with a TypeError.
    out = verdict(checks.check_restart, start_with_arguments({**ARGUMENTS, "night": "P07"}), resume_json)
    assert out.startswith("✗ start_and_save, asked for night P08, started no score_night for it; its tools/call "
                          "named 'P07'."), out


@pytest.mark.parametrize("write, said", [
    (lambda task_id: task_id + "\n", "newline"),
    (lambda task_id: json.dumps(task_id), "quotes"),
])
def test_resume_sending_the_file_text_as_it_is(verdict, write, said):
    # A blind learner run: a newline or JSON quotes left on the id were blamed on a variable that survived.
    def start_and_save(wire, night, path):
        reply = wire.request("tools/call", {"name": "score_night", "arguments": {"night": night, **ARGUMENTS}},
                             meta=TASKS)
        Path(path).write_text(write(reply.result["taskId"]))

    def resume_raw(wire, path):
        return follower()(wire, Path(path).read_text(), None)
    out = verdict(checks.check_restart, start_and_save, resume_raw)
    assert out.startswith("✗ resume polled the task id ") and said in out and ".strip() the text" in out, out


def test_resume_at_the_interval_saved_beside_the_id(verdict):
    # A blind learner run: the handle's pollIntervalMs kept in a file named after the id's; the file name may change.
    def start_keeping_the_interval(wire, night, path):
        reply = wire.request("tools/call", {"name": "score_night", "arguments": {"night": night, **ARGUMENTS}},
                             meta=TASKS)
        Path(path).write_text(reply.result["taskId"])
        Path(str(path) + ".interval").write_text(str(reply.result["pollIntervalMs"]))

    def resume_at_the_saved_interval(wire, path):
        task_id, wait_s = Path(path).read_text(), int(Path(str(path) + ".interval").read_text()) / 1000
        while (task := task_request(wire, "tasks/get", {"taskId": task_id}).result)["status"] == "working":
            time.sleep(wait_s)
        return task
    out = verdict(checks.check_restart, start_keeping_the_interval, resume_at_the_saved_interval)
    assert out.startswith("✗ resume polled ") and "the task asked for 1500 ms (pollIntervalMs)" in out, out


def test_restart_stub(verdict):
    assert verdict(checks.check_restart, stub, stub).startswith("not done yet")


def test_follow_that_closes_the_wire(verdict):
    def closes(wire, task_id, answer):
        task = follower()(wire, task_id, answer)
        wire.close()
        return task
    assert "follow_task closed the wire it was given" in verdict(checks.check_follow, closes)


def start_with_arguments(arguments, name="score_night", meta=TASKS):
    def start_and_save(wire, night, path):
        reply = wire.request("tools/call", {"name": name, "arguments": {"night": night, **arguments}}, meta=meta)
        Path(path).write_text(json.dumps({"taskId": (reply.result or {}).get("taskId", "")}))
    return start_and_save


def start_with_the_helper_declaration(wire, night, path):
    """Written differently: tasks.declare() for the _meta, the arguments in another order, pathlib's open."""
    reply = wire.request("tools/call", {"name": "score_night", "arguments": {
        "pause_ms": 300, "night": night, "epochs": 4}}, meta=tasks.declare())
    with Path(path).open("w") as file:
        json.dump(reply.result, file)


def resume_sleeping_first(wire, path):
    """Written differently: sleeps before each poll, the interval of the latest reply (1 s before the first)."""
    task_id = json.loads(Path(path).read_text())["taskId"]
    wait_s = 1.0
    while True:
        time.sleep(wait_s)
        task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        if task["status"] in ("completed", "failed", "cancelled"):
            return task
        wait_s = task["pollIntervalMs"] / 1000


def test_restart_right_written_differently(verdict):
    out = verdict(checks.check_restart, start_with_the_helper_declaration, resume_sleeping_first)
    assert out.startswith("✓ The task id outlived its client")


def test_resume_that_polls_once(verdict):
    def poll_once(wire, path):
        return task_request(wire, "tasks/get", {"taskId": json.loads(Path(path).read_text())["taskId"]}).result
    out = verdict(checks.check_restart, start_and_save_json, poll_once)
    assert "resume returned a task that is still working" in out and "Keep polling the saved task" in out


def test_resume_that_never_sleeps(verdict):
    def busy(wire, path):
        task_id = json.loads(Path(path).read_text())["taskId"]
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
    out = verdict(checks.check_restart, start_and_save_json, busy)
    assert out.startswith("✗ resume polled ") and "the task asked for 1500 ms (pollIntervalMs)" in out


def test_resume_at_a_fixed_pace(verdict):
    # A fresh reader's run: time.sleep(1) passed while every lab kept score_night at 1000 ms.
    def one_second(wire, path):
        task_id = json.loads(Path(path).read_text())["taskId"]
        while (task := task_request(wire, "tasks/get", {"taskId": task_id}).result)["status"] == "working":
            time.sleep(1)
        return task
    out = verdict(checks.check_restart, start_and_save_json, one_second)
    assert out.startswith("✗ resume polled ") and "the task asked for 1500 ms (pollIntervalMs)" in out, out


def test_start_and_save_that_closes_the_wire(verdict):
    # A fresh reader's run: the check itself raised ServerExited on its own tasks/get.
    def closes(wire, night, path):
        start_and_save_json(wire, night, path)
        wire.close()
    out = verdict(checks.check_restart, closes, resume_json)
    assert out.startswith("✗ start_and_save closed the wire it was given.") and "Leave the wire open" in out, out


def test_resume_that_closes_the_wire(verdict):
    def closes(wire, path):
        task = resume_json(wire, path)
        wire.close()
        return task
    out = verdict(checks.check_restart, start_and_save_json, closes)
    assert out.startswith("✗ resume closed the wire it was given."), out


def test_saving_the_id_only_once_the_task_ended(verdict):
    def save_at_the_end(wire, night, path):
        reply = wire.request("tools/call", {"name": "score_night", "arguments": {
            "night": night, "epochs": 4, "pause_ms": 300}}, meta=TASKS)
        task_id = reply.result["taskId"]
        follower()(wire, task_id, None)
        Path(path).write_text(task_id)
    out = verdict(checks.check_restart, save_at_the_end, resume_text)
    assert "start_and_save returned only after the task of night P07 had ended" in out


@pytest.mark.parametrize("arguments, said", [
    ({}, "start_and_save left out epochs; the task asks for epochs: 4, pause_ms: 300"),
    ({"epochs": "4", "pause_ms": "300"}, "start_and_save sent epochs: '4'; the task asks for epochs: 4 (a JSON integer)"),
    ({"epochs": 4, "pause_ms": 1}, "start_and_save sent pause_ms: 1; the task asks for pause_ms: 300"),
])
def test_starting_with_other_arguments(verdict, arguments, said):
    assert said in verdict(checks.check_restart, start_with_arguments(arguments), resume_json)


def test_starting_the_other_tool(verdict):
    out = verdict(checks.check_restart, start_with_arguments(ARGUMENTS, name="review_night"), resume_json)
    assert "start_and_save called 'review_night'; the task asks for score_night" in out


def test_starting_without_the_extension(verdict):
    out = verdict(checks.check_restart, start_with_arguments(ARGUMENTS, meta=frames.DEFAULT), resume_json)
    assert "did not declare the tasks extension, so the lab ran score_night as a plain call" in out


def test_resume_without_the_extension(verdict):
    def undeclared(wire, path):
        task_id = json.loads(Path(path).read_text())["taskId"]
        return follower(meta=frames.DEFAULT)(wire, task_id, None)
    out = verdict(checks.check_restart, start_and_save_json, undeclared)
    assert "resume's tasks/get did not declare the tasks extension" in out and "-32021" in out

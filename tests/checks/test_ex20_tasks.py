"""Exercise 20 (drive a task to its end), tasks 1 and 2 (follow_task, outcome): the mistakes learners make get their
own verdict, and right answers written differently pass. Rows whose verdict is not a timing rule run at a quick pace
(QUICK_PACES) on one lab pair; the timing rules are test_ex20_tasks_pace.py's, the questions and answers
test_ex20_tasks_answers.py's. The rows of each task are files of their own so the test runs spread them over
workers: most of their time is the lab's polling pace, spent waiting."""

import re
import time

import pytest

import checks
from checks.ex20_tasks import LEFT_OUT, lab_pair, outcome_cases
from ex20_answers import HUNG_GUARD_S, QUICK_PACES, follower, lent, stub, task_request
from mcpwire import frames, tasks


@pytest.fixture(scope="module")
def labs():
    """One lab pair for every row whose answer neither hangs nor closes a wire: each check runs on tasks of its own."""
    with lab_pair() as pair:
        yield pair


def test_follow_with_the_mcpwire_helper(verdict, labs):
    def with_helper(wire, task_id, answer):
        return tasks.follow(wire, task_id, answer=answer, deadline_s=30).result
    assert verdict(lent(checks.check_follow, labs), with_helper, QUICK_PACES).startswith("✓")


def test_follow_returning_the_reply(verdict, labs):
    # A blind learner run: the Reply passed, though the task asks for the dict (Task 2's outcome reads it).
    def with_helper(wire, task_id, answer):
        return tasks.follow(wire, task_id, answer=answer, deadline_s=30)
    out = verdict(lent(checks.check_follow, labs), with_helper, QUICK_PACES)
    assert out.startswith("✗ follow_task returned a Reply object") and "Return reply.result" in out, out


def test_follow_returning_the_whole_message(verdict, labs):
    def whole_message(wire, task_id, answer):
        return tasks.follow(wire, task_id, answer=answer, deadline_s=30).message
    out = verdict(lent(checks.check_follow, labs), whole_message, QUICK_PACES)
    assert out.startswith("✗ follow_task returned the whole JSON-RPC message") and 'message["result"]' in out, out


def follow_reading(interval, *, ttl=False):
    """A follow_task right but for how it reads the interval (interval(task)), and, with ttl, one that gives up once
    ttlMs has passed."""
    def follow_task(wire, task_id, answer):
        answered, started = set(), time.monotonic()
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            if ttl and (time.monotonic() - started) * 1000 > task["ttlMs"]:
                return task
            fresh = {k: r for k, r in task.get("inputRequests", {}).items() if k not in answered}
            if fresh:
                task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": {
                    k: answer(k, r) for k, r in fresh.items()}})
                answered.update(fresh)
            time.sleep(interval(task) / 1000)
    return follow_task


def test_follow_reading_poll_interval_as_always_there(verdict, labs):
    # The solution before this round: task["pollIntervalMs"], which a server may leave out (pollIntervalMs?: number).
    out = verdict(lent(checks.check_follow, labs), follow_reading(lambda task: task["pollIntervalMs"]), QUICK_PACES)
    assert out.startswith("✗ follow_task raised KeyError: 'pollIntervalMs' on stdio: the check's wire left "
                          "pollIntervalMs out of that reply"), out
    assert "pollIntervalMs is optional" in out and "wait an interval of your own" in out, out


def test_follow_giving_up_at_the_ttl(verdict, labs):
    # ttlMs may be null (no time limit): arithmetic on it breaks.
    out = verdict(lent(checks.check_follow, labs), follow_reading(lambda task: task.get("pollIntervalMs", 1000), ttl=True),
                  QUICK_PACES)
    assert out.startswith("✗ follow_task raised TypeError") and "ttlMs may be null" in out, out
    # A blind learner run (s11): the problem named the error only; it names the field now.
    assert ": ttlMs was null in that reply" in out.splitlines()[0], out


def test_follow_reading_poll_interval_with_get_and_no_default(verdict, labs):
    out = verdict(lent(checks.check_follow, labs), follow_reading(lambda task: task.get("pollIntervalMs")), QUICK_PACES)
    assert out.startswith("✗ follow_task raised TypeError") and ": the check's wire left pollIntervalMs out of that " \
        "reply" in out.splitlines()[0], out


def test_follow_without_a_pause_where_no_interval_is_given(verdict, labs):
    out = verdict(lent(checks.check_follow, labs), follow_reading(lambda task: task.get("pollIntervalMs", 0)), QUICK_PACES)
    assert re.match(r"✗ You polled \d{1,2} ms after a tasks/get whose result had no pollIntervalMs\.", out), out
    assert "any pause of 100 ms or more" in out


def test_follow_with_a_pause_of_its_own_where_no_interval_is_given(verdict, labs):
    # Right, written differently: a quarter of a second of its own, not the last interval the task gave.
    out = verdict(lent(checks.check_follow, labs), follow_reading(lambda task: task.get("pollIntervalMs", 250)), QUICK_PACES)
    assert out.startswith("✓ follow_task drove review_night"), out


def test_polling_again_right_after_an_update(verdict, labs):
    # Blind learner runs: a poll at once after tasks/update, as the lesson's, was refused as a poll too soon. It is
    # one poll to see the answer taken; the pace counts again from its reply.
    assert verdict(lent(checks.check_follow, labs), follower(after_update=0), QUICK_PACES).startswith("✓ follow_task drove review_night")


def test_follow_polling_once_more_after_the_end(verdict, labs):
    # A blind learner run: one more poll after the terminal status passed; the task says poll until it ends.
    def once_more(wire, task_id, answer):
        task = follower()(wire, task_id, answer)
        time.sleep(task.get("pollIntervalMs", 1000) / 1000)
        return task_request(wire, "tasks/get", {"taskId": task_id}).result
    out = verdict(lent(checks.check_follow, labs), once_more, QUICK_PACES)
    assert out.startswith("✗ follow_task polled 1 more time after a tasks/get result showed completed."), out
    assert "Return the tasks/get result that showed one" in out


def test_follow_polling_once_more_at_once_after_the_end(verdict, labs):
    # A blind learner run: a poll right after completed was told it came too soon; the rule it broke is "no poll
    # after the one that shows the end".
    def at_once(wire, task_id, answer):
        follower()(wire, task_id, answer)
        return task_request(wire, "tasks/get", {"taskId": task_id}).result
    out = verdict(lent(checks.check_follow, labs), at_once, QUICK_PACES)
    assert out.startswith("✗ follow_task polled 1 more time after a tasks/get result showed completed."), out
    assert "pollIntervalMs" not in out, out


def test_follow_raising_on_a_failed_task(verdict, labs):
    # A blind learner run: told "raised RuntimeError: Invalid input response", the check's answer, read as its own.
    def raises(wire, task_id, answer):
        task = follower()(wire, task_id, answer)
        if task["status"] == "failed":
            raise RuntimeError(task["error"]["message"])
        return task
    out = verdict(lent(checks.check_follow, labs), raises, QUICK_PACES)
    assert out.startswith("✗ follow_task, given a review_night that had failed already (the check answered its first "
                          "question with a stage the lab refuses, so the task's error names that answer, not yours), "
                          "raised RuntimeError: Invalid input response"), out
    assert "do not raise" in out and "waits for completed alone" not in out


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
            time.sleep(task.get("pollIntervalMs", 1000) / 1000)
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        return task
    out = verdict(lent(checks.check_follow, None, ended_guard_s=HUNG_GUARD_S), only_completed, QUICK_PACES)
    assert out.startswith("✗ follow_task, given a review_night that had failed already (") and "was still polling" in out, out
    assert "waits for completed alone" in out


def test_follow_stub(verdict, labs):
    assert verdict(lent(checks.check_follow, labs), stub, QUICK_PACES).startswith("not done yet")


def test_stopping_at_input_required(verdict, labs):
    out = verdict(lent(checks.check_follow, labs), follower(stop_at_input=True), QUICK_PACES)
    assert "returned while the task was input_required" in out and "input_required is not an end" in out


def test_forgetting_mcp_name_on_http(verdict, labs):
    out = verdict(lent(checks.check_follow, labs), follower(name_header=False), QUICK_PACES)
    assert "Your tasks/get over HTTP went without Mcp-Name" in out and "-32020" in out


def test_declaring_the_extension_only_on_the_call(verdict, labs):
    out = verdict(lent(checks.check_follow, labs), follower(meta=frames.DEFAULT), QUICK_PACES)
    assert "did not declare the tasks extension" in out and "-32021" in out


@pytest.fixture(scope="module")
def cases(labs):
    return outcome_cases(labs)


def outcome_right(task):
    if task["status"] == "completed":
        return "tool error" if task["result"].get("isError") else "done"
    return task["status"] if task["status"] in ("failed", "cancelled") else "not finished"


def outcome_by_table(task):
    finished = {"failed": "failed", "cancelled": "cancelled", "working": "not finished", "input_required": "not finished"}
    return finished.get(task["status"]) or ("tool error" if task.get("result", {}).get("isError") is True else "done")


@pytest.mark.parametrize("outcome", [outcome_right, outcome_by_table])
def test_outcome_right(verdict, cases, outcome):
    assert verdict(checks.check_outcome, outcome, cases).startswith("✓ outcome read all 10 tasks right")


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
    # A blind learner run: isError read off the task, told only that no string equals true.
    (lambda task: ("tool error" if task.get("isError") else "done") if task["status"] == "completed"
     else outcome_right(task),
     "outcome gave 'done'", "isError sits inside the task's result"),
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
    assert verdict(checks.check_outcome, outcome, cases).startswith("✓ outcome read all 10 tasks right")


def test_outcome_treating_input_required_as_the_end(verdict, cases):
    def waiting_is_done(task):
        return "done" if task["status"] == "input_required" else outcome_right(task)
    out = verdict(checks.check_outcome, waiting_is_done, cases)
    assert "expected 'not finished'" in out and "input_required is not an end" in out


def test_follow_that_closes_the_wire(verdict):
    def closes(wire, task_id, answer):
        task = follower()(wire, task_id, answer)
        wire.close()
        return task
    assert "follow_task closed the wire it was given" in verdict(checks.check_follow, closes, QUICK_PACES)


def follow_keeping_the_first_interval(wire, task_id, answer):
    """Right, written differently: a for loop, the first reply's pollIntervalMs where a later reply leaves it out, the
    answered keys in a list, time.time."""
    first_ms, answered = None, []
    for _ in iter(int, 1):
        task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        if task["status"] in ("completed", "failed", "cancelled"):
            return task
        first_ms = first_ms or task.get("pollIntervalMs")
        todo = [key for key in task.get("inputRequests", {}) if key not in answered]
        if todo:
            task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": {
                key: answer(key, task["inputRequests"][key]) for key in todo}})
            answered += todo
        until = time.time() + task.get("pollIntervalMs", first_ms or 1000) / 1000
        while time.time() < until:
            time.sleep(max(0.0, until - time.time()))


@pytest.mark.parametrize("paces", [QUICK_PACES, {transport: {"asking": 200, "quiet": (LEFT_OUT, 150, 100)}
                                                for transport in ("stdio", "http")}])
def test_follow_right_keeping_the_first_interval(verdict, labs, paces):
    # The second paces leave pollIntervalMs out of the first reply (the loop then waits a second), as a drawn run may.
    out = verdict(lent(checks.check_follow, labs), follow_keeping_the_first_interval, paces)
    assert out.startswith("✓ follow_task drove review_night"), out


def outcome_by_message(task):
    """A blind learner run (issue 40): completed read as a tool error when statusMessage speaks of an error."""
    if task["status"] == "completed":
        return "tool error" if "error" in task.get("statusMessage", "").lower() else "done"
    return {"failed": "failed", "cancelled": "cancelled"}.get(task["status"], "not finished")


def test_outcome_from_the_status_message(verdict, cases):
    out = verdict(checks.check_outcome, outcome_by_message, cases)
    assert out.startswith("✗ outcome gave 'done' for ") and "expected 'tool error'" in out, out
    assert "statusMessage is free text" in out and "'Finished.'" in out, out


@pytest.mark.parametrize("outcome, said", [
    # Blind learner runs (issue 40): both were told that isError sits on the task itself, which neither read.
    (lambda task: ("tool error" if (task["result"].get("content") or [{}])[0].get("isError") else "done")
     if task["status"] == "completed" else outcome_right(task), "not to a block of its content"),
    (lambda task: "done" if task["status"] == "completed" else outcome_right(task),
     "A completed task whose result has isError: true is a tool error"),
])
def test_outcome_is_error_hint_names_the_cause(verdict, cases, outcome, said):
    out = verdict(checks.check_outcome, outcome, cases)
    assert out.startswith("✗ outcome gave 'done'") and said in out and "not on the task itself" not in out, out


def follow_with(*, dedup_previous_poll=False, update_member="inputResponses", returned=lambda task: task):
    """The reference follow_task (a blind learner's) with one change: keys deduplicated against the previous poll
    only, the answers sent under another member, or what it returns made from the last result."""
    def follow_task(wire, task_id, answer):
        answered, previous, pause = set(), set(), 1.0
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return returned(task)
            pause = task.get("pollIntervalMs", pause * 1000) / 1000
            asked = task.get("inputRequests", {}) if task["status"] == "input_required" else {}
            skip = previous if dedup_previous_poll else answered
            new = {key: answer(key, request) for key, request in asked.items() if key not in skip}
            previous = set(asked)
            if new:
                task_request(wire, "tasks/update", {"taskId": task_id, update_member: new})
                answered.update(new)
                continue
            time.sleep(pause)
    return follow_task


def test_follow_right_as_the_reference(verdict, labs):
    out = verdict(lent(checks.check_follow, labs), follow_with(), QUICK_PACES)
    assert out.startswith("✓"), out


def test_follow_skipping_only_the_previous_polls_keys(verdict, labs):
    # A blind learner run (s11): passed, as an answered key came back only on the very next poll.
    out = verdict(lent(checks.check_follow, labs), follow_with(dedup_previous_poll=True), QUICK_PACES)
    assert out.startswith("✗ You answered 'epoch-") and "twice with tasks/update" in out, out


def test_follow_returning_the_result_without_its_meta(verdict, labs):
    # A blind learner run (s11): a copy without _meta passed, as only its status was compared.
    out = verdict(lent(checks.check_follow, labs),
                  follow_with(returned=lambda task: {k: v for k, v in task.items() if k != "_meta"}), QUICK_PACES)
    assert out.startswith("✗ follow_task returned the last tasks/get result changed: _meta left out."), out


def test_follow_sending_answers_under_another_member(verdict):
    # A blind learner run (s11): {"responses": ...} was told it polled too soon. The lab never gets the answers, so the
    # loop polls until the guard: a lab pair of its own and the short guard.
    out = verdict(lent(checks.check_follow, None, guard_s=HUNG_GUARD_S), follow_with(update_member="responses"),
                  QUICK_PACES)
    assert out.startswith("✗ Your tasks/update had no inputResponses (its params held responses)"), out

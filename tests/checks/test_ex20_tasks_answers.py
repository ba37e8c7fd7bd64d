"""Exercise 20 (drive a task to its end), task 1 (follow_task), its questions: what follow_task passes to answer, what
it sends with tasks/update, and how often, each mistake with its own verdict, and right answers written differently.
The rows run at a quick pace (QUICK_PACES) on one lab pair, but for one that never returns; the other rows of task 1
are test_ex20_tasks.py's and test_ex20_tasks_pace.py's."""

import time

import pytest

import checks
from checks.ex20_tasks import lab_pair
from ex20_answers import HUNG_GUARD_S, QUICK_PACES, follower, lent, task_request
from mcpwire import tasks


@pytest.fixture(scope="module")
def labs():
    """One lab pair for every row whose answer neither hangs nor closes a wire: each check runs on tasks of its own."""
    with lab_pair() as pair:
        yield pair


@pytest.mark.parametrize("response, sent", [
    (lambda key, request: {"action": "decline"}, "{'action': 'decline'}"),
    (lambda key, request: {"action": "accept", "content": {
        "stage": request["params"]["requestedSchema"]["properties"]["stage"]["enum"][0]}},
     "{'action': 'accept', 'content': {'stage': 'N1'}}"),
])
def test_follow_sending_its_own_answers(verdict, labs, response, sent):
    # A blind learner run: answer called for each key, its return thrown away, response(key, request) sent.
    out = verdict(lent(checks.check_follow, labs), follower(respond=response), QUICK_PACES)
    assert out.startswith(f"✗ follow_task sent {sent} for 'epoch-7' with tasks/update; answer returned "
                          "{'action': 'accept', 'content': {'stage': 'REM'}}."), out
    assert "unchanged: it is the user's answer" in out


def test_follow_answering_without_calling_answer(verdict, labs):
    def own_answers(wire, task_id, answer):
        return follower()(wire, task_id, lambda key, request: {"action": "decline"})
    out = verdict(lent(checks.check_follow, labs), own_answers, QUICK_PACES)
    assert out.startswith("✗ follow_task sent {'action': 'decline'} for 'epoch-7' with tasks/update, but never "
                          "called answer('epoch-7', request)."), out


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
            time.sleep(task.get("pollIntervalMs", 1000) / 1000)
    return follow_task


@pytest.mark.parametrize("given, said", [
    # A fresh reader's run: the params passed, which an answer function reading request["params"] cannot use.
    (lambda key, entry, task: entry["params"], 'with request["params"], the params alone as the request'),
    (lambda key, entry, task: None, "with None as the request"),
    (lambda key, entry, task: task["inputRequests"], "with the whole inputRequests object as the request"),
    (lambda key, entry, task: task, "with the whole tasks/get result as the request"),
    (lambda key, entry, task: entry["params"]["message"], "with 'Epoch 7 of night P07"),
])
def test_follow_passing_another_request_to_answer(verdict, labs, given, said):
    out = verdict(lent(checks.check_follow, labs), passing_to_answer(given), QUICK_PACES)
    assert out.startswith("✗ follow_task called answer('epoch-7', request) " + said), out
    assert "Pass task[\"inputRequests\"][key] unchanged" in out, out


def test_follow_passing_key_and_request_swapped(verdict, labs):
    def swapped(wire, task_id, answer):
        return follower()(wire, task_id, lambda key, request: answer(request, key))
    out = verdict(lent(checks.check_follow, labs), swapped, QUICK_PACES)
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
            time.sleep(task.get("pollIntervalMs", 1000) / 1000)
    return follow_task


def only_the_first_key(asked, answered):
    """A fresh reader's run: next(iter(inputRequests)), passed while the lab never had two questions open."""
    key = next(iter(asked), None)
    return None if key in answered else key


def the_first_key_not_answered(asked, answered):
    return next((key for key in asked if key not in answered), None)


@pytest.mark.parametrize("pick", [only_the_first_key, the_first_key_not_answered])
def test_follow_answering_one_question_a_poll(verdict, labs, pick):
    out = verdict(lent(checks.check_follow, labs), one_key_a_round(pick), QUICK_PACES)
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
        time.sleep(task.get("pollIntervalMs", 1000) / 1000)
        task = tasks.get(wire, task_id).result
    return task


def test_follow_right_with_one_update_per_key(verdict, labs):
    assert verdict(lent(checks.check_follow, labs), follow_one_update_per_key, QUICK_PACES).startswith("✓ follow_task drove review_night")


def test_answering_a_key_on_every_poll(verdict, labs):
    out = verdict(lent(checks.check_follow, labs), follower(dedup=False), QUICK_PACES)
    assert "You answered 'epoch-7' twice with tasks/update" in out


def follow_with_the_helpers(wire, task_id, answer):
    """Written differently: mcpwire.tasks requests, the answers kept in a dict, the interval read up front."""
    given = {}
    task = tasks.get(wire, task_id).result
    while task["status"] not in ("completed", "failed", "cancelled"):
        asked = {key: request for key, request in task.get("inputRequests", {}).items() if key not in given}
        if asked:
            given.update({key: answer(key, request) for key, request in asked.items()})
            tasks.update(wire, task_id, {key: given[key] for key in asked})
        time.sleep(task.get("pollIntervalMs", 1000) / 1000)
        task = tasks.get(wire, task_id).result
    return task


def test_follow_right_with_the_helpers(verdict, labs):
    assert verdict(lent(checks.check_follow, labs), follow_with_the_helpers, QUICK_PACES).startswith("✓ follow_task drove review_night")


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
        time.sleep(task.get("pollIntervalMs", 1000) / 1000)


def test_asking_the_user_on_every_poll(verdict, labs):
    out = verdict(lent(checks.check_follow, labs), asking_every_poll, QUICK_PACES)
    assert "follow_task called answer for 'epoch-7'" in out and "keep a set of the keys you answered" in out


def test_wrapping_the_answer_again(verdict, labs):
    def wraps(wire, task_id, answer):
        return follower()(wire, task_id, lambda key, request: {"action": "accept", "content": answer(key, request)})
    out = verdict(lent(checks.check_follow, labs), wraps, QUICK_PACES)
    assert out.startswith("✗ follow_task sent {'action': 'accept', 'content': {'action': 'accept', 'content': "), out
    assert "answer returned {'action': 'accept', 'content': {'stage': 'REM'}}" in out and "unchanged" in out


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
            time.sleep(task.get("pollIntervalMs", 1000) / 1000)
    out = verdict(lent(checks.check_follow, None, guard_s=HUNG_GUARD_S), as_list, QUICK_PACES)
    assert "The lab answered your tasks/update with error -32602" in out and "keyed like inputRequests" in out


def test_follow_rewriting_the_answer(verdict, labs):
    # A blind learner run (issue 40): each answer rewrapped as {"action": "accept", "content": answer.get("content",
    # answer)} passed, as the check's user accepted every question. It declines the question the wire adds now.
    def rewrap(wire, task_id, answer):
        def rewrapped(key, request):
            given = answer(key, request)
            return {"action": "accept", "content": given.get("content", given)}
        return follower()(wire, task_id, rewrapped)
    out = verdict(lent(checks.check_follow, labs), rewrap, QUICK_PACES)
    assert out.startswith("✗ follow_task sent {'action': 'accept', 'content': {'action': 'decline'}} for 'epoch-8' "
                          "with tasks/update; answer returned {'action': 'decline'}."), out
    assert "unchanged" in out

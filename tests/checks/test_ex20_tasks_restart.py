"""Exercise 20 (drive a task to its end), task 4 (start_and_save, resume): the mistakes learners make get their own
verdict, and right answers written differently pass. Rows whose verdict names no pace run at a quicker one
(QUICK_RESUME_PACES), and every row but those that close a wire on one lab pair. The rows of each task are a file of
their own so the test runs spread them over workers: most of their time is the lab's polling pace, spent waiting."""

import json
import re
import time
from pathlib import Path

import pytest

import checks
from checks.ex20_tasks import lab_pair
from ex20_answers import ARGUMENTS, QUICK_RESUME_PACES, RESUME_PACES, TASKS, follower, lent, stub, task_request
from mcpwire import frames, tasks


# Scheduled among the first files (tests/conftest.py): every row that resumes waits out a 1.2 s night: 50 s on one
# worker, spent waiting, which overlaps other files' work instead of trailing the run.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def labs():
    """One lab pair for the rows whose answers close no wire: each check runs on tasks and files of its own."""
    with lab_pair() as pair:
        yield pair


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
def test_restart_right(verdict, labs, start, resume):
    assert verdict(lent(checks.check_restart, labs), start, resume).startswith("✓ The task id outlived its client")


def test_resume_returning_the_reply(verdict, labs):
    def resume_reply(wire, path):
        return tasks.follow(wire, Path(path).read_text().strip(), deadline_s=30)
    out = verdict(lent(checks.check_restart, labs), start_and_save_text, resume_reply, QUICK_RESUME_PACES)
    assert out.startswith("✗ resume returned a Reply object") and "Return reply.result" in out, out


def test_restart_with_the_id_in_memory(verdict, labs):
    kept = {}

    def start_in_memory(wire, night, path):
        reply = wire.request("tools/call", {"name": "score_night", "arguments": {
            "night": night, "epochs": 4, "pause_ms": 300}}, meta=TASKS)
        kept["task"] = reply.result["taskId"]
        Path(path).write_text("started")

    def resume_from_memory(wire, path):
        return follower()(wire, kept["task"], None)
    out = verdict(lent(checks.check_restart, labs), start_in_memory, resume_from_memory, QUICK_RESUME_PACES)
    assert "does not hold its task id" in out


def test_restart_reading_another_task(verdict, labs):
    kept = {}

    def start_both_ways(wire, night, path):
        start_and_save_json(wire, night, path)
        kept["task"] = json.loads(Path(path).read_text())["taskId"]

    def resume_the_last(wire, path):
        return follower()(wire, kept["task"], None)
    out = verdict(lent(checks.check_restart, labs), start_both_ways, resume_the_last, QUICK_RESUME_PACES)
    assert out.startswith("✗ resume polled the task started third (night P08), not the one in the file it was given "
                          "(night P07, started second)."), out


def test_restart_with_the_id_kept_by_path(verdict, labs):
    # A blind learner run: a dict keyed by path passed, as the check called resume in the same process on the same path.
    saved = {}

    def start_keyed(wire, night, path):
        start_and_save_text(wire, night, path)
        saved[str(path)] = Path(path).read_text().strip()

    def resume_keyed(wire, path):
        return follower()(wire, saved[str(path)], None)
    out = verdict(lent(checks.check_restart, labs), start_keyed, resume_keyed, QUICK_RESUME_PACES)
    assert out.startswith("✗ resume polled no task the file named, not the one in the file it was given (night P07, "
                          "started second); it raised KeyError"), out


def test_starting_the_same_night_every_time(verdict, labs):
    # A blind learner run: night P07 written in crashed the check with a TypeError.
    out = verdict(lent(checks.check_restart, labs), start_with_arguments({**ARGUMENTS, "night": "P07"}), resume_json, QUICK_RESUME_PACES)
    assert out.startswith("✗ start_and_save, asked for night P08, started no score_night for it; its tools/call "
                          "named 'P07'."), out


@pytest.mark.parametrize("write, said", [
    (lambda task_id: task_id + "\n", "newline"),
    (lambda task_id: json.dumps(task_id), "quotes"),
])
def test_resume_sending_the_file_text_as_it_is(verdict, labs, write, said):
    # A blind learner run: a newline or JSON quotes left on the id were blamed on a variable that survived.
    def start_and_save(wire, night, path):
        reply = wire.request("tools/call", {"name": "score_night", "arguments": {"night": night, **ARGUMENTS}},
                             meta=TASKS)
        Path(path).write_text(write(reply.result["taskId"]))

    def resume_raw(wire, path):
        return follower()(wire, Path(path).read_text(), None)
    out = verdict(lent(checks.check_restart, labs), start_and_save, resume_raw, QUICK_RESUME_PACES)
    assert out.startswith("✗ resume polled the task id ") and said in out and ".strip() the text" in out, out


def test_resume_at_the_interval_saved_beside_the_id(verdict, labs):
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
    out = verdict(lent(checks.check_restart, labs), start_keeping_the_interval, resume_at_the_saved_interval, RESUME_PACES)
    assert out.startswith("✗ resume polled ") and "the task asked for 1500 ms (pollIntervalMs)" in out, out


def test_restart_stub(verdict, labs):
    assert verdict(lent(checks.check_restart, labs), stub, stub, QUICK_RESUME_PACES).startswith("not done yet")

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


def test_restart_right_written_differently(verdict, labs):
    out = verdict(lent(checks.check_restart, labs), start_with_the_helper_declaration, resume_sleeping_first, QUICK_RESUME_PACES)
    assert out.startswith("✓ The task id outlived its client")


def test_resume_that_polls_once(verdict, labs):
    def poll_once(wire, path):
        return task_request(wire, "tasks/get", {"taskId": json.loads(Path(path).read_text())["taskId"]}).result
    out = verdict(lent(checks.check_restart, labs), start_and_save_json, poll_once, QUICK_RESUME_PACES)
    assert "resume returned a task that is still working" in out and "Keep polling the saved task" in out


def test_resume_that_never_sleeps(verdict, labs):
    def busy(wire, path):
        task_id = json.loads(Path(path).read_text())["taskId"]
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
    out = verdict(lent(checks.check_restart, labs), start_and_save_json, busy, RESUME_PACES)
    assert out.startswith("✗ resume polled ") and "the task asked for 1500 ms (pollIntervalMs)" in out


def test_resume_at_a_fixed_pace(verdict, labs):
    # A fresh reader's run: time.sleep(1) passed while every lab kept score_night at 1000 ms.
    def one_second(wire, path):
        task_id = json.loads(Path(path).read_text())["taskId"]
        while (task := task_request(wire, "tasks/get", {"taskId": task_id}).result)["status"] == "working":
            time.sleep(1)
        return task
    out = verdict(lent(checks.check_restart, labs), start_and_save_json, one_second, RESUME_PACES)
    assert out.startswith("✗ resume polled ") and "the task asked for 1500 ms (pollIntervalMs)" in out, out


@pytest.mark.parametrize("pause_s", [1.5, 2.0])
def test_resume_at_a_fixed_pause(verdict, labs, pause_s):
    # A blind learner run: a fixed 1.5 or 2 s sleep passed, as the night ended after two polls. The restarted client's
    # wire now draws a short and a long pace for each run and shows the task working until it has served them all.
    def fixed(wire, path):
        task_id = json.loads(Path(path).read_text())["taskId"]
        while (task := task_request(wire, "tasks/get", {"taskId": task_id}).result)["status"] == "working":
            time.sleep(pause_s)
        return task
    out = verdict(lent(checks.check_restart, labs), start_and_save_json, fixed)
    judged = re.match(r"✗ resume polled (\d+\.\d) s after a tasks/get that asked for (1\d\d|200) ms", out)
    # The sleep is at least pause_s; on a loaded machine the poll it measures may come a little later (2.1 s seen).
    assert judged and pause_s <= float(judged.group(1)) + 0.05 <= pause_s + 1.0, out


def test_start_and_save_that_closes_the_wire(verdict):
    # A fresh reader's run: the check itself raised ServerExited on its own tasks/get.
    def closes(wire, night, path):
        start_and_save_json(wire, night, path)
        wire.close()
    out = verdict(checks.check_restart, closes, resume_json, QUICK_RESUME_PACES)
    assert out.startswith("✗ start_and_save closed the wire it was given.") and "Leave the wire open" in out, out


def test_resume_that_closes_the_wire(verdict):
    def closes(wire, path):
        task = resume_json(wire, path)
        wire.close()
        return task
    out = verdict(checks.check_restart, start_and_save_json, closes, QUICK_RESUME_PACES)
    assert out.startswith("✗ resume closed the wire it was given."), out


def test_saving_the_id_only_once_the_task_ended(verdict, labs):
    def save_at_the_end(wire, night, path):
        reply = wire.request("tools/call", {"name": "score_night", "arguments": {
            "night": night, "epochs": 4, "pause_ms": 300}}, meta=TASKS)
        task_id = reply.result["taskId"]
        follower()(wire, task_id, None)
        Path(path).write_text(task_id)
    out = verdict(lent(checks.check_restart, labs), save_at_the_end, resume_text, QUICK_RESUME_PACES)
    assert "start_and_save returned only after the task of night P08 had ended" in out


@pytest.mark.parametrize("arguments, said", [
    ({}, "start_and_save left out epochs; the task asks for epochs: 4, pause_ms: 300"),
    ({"epochs": "4", "pause_ms": "300"}, "start_and_save sent epochs: '4'; the task asks for epochs: 4 (a JSON integer)"),
    ({"epochs": 4, "pause_ms": 1}, "start_and_save sent pause_ms: 1; the task asks for pause_ms: 300"),
])
def test_starting_with_other_arguments(verdict, labs, arguments, said):
    assert said in verdict(lent(checks.check_restart, labs), start_with_arguments(arguments), resume_json, QUICK_RESUME_PACES)


def test_starting_the_other_tool(verdict, labs):
    out = verdict(lent(checks.check_restart, labs), start_with_arguments(ARGUMENTS, name="review_night"), resume_json, QUICK_RESUME_PACES)
    assert "start_and_save called 'review_night'; the task asks for score_night" in out


def test_starting_without_the_extension(verdict, labs):
    out = verdict(lent(checks.check_restart, labs), start_with_arguments(ARGUMENTS, meta=frames.DEFAULT), resume_json, QUICK_RESUME_PACES)
    assert "did not declare the tasks extension, so the lab ran score_night as a plain call" in out


def test_resume_without_the_extension(verdict, labs):
    def undeclared(wire, path):
        task_id = json.loads(Path(path).read_text())["taskId"]
        return follower(meta=frames.DEFAULT)(wire, task_id, None)
    out = verdict(lent(checks.check_restart, labs), start_and_save_json, undeclared, QUICK_RESUME_PACES)
    assert "resume's tasks/get did not declare the tasks extension" in out and "-32021" in out


def test_starting_without_pause_ms(verdict, labs):
    # A blind learner run: told the night would take six seconds, which only a missing epochs makes true.
    out = verdict(lent(checks.check_restart, labs), start_with_arguments({"epochs": 4}), resume_json, QUICK_RESUME_PACES)
    assert out.startswith("✗ start_and_save left out pause_ms") and "six seconds" not in out, out
    assert "a default is the server's to change" in out


def test_polling_before_saving_the_id(verdict, labs):
    # A blind learner run: a tasks/get (after a second) before the id was written passed "as soon as the reply comes".
    def poll_first(wire, night, path):
        reply = wire.request("tools/call", {"name": "score_night", "arguments": {
            "night": night, "epochs": 4, "pause_ms": 300}}, meta=TASKS)
        task_request(wire, "tasks/get", {"taskId": reply.result["taskId"]})
        Path(path).write_text(reply.result["taskId"])
    out = verdict(lent(checks.check_restart, labs), poll_first, resume_text, QUICK_RESUME_PACES)
    assert out.startswith("✗ start_and_save sent a tasks/get for night P08 before it wrote the task id to the file"), out
    assert "Write the id first" in out


def test_polling_after_saving_the_id(verdict, labs):
    # Written differently: the id written at once, then one look at the task before returning.
    def save_then_poll(wire, night, path):
        reply = wire.request("tools/call", {"name": "score_night", "arguments": {
            "night": night, "epochs": 4, "pause_ms": 300}}, meta=TASKS)
        Path(path).write_text(reply.result["taskId"])
        task_request(wire, "tasks/get", {"taskId": reply.result["taskId"]})
    assert verdict(lent(checks.check_restart, labs), save_then_poll, resume_text, QUICK_RESUME_PACES).startswith("✓ The task id outlived its client")


def test_resume_remembering_the_first_id(verdict, labs):
    # A blind learner run (issue 40): the first id started, kept in a module global, passed while the check resumed
    # the first night it started. It resumes the second of three now.
    kept = {}

    def start_and_save(wire, night, path):
        start_and_save_text(wire, night, path)
        kept.setdefault("first", Path(path).read_text().strip())

    def resume_the_first(wire, path):
        return follower()(wire, kept["first"], None)
    out = verdict(lent(checks.check_restart, labs), start_and_save, resume_the_first, QUICK_RESUME_PACES)
    assert out.startswith("✗ resume polled the task started first (night P08), not the one in the file it was given "
                          "(night P07, started second)."), out
    assert "Read the task id back from the path" in out

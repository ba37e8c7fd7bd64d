"""The task store is shared by every lab process on one notes folder: a task started on one lab is polled
from others and finishes there, two pollers see one story, the store holds a thousand tasks, and under
--auth a task is visible to its own principal only."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from labserver.tasks.store import TaskStore
from mcpwire import HttpWire, StdioWire, frames, tasks
from mcpwire.oauth import OAuth, consent_as

ORDER = {"working": 0, "input_required": 0, "completed": 1, "failed": 1, "cancelled": 1}


def start(wire, arguments, name="score_night", meta=None):
    reply = wire.request("tools/call", {"name": name, "arguments": arguments}, meta=meta or tasks.declare())
    assert tasks.is_task(reply), reply.text
    return reply.result["taskId"]


def history(wire, task_id, limit_s=30.0):
    seen = []
    ends = time.monotonic() + limit_s
    while time.monotonic() < ends:
        task = tasks.get(wire, task_id).result
        seen.append(task)
        if task["status"] in tasks.TERMINAL:
            return seen
        time.sleep(0.05)
    raise AssertionError(f"{task_id} did not finish: {seen[-1]}")


def test_a_task_started_on_one_lab_is_polled_and_finished_on_two_others(tmp_path):
    with StdioWire.labserver("--tasks", "--notes", str(tmp_path)) as first, \
            StdioWire.labserver("--tasks", "--notes", str(tmp_path)) as second, \
            HttpWire.labserver("--tasks", "--notes", str(tmp_path)) as third:
        task_id = start(first, {"night": "P08", "epochs": 4, "pause_ms": 200})
        # The id is known to the other processes the moment the first one hands it out.
        assert tasks.get(second, task_id).result["taskId"] == task_id
        assert tasks.get(third, task_id).result["taskId"] == task_id
        from_second = history(second, task_id)
        from_third = history(third, task_id)
        assert from_second[-1] == {**from_third[-1], "_meta": from_second[-1]["_meta"]}
        assert from_third[-1]["result"]["content"][0]["text"] == "Night P08: 4 epochs scored. W 1, N1 2, N2 1."


def test_a_question_is_answered_through_another_lab(tmp_path):
    form = tasks.declare({"elicitation": {"form": {}}})
    with StdioWire.labserver("--tasks", "--notes", str(tmp_path)) as worker, \
            HttpWire.labserver("--tasks", "--notes", str(tmp_path)) as other:
        task_id = start(worker, {"night": "P07", "pause_ms": 5}, "review_night", form)
        last = tasks.follow(other, task_id, answer=lambda key, request: {"action": "accept", "content": {
            "stage": request["params"]["requestedSchema"]["properties"]["stage"]["enum"][1]}}, deadline_s=30,
            sleep=lambda s: time.sleep(0.05))
        assert "epoch 7 REM (your answer); epoch 14 W (your answer)" in last.result["result"]["content"][0]["text"]


def test_two_pollers_in_two_processes_tell_one_consistent_story(tmp_path):
    with StdioWire.labserver("--tasks", "--notes", str(tmp_path)) as one, \
            HttpWire.labserver("--tasks", "--notes", str(tmp_path)) as two:
        task_id = start(one, {"night": "P07", "epochs": 8, "pause_ms": 100})
        with ThreadPoolExecutor(2) as pool:
            stories = list(pool.map(lambda wire: history(wire, task_id), [one, two]))
        by_stamp = {}
        for story in stories:
            stamps = [task["lastUpdatedAt"] for task in story]
            assert stamps == sorted(stamps)  # time never runs backwards for a poller
            ranks = [ORDER[task["status"]] for task in story]
            assert ranks == sorted(ranks)  # and a finished task never works again
            for task in story:
                state = {key: value for key, value in task.items() if key != "_meta"}
                # One lastUpdatedAt is one state, whichever process read it.
                assert by_stamp.setdefault(task["lastUpdatedAt"], state) == state
        assert stories[0][-1]["lastUpdatedAt"] == stories[1][-1]["lastUpdatedAt"]


def test_a_thousand_tasks_in_the_store(tmp_path):
    store = TaskStore(tmp_path)
    made = [store.create(owner="", tool="score_night", status_message="Scoring started.", ttl_ms=600_000,
                         poll_ms=1000, worker="seed").task_id for _ in range(1000)]
    for task_id in made[::2]:
        store.update(task_id, "seed", status="completed", status_message="Finished.",
                     result={"content": [{"type": "text", "text": f"done {task_id}"}], "isError": False})
    assert store.count() == 1000 and len(set(made)) == 1000
    assert all(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", t) for t in made)
    with StdioWire.labserver("--tasks", "--notes", str(tmp_path)) as lab:
        for task_id in made[:10:2]:
            task = tasks.get(lab, task_id).result
            assert task["status"] == "completed" and task["result"]["content"][0]["text"] == f"done {task_id}"
        new = start(lab, {"night": "P07", "epochs": 1, "pause_ms": 0})
        assert history(lab, new)[-1]["status"] == "completed"
        assert TaskStore(tmp_path).count() == 1001


def test_the_store_lives_in_the_notes_folder_and_is_not_a_note(tmp_path):
    with StdioWire.labserver("--tasks", "--notes", str(tmp_path)) as lab:
        start(lab, {"night": "P07", "epochs": 1, "pause_ms": 0})
        uris = [resource["uri"] for resource in lab.request("resources/list").result["resources"]]
    assert (tmp_path / ".tasks.sqlite3").exists()
    assert not any("tasks" in uri for uri in uris)


@pytest.fixture(scope="module")
def auth_lab(tmp_path_factory):
    with HttpWire.labserver("--auth", "--tasks", "--notes", str(tmp_path_factory.mktemp("notes"))) as wire:
        yield wire


def user(lab, name):
    wire = HttpWire(lab.url)
    wire.auth = OAuth(client_id="notes-notebook", auth_method="none", user_agent=consent_as(name)).attach(wire)
    return wire


def test_under_auth_a_task_belongs_to_its_principal(auth_lab):
    ada, bob, ada_again = user(auth_lab, "ada"), user(auth_lab, "bob"), user(auth_lab, "ada")
    task_id = start(ada, {"night": "P07", "epochs": 1, "pause_ms": 0})
    assert history(ada_again, task_id)[-1]["status"] == "completed"  # a new token of the same principal
    stranger = tasks.get(bob, task_id)
    nobody = tasks.get(bob, "00000000-0000-4000-8000-000000000000")
    assert (stranger.status, stranger.error) == (nobody.status, nobody.error)
    assert stranger.error == {"code": -32602, "message": "Failed to retrieve task: Task not found"}
    assert tasks.cancel(bob, task_id).error == tasks.cancel(bob, "00000000-0000-4000-8000-000000000000").error


def test_under_auth_a_strangers_listen_accepts_none_of_the_ids(auth_lab):
    ada, bob = user(auth_lab, "ada"), user(auth_lab, "bob")
    task_id = start(ada, {"night": "P07", "epochs": 1, "pause_ms": 0})
    frame = frames.request("subscriptions/listen", {"notifications": {"taskIds": [task_id]}}, id=77,
                           meta=tasks.declare())
    ack = bob.send(frame, stream_for=1.0).notifications[0]
    assert ack["params"]["notifications"] == {"taskIds": []}


OPEN_AND_CREATE = """
import sys
import threading
from pathlib import Path
from labserver.tasks.store import TaskStore
store = TaskStore(Path(sys.argv[1]))
ids = []
def work(n):  # a lab's threads each open a connection of their own, while other labs write
    for _ in range(10):
        ids.append(store.create(owner="anyone", tool="score_night", status_message="starting", ttl_ms=60_000,
                                poll_ms=500, worker=f"{sys.argv[2]}-{n}").task_id)
threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("\\n".join(ids))
"""


def test_labs_opening_one_new_store_at_the_same_moment_all_start(tmp_path):
    # The first switch to WAL needs the file to itself; a lab that lost that race used to crash with
    # "database is locked" (two labs on one notes folder, as lesson 20 starts them).
    runs = [subprocess.Popen([sys.executable, "-c", OPEN_AND_CREATE, str(tmp_path), f"worker-{n}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(8)]
    outputs = [run.communicate(timeout=60) for run in runs]
    assert [run.returncode for run in runs] == [0] * 8, [err for _, err in outputs]
    store = TaskStore(tmp_path)
    ids = [task_id for out, _ in outputs for task_id in out.split()]
    assert len(set(ids)) == 8 * 4 * 10
    found = [store.get(task_id, "anyone") for task_id in ids]  # a task the store lost raises TaskNotFound
    # The labs that hold the leases have exited. On a loaded machine they take longer than a lease to finish,
    # so the first tasks read as failed, their worker lost; whether any do depends on the machine's speed.
    assert {row.status for row in found} <= {"working", "failed"}
    assert all(row.error == {"code": -32603, "message": "Task worker lost"} for row in found if row.status == "failed")

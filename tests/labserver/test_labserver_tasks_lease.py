"""kill -9 of the lab that runs a task: once its lease runs out, any other lab answers the task `failed`,
with an error and a statusMessage that say the worker was lost (the task never stays `working` for ever)."""

from __future__ import annotations

import os
import signal
import time

from labserver.tasks.store import LEASE_MS
from mcpwire import HttpWire, StdioWire, frames, tasks

LAB_STARTS_COLD = True  # the test kills the lab's own process, so it must be the process the wire started


def test_a_killed_worker_fails_its_task_once_the_lease_runs_out(tmp_path):
    with StdioWire.labserver("--tasks", "--notes", str(tmp_path)) as worker, \
            HttpWire.labserver("--tasks", "--notes", str(tmp_path)) as other:
        reply = worker.request("tools/call", {"name": "score_night", "arguments": {"night": "P07", "pause_ms": 500}},
                               meta=tasks.declare())
        task_id = reply.result["taskId"]
        while tasks.get(other, task_id).result.get("statusMessage") == "Scoring started.":
            time.sleep(0.1)
        os.kill(worker._process.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        # A listener hears it too: the watch reads the store, so the lapsed lease shows up as a notification.
        listen = frames.request("subscriptions/listen", {"notifications": {"taskIds": [task_id]}}, id="watch",
                                meta=tasks.declare())
        heard = other.send(listen, stream_for=LEASE_MS / 1000 + 3).notifications
        assert heard[-1]["method"] == "notifications/tasks" and heard[-1]["params"]["status"] == "failed", heard
        seen = []
        while time.monotonic() - killed_at < LEASE_MS / 1000 + 10:
            task = tasks.get(other, task_id).result
            seen.append(task["status"])
            if task["status"] != "working":
                break
            time.sleep(0.2)
        assert task["status"] == "failed", seen
        assert task["error"] == {"code": -32603, "message": "Task worker lost"}
        assert "worker running this task was lost" in task["statusMessage"]
        # Failed once, failed for everyone: a second lab reads the same verdict.
        with StdioWire.labserver("--tasks", "--notes", str(tmp_path)) as third:
            again = tasks.get(third, task_id).result
        assert {k: v for k, v in again.items() if k != "_meta"} == {k: v for k, v in task.items() if k != "_meta"}

"""Exercise 20's check rows share these: the extension's declaration, a raw task request, and a follow_task with
one mistake switched on (the right answer when none is)."""

import time

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


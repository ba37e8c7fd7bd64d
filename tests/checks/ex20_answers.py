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


def follower(*, pace=None, paces=None, after_update=None, respond=None, dedup=True, stop_at_input=False,
             name_header=True, meta=TASKS):
    """A follow_task with one mistake switched on: a fixed `pace`, `paces` written in by poll count, a fixed
    `after_update` wait, `respond(key, request)` sent instead of what answer() returned (which is still called),
    questions answered again, a stop at input_required, no Mcp-Name header, another envelope."""
    def follow_task(wire, task_id, answer):
        answered, polls = set(), 0
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}, name_header=name_header, meta=meta).result
            polls += 1
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            fresh = {}
            if task["status"] == "input_required":
                if stop_at_input:
                    return task
                fresh = {k: r for k, r in task["inputRequests"].items() if not dedup or k not in answered}
                if fresh:
                    answers = {k: answer(k, r) for k, r in fresh.items()}
                    if respond is not None:
                        answers = {k: respond(k, r) for k, r in fresh.items()}
                    task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": answers},
                                 name_header=name_header, meta=meta)
                    answered.update(fresh)
            if paces is not None:
                time.sleep(paces[min(polls, len(paces)) - 1])
            elif fresh and after_update is not None:
                time.sleep(after_update)
            else:
                time.sleep(task["pollIntervalMs"] / 1000 if pace is None else pace)
    return follow_task

"""Exercise 20's check rows share these: the extension's declaration, a raw task request, and a follow_task with
one mistake switched on (the right answer when none is)."""

import functools
import time

from checks.ex20_tasks import LEFT_OUT
from mcpwire import frames, tasks

# The pollIntervalMs the check's wires serve in these rows (a run draws its own, see checks.ex20_tasks.StandIn). On
# Task 1's stdio wire a result that asks a question asks for 800 ms; the quiet ones ask for 500 ms, then leave it out,
# then ask for 1200 ms, and the task ends at the fourth. Over HTTP: 500 ms, and 500, none, 400. Task 4's restarted
# client sees 1500 ms, then 150.
FOLLOW_PACES = {"stdio": {"asking": 800, "quiet": (500, LEFT_OUT, 1200, 500)},
                "http": {"asking": 500, "quiet": (500, LEFT_OUT, 400, 400)}}
# For the rows whose answer sleeps 2 s, refused at the first quiet result: FOLLOW_PACES's first paces, and no quiet
# ones after them that would keep the task working for more of those sleeps.
SHORT_TAIL_PACES = {transport: {"asking": paces["asking"], "quiet": paces["quiet"][:1]}
                    for transport, paces in FOLLOW_PACES.items()}
RESUME_PACES = (1500, 150, 150)
# Rows whose verdict does not hang on a pace: the same rules at a quicker pace. A result that asks a question asks for
# 200 ms, so a poll at once after tasks/update (a few ms) is one only _answered_between lets pass.
QUICK_PACES = {"stdio": {"asking": 200, "quiet": (100, LEFT_OUT, 150)},
               "http": {"asking": 200, "quiet": (150, LEFT_OUT, 100)}}
QUICK_RESUME_PACES = (150, 100, 150)
# Task 3 at a quicker pace: on stdio polls at 0, 0.2, 0.5 and 0.8 s, the right cancel at 0.8 (or 0.9, the deadline);
# over HTTP at 0, 0.3, 0.5 and 0.7, the cancel at 0.7 (or 0.75); a 2 s task. On a busy machine a late poll may bring
# the cancel one poll sooner, and still not "long before the deadline" (at 0.55 and 0.5 s).
QUICK_DEADLINES = {"stdio": (0.9, (200, 300)), "http": (0.75, (300, 200))}
QUICK_PAUSE_MS = 100
HUNG_GUARD_S = 4  # for answers that never return: the verdict is the same after 4 s as after the check's 40 (or 8)
TASKS = {frames.CLIENT_CAPABILITIES_KEY: {"extensions": {tasks.EXTENSION: {}}}}
ARGUMENTS = {"epochs": 4, "pause_ms": 300}


def lent(check, labs, **options):
    """`check` on the lab pair `labs` (a fresh one of its own when None), with other options of the check."""
    return functools.partial(check, labs=labs, **options)


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
        answered, polls, wait_ms = set(), 0, 1000
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
            wait_ms = task.get("pollIntervalMs", wait_ms)  # optional: without it, the last one
            if paces is not None:
                time.sleep(paces[min(polls, len(paces)) - 1])
            elif fresh and after_update is not None:
                time.sleep(after_update)
            else:
                time.sleep(wait_ms / 1000 if pace is None else pace)
    return follow_task


def deadline_right(wire, task_id, deadline_s):
    """Task 3's answer: cancel at the last poll before the deadline (when the next would come after it)."""
    ends_at = time.monotonic() + deadline_s
    while True:
        task = task_request(wire, "tasks/get", {"taskId": task_id}).result
        if task["status"] in ("completed", "failed", "cancelled"):
            return task["status"]
        if time.monotonic() + task["pollIntervalMs"] / 1000 > ends_at:
            task_request(wire, "tasks/cancel", {"taskId": task_id})
            return "cancelled"
        time.sleep(task["pollIntervalMs"] / 1000)

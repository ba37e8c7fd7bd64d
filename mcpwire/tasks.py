"""The `io.modelcontextprotocol/tasks` extension from the client's side: declare it, check task shapes, and
follow a task to its end.

A client declares the extension in each request's `_meta` (`declare()`), and only then may a `tools/call`
come back as a task (`resultType: "task"`). `follow()` is the loop a client writes around `tasks/get`:
wait `pollIntervalMs` between polls (it may change), answer each input request once (a key is never
answered twice, however many polls show it), stop at a terminal status, and cancel with `tasks/cancel`
when the deadline passes. Over HTTP every tasks/* request repeats its taskId in the `Mcp-Name` header.
`problems()` checks a task's shape against the extension's schema rules, written out here from the spec.
"""

import re
import time

from .errors import WireError
from .frames import CLIENT_CAPABILITIES_KEY

EXTENSION = "io.modelcontextprotocol/tasks"
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL = ("completed", "failed", "cancelled")
INPUT_METHODS = ("sampling/createMessage", "roots/list", "elicitation/create")
DEFAULT_POLL_MS = 1000  # when a task gives no pollIntervalMs: the spec names none, so a polite second
_ISO_8601 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def declare(capabilities=None):
    """`meta=` for a request that declares the tasks extension (beside any other client capabilities)."""
    declared = dict(capabilities or {})
    declared["extensions"] = {**declared.get("extensions", {}), EXTENSION: {}}
    return {CLIENT_CAPABILITIES_KEY: declared}


def is_task(reply):
    """Whether a tools/call reply is a task handle (CreateTaskResult) rather than the tool's result."""
    return isinstance(reply.result, dict) and reply.result.get("resultType") == "task"


def name_header(wire, task_id):
    """The headers a tasks/* request needs on this wire: Mcp-Name on HTTP, none on stdio."""
    return {"Mcp-Name": task_id} if wire.transport == "http" else {}


def get(wire, task_id, *, capabilities=None):
    """One tasks/get, declared, with Mcp-Name on HTTP."""
    return _task_request(wire, "tasks/get", {"taskId": task_id}, capabilities)


def update(wire, task_id, responses, *, capabilities=None):
    """tasks/update with {key: response}: the answers to a task's input requests."""
    return _task_request(wire, "tasks/update", {"taskId": task_id, "inputResponses": responses}, capabilities)


def cancel(wire, task_id, *, capabilities=None):
    """tasks/cancel (never notifications/cancelled: that one is for requests, not tasks)."""
    return _task_request(wire, "tasks/cancel", {"taskId": task_id}, capabilities)


def _task_request(wire, method, params, capabilities):
    headers = name_header(wire, params["taskId"])
    if headers:
        return wire.request(method, params, meta=declare(capabilities), headers=headers)
    return wire.request(method, params, meta=declare(capabilities))


# --- shapes ---------------------------------------------------------------------------------------

def problems(task, *, result_type=None):
    """What is wrong with a task as the extension shapes it; [] when nothing is.

    `result_type="task"` checks a CreateTaskResult, `"complete"` a tasks/get result (a DetailedTask),
    None the params of notifications/tasks (a DetailedTask without resultType).
    """
    if not isinstance(task, dict):
        return ["a task must be a JSON object"]
    found = []
    if result_type is None and "resultType" in task:
        found.append("notifications/tasks params carry no resultType")
    elif result_type is not None and task.get("resultType") != result_type:
        found.append(f"resultType must be {result_type!r}, not {task.get('resultType')!r}")
    if not isinstance(task.get("taskId"), str):
        found.append("taskId must be a string")
    if task.get("status") not in STATUSES:
        found.append(f"status must be one of {', '.join(STATUSES)}, not {task.get('status')!r}")
    if "statusMessage" in task and not isinstance(task["statusMessage"], str):
        found.append("statusMessage must be a string")
    for key in ("createdAt", "lastUpdatedAt"):
        if not (isinstance(task.get(key), str) and _ISO_8601.fullmatch(task[key])):
            found.append(f"{key} must be an ISO 8601 timestamp")
    if "ttlMs" not in task or not (task["ttlMs"] is None or _is_int(task["ttlMs"])):
        found.append("ttlMs must be an integer number of milliseconds, or null for unlimited")
    if "pollIntervalMs" in task and not _is_int(task["pollIntervalMs"]):
        found.append("pollIntervalMs must be an integer number of milliseconds")
    if result_type != "task":
        found += _variant_problems(task)
    return found


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _variant_problems(task):
    status = task.get("status")
    if status == "input_required":
        requests = task.get("inputRequests")
        if not isinstance(requests, dict):
            return ["an input_required task carries inputRequests, an object of requests by key"]
        return [f"inputRequests[{key!r}] must be {{method, params}} with method one of {', '.join(INPUT_METHODS)}"
                for key, request in requests.items()
                if not (isinstance(request, dict) and request.get("method") in INPUT_METHODS
                        and isinstance(request.get("params", {}), dict))]
    if status == "completed" and not isinstance(task.get("result"), dict):
        return ["a completed task carries result, the request's whole result (a CallToolResult for tools/call)"]
    if status == "failed":
        error = task.get("error")
        if not (isinstance(error, dict) and _is_int(error.get("code")) and isinstance(error.get("message"), str)):
            return ["a failed task carries error, a JSON-RPC error object {code, message}"]
    return []


# --- the loop -------------------------------------------------------------------------------------

class TaskTimeout(WireError):
    """The deadline passed before the task ended; it was cancelled with tasks/cancel (.polls so far)."""

    def __init__(self, message, task_id, polls):
        super().__init__(message)
        self.task_id = task_id
        self.polls = polls


def follow(wire, task_id, *, answer=None, deadline_s=60.0, capabilities=None, clock=time.monotonic,
           sleep=time.sleep):
    """Poll a task until it ends; returns the last tasks/get Reply (its result has the terminal status).

    `answer(key, request)` returns the response to one input request (an ElicitResult for an
    elicitation); each key is answered once. Past `deadline_s` the task is cancelled and TaskTimeout
    raised. A JSON-RPC error from tasks/get (-32602: unknown or expired) raises WireError.
    """
    polls = []
    answered = set()
    ends_at = clock() + deadline_s
    while True:
        reply = get(wire, task_id, capabilities=capabilities)
        polls.append(reply)
        if reply.error is not None:
            raise WireError(f"tasks/get for {task_id} failed: {reply.error.get('message')} ({reply.error.get('code')})")
        task = reply.result
        if task["status"] in TERMINAL:
            return reply
        if task["status"] == "input_required":
            fresh = {key: request for key, request in task.get("inputRequests", {}).items() if key not in answered}
            if fresh and answer is None:
                cancel(wire, task_id, capabilities=capabilities)
                raise WireError(f"task {task_id} asks {sorted(fresh)} and no answer function was given; cancelled it")
            if fresh:
                update(wire, task_id, {key: answer(key, request) for key, request in fresh.items()},
                       capabilities=capabilities)
                answered.update(fresh)
        wait_s = task.get("pollIntervalMs", DEFAULT_POLL_MS) / 1000
        if clock() + wait_s > ends_at:
            cancel(wire, task_id, capabilities=capabilities)
            raise TaskTimeout(f"task {task_id} was still {task['status']} at the deadline ({deadline_s:g} s); "
                              "cancelled it with tasks/cancel", task_id, polls)
        sleep(wait_s)

"""Run a job as a task: in a thread of its own, leased in the store, cancellable, able to ask the user.

The thread writes everything a client may see into the task store, never into this process's memory,
so any lab process on the same notes folder answers tasks/get for it. While it works it renews its
lease; if the process dies, the lease runs out and the next reader fails the task (labserver.tasks.store).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from labserver.tasks.jobs import TaskFailure
from labserver.tasks.store import INTERNAL_ERROR, TaskStore

logger = logging.getLogger(__name__)
SLICE_S = 0.1  # how often a paused or waiting worker looks for a cancel or an answer
RENEW_EVERY_S = 1.0


class Cancelled(Exception):
    """The client asked to cancel; the job stops at its next pause."""


class Lost(Exception):
    """The task is no longer this worker's (another process failed it as lost): stop quietly."""


class TaskProgress:
    """A job's Progress, backed by the task's row."""

    def __init__(self, store: TaskStore, task_id: str, worker: str) -> None:
        self.store, self.task_id, self.worker = store, task_id, worker
        self.renewed = time.monotonic()
        self.asking = False  # a question is shown until the job moves on with a new status line

    def status(self, message: str) -> None:
        if self.asking:
            self._write(status="working", input_requests=None, status_message=message)
            self.asking = False
        else:
            self._write(status_message=message)

    def pause(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while True:
            self._check_cancel()
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(SLICE_S, left))
            self._renew_if_due()

    def ask(self, key: str, request: dict[str, Any], message: str) -> dict[str, Any]:
        return self.ask_many({key: request}, message)[key]

    def ask_many(self, requests: dict[str, dict[str, Any]], message: str) -> dict[str, Any]:
        """Ask every request at once; wait until each has its answer (tasks/update may bring them one at a time)."""
        if not self.store.ask(self.task_id, self.worker, requests, message):
            raise Lost(self.task_id)
        self.asking = True
        while True:
            row = self.store.worker_view(self.task_id)
            if row.lease_owner != self.worker:
                raise Lost(self.task_id)
            if row.cancel_requested:
                raise Cancelled(self.task_id)
            if all(key in row.input_responses for key in requests):
                return {key: row.input_responses[key] for key in requests}
            time.sleep(SLICE_S)
            self._renew_if_due()

    def _check_cancel(self) -> None:
        if self.store.worker_view(self.task_id).cancel_requested:
            raise Cancelled(self.task_id)

    def _renew_if_due(self) -> None:
        if time.monotonic() - self.renewed >= RENEW_EVERY_S:
            self._write()

    def _write(self, **changes: Any) -> None:
        if not self.store.update(self.task_id, self.worker, **changes):
            raise Lost(self.task_id)
        self.renewed = time.monotonic()


def tool_error_result(error: ToolError) -> dict[str, Any]:
    dumped = CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True).model_dump(
        by_alias=True, mode="json", exclude_none=True)
    dumped.pop("resultType", None)
    return dumped


def run(store: TaskStore, task_id: str, worker: str, job: Callable[..., dict[str, Any]], arguments: dict[str, Any],
        ) -> None:
    """The worker thread's body: run the job and write how it ended."""
    progress = TaskProgress(store, task_id, worker)
    try:
        try:
            result = job(arguments, progress)
        except ToolError as error:
            # A tool error is a result the model reads (isError: true), so the task completed.
            store.update(task_id, worker, status="completed", status_message="Finished with a tool error.",
                         result=tool_error_result(error))
            return
        store.update(task_id, worker, status="completed", status_message="Finished.", result=result)
    except Cancelled:
        store.update(task_id, worker, status="cancelled", status_message="Cancelled at the client's request.")
    except TaskFailure as failure:
        store.update(task_id, worker, status="failed", status_message=failure.message,
                     error={"code": failure.code, "message": failure.message})
    except Lost:
        return
    except Exception:  # noqa: BLE001 - any other crash is the task's JSON-RPC internal error, logged here
        logger.exception("task %s crashed", task_id)
        store.update(task_id, worker, status="failed", status_message="The task crashed inside the lab server.",
                     error={"code": INTERNAL_ERROR, "message": "Internal error"})


def start(store: TaskStore, task_id: str, worker: str, job: Callable[..., dict[str, Any]],
          arguments: dict[str, Any]) -> threading.Thread:
    # A daemon: a lab that exits leaves its tasks to the lease, as a killed one would.
    thread = threading.Thread(target=run, args=(store, task_id, worker, job, arguments), name=f"task-{task_id[:8]}",
                              daemon=True)
    thread.start()
    return thread

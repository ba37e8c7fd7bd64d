"""`io.modelcontextprotocol/tasks` on SDK 2.3.0's extension hooks: tasks/get, tasks/update, tasks/cancel and
a `tools/call` interceptor that answers a call with a task.

The SDK ships the hooks (`Extension.methods`, `Extension.intercept_tool_call`, `require_client_extension`)
but no Tasks implementation, so this module is the implementation. A tool with a first round (sign_off_night)
asks its MRTR questions here, before the task exists, as the extension says a server SHOULD. Three of its rules the SDK cannot
enforce for it: a call becomes a task only when that request declared the extension; over HTTP a
tasks/* request carries `Mcp-Name: <taskId>` (the SDK checks Mcp-Name only for tools/call, prompts/get
and resources/read); and a task belongs to the principal whose token created it.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import principal_components
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver.server import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolRequestParams,
    InputRequiredResult,
    RequestParams,
)
from pydantic import Field, ValidationError

from labserver.rounds import declared, gather
from labserver.tasks import worker
from labserver.tasks.jobs import JOBS
from labserver.tasks.store import TaskExpired, TaskNotFound, TaskRow, TaskStore
from labserver.tasks.tools import TASK_TOOLS

EXTENSION_ID = "io.modelcontextprotocol/tasks"
MODERN = frozenset({"2026-07-28"})
DEFAULT_TTL_MS = 600_000


class TaskIdParams(RequestParams):
    task_id: str = Field(alias="taskId")


class UpdateParams(TaskIdParams):
    input_responses: dict[str, dict[str, Any]] = Field(alias="inputResponses")


def declares_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether *this* request's _meta declared the extension (never an earlier one's: each request stands alone)."""
    capabilities = ctx.session.client_capabilities
    return ctx.protocol_version in MODERN and capabilities is not None and EXTENSION_ID in (capabilities.extensions or {})


def principal_of(ctx: ServerRequestContext[Any, Any]) -> str:
    """Who the bearer token says is asking ('' without --auth): a task belongs to whoever created it."""
    user = ctx.request.scope.get("user") if ctx.request is not None else None
    token = getattr(user, "access_token", None) or get_access_token()
    return "" if token is None else json.dumps(principal_components(token))


def check_mcp_name(ctx: ServerRequestContext[Any, Any], task_id: str) -> None:
    """Over HTTP, tasks/* must repeat params.taskId in Mcp-Name, as tools/call repeats the tool name."""
    if ctx.request is None:
        return  # stdio: no headers
    if decode_header_value(ctx.request.headers.get(MCP_NAME_HEADER)) != task_id:
        raise MCPError(code=HEADER_MISMATCH,
                       message=f"{MCP_NAME_HEADER} header does not match the request body's 'taskId' parameter")


def require_form_elicitation(ctx: ServerRequestContext[Any, Any]) -> None:
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.model_dump(by_alias=True, exclude_none=True).get("elicitation") if capabilities else None
    if isinstance(elicitation, dict) and ("form" in elicitation or not elicitation):
        return
    raise MCPError(code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                   message="Client did not declare the form elicitation capability this task asks through",
                   data={"requiredCapabilities": {"elicitation": {"form": {}}}})


class TasksExtension(Extension):
    identifier = EXTENSION_ID

    def __init__(self, store: TaskStore, ttl_ms: int | None = DEFAULT_TTL_MS) -> None:
        self.store = store
        self.ttl_ms = ttl_ms
        # Made per lab process (after the warm starter forks), so two labs never share a worker id.
        self.worker_id = f"{os.getpid()}-{uuid.uuid4()}"

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskIdParams, self.get, protocol_versions=MODERN),
            MethodBinding("tasks/update", UpdateParams, self.update, protocol_versions=MODERN),
            MethodBinding("tasks/cancel", TaskIdParams, self.cancel, protocol_versions=MODERN),
        )

    async def intercept_tool_call(self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any],
                                  call_next: CallNext) -> HandlerResult:
        spec = TASK_TOOLS.get(params.name)
        if spec is None or not declares_tasks(ctx):
            return await call_next(ctx)  # answered synchronously (review_night refuses: it runs only as a task)
        try:
            arguments = spec.arguments.model_validate(params.arguments or {}).model_dump()
        except ValidationError:
            return await call_next(ctx)  # the SDK words the argument error as it does for every tool
        if spec.asks_user:
            require_form_elicitation(ctx)
        if spec.first_round is not None:
            # The extension: finish MRTR rounds before the task exists; the round's requestState (sealed by the
            # SDK) never reaches the task, which gets the answers as its job's arguments.
            answers = gather(spec.first_round.plan(arguments), params.input_responses, params.request_state,
                             declared(ctx.session.client_capabilities))
            if isinstance(answers, InputRequiredResult):
                return answers
            arguments |= spec.first_round.into_arguments(answers)
        row = self.store.create(owner=principal_of(ctx), tool=params.name, status_message=spec.first_status,
                                ttl_ms=self.ttl_ms, poll_ms=spec.poll_ms, worker=self.worker_id)
        # The row is committed: a tasks/get for this id resolves from any process before the client sees the id.
        worker.start(self.store, row.task_id, self.worker_id, JOBS[params.name], arguments)
        return {"resultType": "task", **row.task()}

    def _row(self, verb: str, find: Any) -> TaskRow:
        try:
            return find()
        except TaskNotFound:
            raise MCPError(code=INVALID_PARAMS, message=f"Failed to {verb} task: Task not found") from None
        except TaskExpired:
            raise MCPError(code=INVALID_PARAMS, message=f"Failed to {verb} task: Task has expired") from None

    def _enter(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> str:
        check_mcp_name(ctx, params.task_id)
        require_client_extension(ctx, EXTENSION_ID)
        return principal_of(ctx)

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        owner = self._enter(ctx, params)
        row = self._row("retrieve", lambda: self.store.get(params.task_id, owner))
        return {"resultType": "complete", **row.detailed()}

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> dict[str, Any]:
        owner = self._enter(ctx, params)
        self._row("update", lambda: self.store.answer(params.task_id, owner, params.input_responses))
        return {"resultType": "complete"}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        owner = self._enter(ctx, params)
        self._row("cancel", lambda: self.store.request_cancel(params.task_id, owner))
        return {"resultType": "complete"}

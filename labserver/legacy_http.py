"""The lab as a legacy-only Streamable HTTP server: the 2025-11-25 handshake era and nothing newer.

A dual-era client needs an old server to fall back against (lesson 12). SDK 2.3.0 has no
switch for that: its session manager sends a POST to the 2026-07-28 path whenever the
`MCP-Protocol-Version` header names a version the handshake era does not know. Here every
POST, GET and DELETE takes the SDK's 2025-11-25 path instead, so a 2026-07-28 request meets
what a legacy server answers: no session yet, `400 Bad Request: Missing session ID`.

Without sessions (`--stateless`) it is an older kind of legacy server: it keeps no sessions and
never reads the `MCP-Protocol-Version` header (a header that only 2025-06-18 introduced), so a
2026-07-28 request is served as a legacy one: `server/discover` gets `-32601` with
status 200, and an era-ambiguous method such as `ping` gets a result without `resultType`.
"""

from __future__ import annotations

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http import MCP_PROTOCOL_VERSION_HEADER, MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager, _error_response
from mcp.server.transport_security import RequestBodyLimitMiddleware
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import Receive, Scope, Send

from labserver.http import HOST, MAX_REQUEST_BODY_BYTES, bind_local, stop_when_stdin_closes


def header(scope: Scope, name: str) -> str | None:
    wanted = name.lower().encode("ascii")
    return next((value.decode("latin-1") for key, value in scope["headers"] if key == wanted), None)


def serve_legacy_only(manager: StreamableHTTPSessionManager, *, sessions: bool = True) -> None:
    """Make the manager answer every request the 2025-11-25 way, with sessions or without."""

    async def handle(scope: Scope, receive: Receive, send: Send) -> None:
        if not sessions:
            await manager._handle_stateless_request(None, scope, receive, send)
            return
        version = header(scope, MCP_PROTOCOL_VERSION_HEADER)
        session = header(scope, MCP_SESSION_ID_HEADER)
        # 2025-11-25: a request in a session that names a version the server does not
        # support gets 400. Without a (known) session the SDK's own answer comes first.
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS and session in manager._server_instances:
            await _error_response(f"Bad Request: Unsupported protocol version: {version}", 400)(scope, receive, send)
            return
        await manager._handle_stateful_request(scope, receive, send)

    manager.asgi_app = RequestBodyLimitMiddleware(handle, MAX_REQUEST_BODY_BYTES)


def serve_legacy_http(mcp: MCPServer, port: int = 0, *, sessions: bool = True, until_stdin_closes: bool = False) -> None:
    """Like labserver.http.serve_http, but a server that has never heard of 2026-07-28."""
    app = mcp.streamable_http_app(
        json_response=False,
        stateless_http=False,
        max_request_body_size=MAX_REQUEST_BODY_BYTES,
        host=HOST,
    )
    serve_legacy_only(mcp.session_manager, sessions=sessions)
    try:
        sock = bind_local(port)
    except OSError as error:
        raise SystemExit(f"notes-lab: cannot listen on {HOST}:{port}: {error.strerror}") from None
    print(f"http://{HOST}:{sock.getsockname()[1]}/mcp", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    if until_stdin_closes:
        stop_when_stdin_closes(server)
    server.run(sockets=[sock])

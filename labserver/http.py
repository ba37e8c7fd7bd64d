"""Serve the lab over Streamable HTTP on 127.0.0.1, endpoint /mcp."""

from __future__ import annotations

import os
import socket
import threading

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

from labserver.auth import build_auth_lab
from labserver.listen_endings import ENDING_GRACE_S, GracefulListens, graceful_listens

MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024
HOST = "127.0.0.1"


def bind_local(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1; port 0 lets the system pick a free one."""
    # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on sockets that say so,
    # and without it every small reply waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    return sock


def serve_http(
    mcp: MCPServer, port: int = 0, *, until_stdin_closes: bool = False, token_lifetime: int | None = None
) -> None:
    """Bind, print the URL as the first stdout line, then serve until interrupted.

    With `token_lifetime` (seconds an access token lives) the endpoint is an OAuth 2.1 protected
    resource and a local authorization server listens on a second free port (see labserver.auth).
    """
    # Both eras on one endpoint: 2026-07-28 requests are served statelessly by the SDK,
    # legacy 2025-11-25 clients get sessions. The SDK's default DNS-rebinding protection
    # for 127.0.0.1 stays on (bad Origin -> 403, bad Host -> 421).
    app = mcp.streamable_http_app(
        json_response=False,
        stateless_http=False,
        max_request_body_size=MAX_REQUEST_BODY_BYTES,
        host=HOST,
    )
    try:
        sock = bind_local(port)
        sockets = [sock] if token_lifetime is None else [sock, bind_local(0)]
    except OSError as error:
        raise SystemExit(f"notes-lab: cannot listen on {HOST}:{port}: {error.strerror}") from None
    print(f"http://{HOST}:{sock.getsockname()[1]}/mcp", flush=True)
    if token_lifetime is not None:
        # The authorization server's issuer URL is the second line, printed the same way.
        lab = build_auth_lab(app, HOST, sock.getsockname()[1], sockets[1].getsockname()[1], token_lifetime)
        app = lab.app
        print(lab.issuer, flush=True)
    server = LabHttpServer(uvicorn.Config(app, log_level="warning", access_log=False), graceful_listens(mcp))
    if until_stdin_closes:
        stop_when_stdin_closes(server)
    server.run(sockets=sockets)


class LabHttpServer(uvicorn.Server):
    """uvicorn's server, which first ends the lab's open listens when it stops (however it is told to stop).

    uvicorn waits for open connections before it exits, and a listen's SSE stream stays open until one side
    ends it; ending the listens the spec's way (labserver.listen_endings) is what lets those streams finish.
    """

    def __init__(self, config: uvicorn.Config, listens: GracefulListens | None) -> None:
        super().__init__(config)
        self.listens = listens

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.listens is not None:
            with anyio.move_on_after(ENDING_GRACE_S):
                await self.listens.end_all()
        await super().shutdown(sockets)


def stop_when_stdin_closes(server: uvicorn.Server) -> None:
    """Stop serving once stdin ends: the parent that holds its other end (a notebook kernel) is gone.

    Without this, a restarted kernel would leave its HTTP lab server running for ever.
    """

    def watch() -> None:
        while os.read(0, 4096):
            pass
        server.should_exit = True

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()

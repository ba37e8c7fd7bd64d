"""The MCP endpoint as a protected resource: no valid token, 401; too few scopes, 403.

Whether a token is good is the SDK's decision (`BearerAuthBackend`: known, not expired, issued
for this resource). The lab adds what the SDK's `RequireAuthMiddleware` leaves out: the
`scope` a request needs in the `WWW-Authenticate` challenge, and a per-tool scope check.
"""

from __future__ import annotations

import json
import time

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.auth.provider import ProviderTokenVerifier
from pydantic import AnyHttpUrl
from starlette.authentication import AuthCredentials
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from labserver.auth.provider import LabProvider
from labserver.auth.scopes import required_scope

MAX_SCOPE_PEEK_BYTES = 4 * 1024 * 1024


def bearer_token(scope: Scope) -> str | None:
    """The token of an `Authorization: Bearer …` header, or None (a token in the query string does not count)."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            text = value.decode("latin-1")
            if text.lower().startswith("bearer "):
                return text[7:]
    return None


def challenge(resource_metadata: str, scope: str, error: str | None = None, description: str | None = None) -> str:
    parts = [] if error is None else [f'error="{error}"']
    parts += [f'resource_metadata="{resource_metadata}"', f'scope="{scope}"']
    if description is not None:
        parts.append(f'error_description="{description}"')
    return "Bearer " + ", ".join(parts)


async def peek_body(receive: Receive) -> tuple[bytes, Receive]:
    """Read the request body (up to a limit) and give back a receive that replays it."""
    chunks, size, more = [], 0, True
    while more and size <= MAX_SCOPE_PEEK_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), receive
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = message.get("more_body", False)
    body = b"".join(chunks)
    replayed = False

    async def replay() -> dict:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return body, replay


class ResourceGate:
    def __init__(self, app: ASGIApp, provider: LabProvider, resource_url: str, resource_metadata_url: str):
        self.app = AuthContextMiddleware(app)
        self.provider = provider
        self.resource_metadata_url = resource_metadata_url
        self.backend = BearerAuthBackend(ProviderTokenVerifier(provider), resource_server_url=AnyHttpUrl(resource_url))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = b""
        if scope["method"] == "POST":
            body, receive = await peek_body(receive)
        needed = required_scope(body)
        token = bearer_token(scope)
        if token is None:
            await self.refuse(send, 401, challenge(self.resource_metadata_url, needed), None)
            return
        verified = await self.backend.authenticate(HTTPConnection(scope))
        if verified is None:
            reason = self.why_refused(token)
            await self.refuse(send, 401, challenge(self.resource_metadata_url, needed, "invalid_token", reason),
                              {"error": "invalid_token", "error_description": reason})
            return
        credentials, user = verified
        if needed not in credentials.scopes:
            reason = f"this request needs the {needed} scope; the token has: {' '.join(credentials.scopes) or 'none'}"
            await self.refuse(send, 403, challenge(self.resource_metadata_url, needed, "insufficient_scope", reason),
                              {"error": "insufficient_scope", "error_description": reason})
            return
        scope = {**scope, "user": user, "auth": AuthCredentials(credentials.scopes)}
        await self.app(scope, receive, send)

    def why_refused(self, token: str) -> str:
        """A learner-readable reason; the SDK only says yes or no."""
        known = self.provider.access_tokens.get(token)
        if known is None:
            return "unknown or revoked token"
        if known.expires_at is not None and known.expires_at < int(time.time()):
            return "the token has expired"
        return f"the token was issued for {known.resource or 'no resource'}, not for this server"

    @staticmethod
    async def refuse(send: Send, status: int, www_authenticate: str, body: dict | None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        headers = [(b"www-authenticate", www_authenticate.encode()), (b"content-length", str(len(data)).encode()),
                   (b"cache-control", b"no-store")]
        if body is not None:
            headers.append((b"content-type", b"application/json"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data})

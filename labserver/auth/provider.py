"""The lab's authorization server state: clients, pending consents, codes and tokens, all in memory.

It implements the SDK's `OAuthAuthorizationServerProvider`, so the SDK's own handlers
(`mcp.server.auth.routes`) do the request parsing, PKCE check, client authentication and
error replies; this class only decides what to store and what to hand out.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

import httpx
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from labserver.auth.scopes import READ, SCOPES

# The client every lesson can use without registering: a public client (no secret, PKCE only),
# as a notebook or a desktop app is. Its redirect URI is never listened on: the lesson reads
# the redirect from the Location header instead of following it.
NOTEBOOK_CLIENT = OAuthClientInformationFull(
    client_id="notes-notebook",
    client_name="Notes lab notebook",
    redirect_uris=["http://127.0.0.1/callback"],
    token_endpoint_auth_method="none",
    grant_types=["authorization_code", "refresh_token"],
    scope=" ".join(SCOPES),
)

CODE_LIFETIME_S = 60
REFRESH_LIFETIME_S = 24 * 3600


def is_loopback(host: str | None) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host or "").is_loopback
    except ValueError:
        return False


def max_age(cache_control: str | None) -> int:
    """Seconds a response may be reused, from its Cache-Control header; 0 (fetch again) without one."""
    if not cache_control or re.search(r"(?i)\bno-(store|cache)\b", cache_control):
        return 0
    found = re.search(r"(?i)\bmax-age=(\d+)", cache_control)
    return int(found.group(1)) if found else 0


@dataclass
class Pending:
    """An authorization request waiting for the user's answer on the consent page."""

    client: OAuthClientInformationFull
    params: AuthorizationParams


@dataclass
class LabProvider:
    issuer: str
    resources: frozenset[str]
    access_lifetime_s: int = 600
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    pending: dict[str, Pending] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access_tokens: dict[str, AccessToken] = field(default_factory=dict)
    refresh_tokens: dict[str, RefreshToken] = field(default_factory=dict)
    # Every token belongs to the grant (the user's one consent) it came from; a rotated refresh token is
    # remembered with its grant, so its reuse can revoke the whole grant (OAuth 2.1 section 4.3.1).
    grants: dict[str, str] = field(default_factory=dict)
    rotated: dict[str, str] = field(default_factory=dict)
    documents: dict[str, tuple[OAuthClientInformationFull, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.clients.setdefault(NOTEBOOK_CLIENT.client_id, NOTEBOOK_CLIENT)

    # --- clients: pre-registered, dynamically registered, or a metadata document URL --------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if client_id in self.clients:
            return self.clients[client_id]
        if client_id.startswith(("http://", "https://")):
            cached = self.documents.get(client_id)
            if cached is not None and cached[1] > time.time():
                return cached[0]
            return await self.client_from_document(client_id)
        return None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    async def client_from_document(self, url: str) -> OAuthClientInformationFull | None:
        """A Client ID Metadata Document client: fetch the JSON its client_id names and check it.

        The spec wants an https URL with a path; the lab, which must stay offline, fetches only
        loopback URLs and so also accepts plain http there. A document is kept as long as its
        Cache-Control max-age allows (without one, it is fetched again each time), never across restarts.
        """
        parts = urlsplit(url)
        if not parts.path.strip("/") or not is_loopback(parts.hostname):
            return None
        try:
            async with httpx.AsyncClient(timeout=5.0, follow_redirects=False) as http:
                response = await http.get(url)
            document = response.json()
        except (httpx.HTTPError, ValueError):
            return None
        if response.status_code != 200 or not isinstance(document, dict) or document.get("client_id") != url:
            return None
        if not document.get("client_name") or not document.get("redirect_uris"):
            return None
        if document.get("token_endpoint_auth_method", "none") != "none":
            return None  # the lab holds no keys to check private_key_jwt, and a document cannot carry a secret
        try:
            # Public, whether the document says so or leaves it out (RFC 7591's default would ask for a secret).
            client = OAuthClientInformationFull.model_validate(
                {**document, "token_endpoint_auth_method": "none", "scope": " ".join(SCOPES)})
        except ValidationError:
            return None
        self.documents[url] = (client, time.time() + max_age(response.headers.get("cache-control")))
        return client

    # --- authorization: the SDK's /authorize hands us a validated request ------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource is not None and params.resource.rstrip("/") not in self.resources:
            raise AuthorizeError("invalid_target", f"this authorization server issues no tokens for {params.resource}")
        request_id = secrets.token_urlsafe(16)
        self.pending[request_id] = Pending(client, params)
        return f"{self.issuer}/consent?{urlencode({'request': request_id})}"

    def decide(self, request_id: str, user: str, approve: bool) -> str | None:
        """The user's answer: the redirect back to the client (code or access_denied), with state and iss."""
        pending = self.pending.pop(request_id, None)
        if pending is None:
            return None
        params = pending.params
        if not approve:
            return construct_redirect_uri(str(params.redirect_uri), error="access_denied",
                                          error_description="the user denied the request",
                                          state=params.state, iss=self.issuer)
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [READ],
            expires_at=time.time() + CODE_LIFETIME_S,
            client_id=pending.client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=user,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=self.issuer)

    def pending_request(self, request_id: str) -> Pending | None:
        return self.pending.get(request_id)

    # --- tokens ----------------------------------------------------------------------------

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, code: AuthorizationCode) -> OAuthToken:
        del self.codes[code.code]  # a code works once
        return self.mint(client.client_id, code.scopes, code.resource, code.subject, secrets.token_urlsafe(16))

    async def load_refresh_token(self, client: OAuthClientInformationFull, token: str) -> RefreshToken | None:
        if token in self.rotated:
            # A refresh token already traded in is back: either the client or a thief holds a copy.
            # Which one cannot be told, so every token of that grant stops working.
            self.revoke_grant(self.rotated[token])
        return self.refresh_tokens.get(token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        # Rotation: the old refresh token stops working the moment the new pair is issued.
        self.refresh_tokens.pop(refresh.token, None)
        grant = self.grants.pop(refresh.token, secrets.token_urlsafe(16))
        self.rotated[refresh.token] = grant
        return self.mint(client.client_id, scopes, refresh.resource, refresh.subject, grant)

    def revoke_grant(self, grant: str) -> None:
        for token in [token for token, owner in self.grants.items() if owner == grant]:
            self.access_tokens.pop(token, None)
            self.refresh_tokens.pop(token, None)
            del self.grants[token]

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access_tokens.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access_tokens.pop(token.token, None)
        self.refresh_tokens.pop(token.token, None)

    def mint(self, client_id: str, scopes: list[str], resource: str | None, subject: str | None,
             grant: str) -> OAuthToken:
        now = int(time.time())
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        self.access_tokens[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=now + self.access_lifetime_s,
            resource=resource, subject=subject, claims={"iss": self.issuer},
        )
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, expires_at=now + REFRESH_LIFETIME_S,
            resource=resource, subject=subject,
        )
        self.grants[access] = self.grants[refresh] = grant
        return OAuthToken(access_token=access, expires_in=self.access_lifetime_s, scope=" ".join(scopes),
                          refresh_token=refresh)

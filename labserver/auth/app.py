"""Two origins on loopback, one process: the MCP endpoint (resource server) and its authorization server.

One uvicorn serves both sockets; each request goes to the side whose port it arrived on, so
the two share the provider's memory and nothing is written to disk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.routes import (
    build_metadata,
    build_resource_metadata_url,
    cors_middleware,
    create_auth_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from labserver.auth.consent import consent_endpoint
from labserver.auth.provider import NOTEBOOK_CLIENT, LabProvider
from labserver.auth.resource_gate import ResourceGate, bearer_token, challenge
from labserver.auth.scopes import SCOPES

AS_METADATA_PATH = "/.well-known/oauth-authorization-server"


@dataclass
class AuthLab:
    app: ASGIApp
    provider: LabProvider
    mcp_url: str
    issuer: str


def authorization_server_metadata(issuer: str) -> OAuthMetadata:
    """The SDK's metadata plus what this server also does: public clients, metadata documents, `iss`."""
    sdk = build_metadata(AnyHttpUrl(issuer), None,
                         ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES),
                         RevocationOptions(enabled=True))
    document = sdk.model_dump(mode="json", exclude_none=True)
    document.update(
        issuer=issuer,  # as a string: pydantic would otherwise add a trailing slash, and issuers compare exactly
        token_endpoint_auth_methods_supported=["none", "client_secret_post", "client_secret_basic"],
        client_id_metadata_document_supported=True,
        authorization_response_iss_parameter_supported=True,
    )
    return OAuthMetadata.model_validate(document)


def archive_endpoint(provider: LabProvider, archive_url: str):
    """A second API the same authorization server protects: it takes only tokens issued for it.

    It is where a passed-through MCP token would land, and it refuses it: the audience is wrong.
    """

    async def archive(request: Request) -> Response:
        token = bearer_token(request.scope)
        known = provider.access_tokens.get(token or "")
        metadata = f"{archive_url.rsplit('/', 1)[0]}/.well-known/oauth-protected-resource/archive"
        if known is None or (known.expires_at or 0) < int(time.time()) or known.resource != archive_url:
            reason = "this API takes only tokens issued for " + archive_url
            return JSONResponse({"error": "invalid_token", "error_description": reason}, status_code=401,
                                headers={"WWW-Authenticate": challenge(metadata, SCOPES[0], "invalid_token", reason)})
        return JSONResponse({"archived_notes": 0})

    return archive


def authorization_server_app(provider: LabProvider, archive_url: str) -> Starlette:
    metadata = authorization_server_metadata(provider.issuer)
    sdk_routes = create_auth_routes(
        provider,
        AnyHttpUrl(provider.issuer),
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES),
        revocation_options=RevocationOptions(enabled=True),
    )
    routes = [
        Route(AS_METADATA_PATH, cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
              methods=["GET", "OPTIONS"]),
        *(route for route in sdk_routes if route.path != AS_METADATA_PATH),
        Route("/consent", consent_endpoint(provider), methods=["GET"]),
        Route("/archive", archive_endpoint(provider, archive_url), methods=["GET"]),
        *resource_metadata_app(archive_url, provider.issuer, "Notes lab archive").routes,
        Route("/clients/notes-notebook.json", client_document(provider.issuer), methods=["GET"]),
    ]
    return Starlette(routes=routes)


def client_document(issuer: str):
    """A Client ID Metadata Document the lesson can use as a client_id (a URL instead of a registered id).

    A real client hosts its own; the lab serves one here so the lesson needs no second web server.
    """
    url = f"{issuer}/clients/notes-notebook.json"

    async def document(request: Request) -> Response:
        return JSONResponse({
            "client_id": url,
            "client_name": "Notes lab notebook (metadata document)",
            "redirect_uris": [str(uri) for uri in NOTEBOOK_CLIENT.redirect_uris or []],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }, headers={"Cache-Control": "max-age=60"})

    return document


def resource_metadata_app(resource: str, issuer: str, name: str = "Notes lab") -> Starlette:
    """RFC 9728 metadata for `resource`, at its path-based well-known URL."""
    metadata = ProtectedResourceMetadata.model_validate({
        "resource": resource,
        "authorization_servers": [issuer],
        "scopes_supported": SCOPES,
        "bearer_methods_supported": ["header"],
        "resource_name": name,
    })
    path = str(build_resource_metadata_url(AnyHttpUrl(resource))).split("://", 1)[1].split("/", 1)[1]
    handler = ProtectedResourceMetadataHandler(metadata)
    return Starlette(routes=[Route("/" + path, cors_middleware(handler.handle, ["GET", "OPTIONS"]),
                                   methods=["GET", "OPTIONS"])])


def build_auth_lab(mcp_app: ASGIApp, host: str, mcp_port: int, as_port: int, access_lifetime_s: int) -> AuthLab:
    mcp_url = f"http://{host}:{mcp_port}/mcp"
    issuer = f"http://{host}:{as_port}"
    archive_url = f"{issuer}/archive"
    provider = LabProvider(issuer=issuer, resources=frozenset({mcp_url, archive_url}),
                           access_lifetime_s=access_lifetime_s)
    authorization_server = authorization_server_app(provider, archive_url)
    metadata = resource_metadata_app(mcp_url, issuer)
    gate = ResourceGate(mcp_app, provider, mcp_url, str(build_resource_metadata_url(AnyHttpUrl(mcp_url))))

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await mcp_app(scope, receive, send)  # the MCP side's session manager needs its lifespan
        elif scope["server"][1] == as_port:
            await authorization_server(scope, receive, send)
        elif scope["path"].startswith("/.well-known/"):
            await metadata(scope, receive, send)
        else:
            await gate(scope, receive, send)

    return AuthLab(dispatch, provider, mcp_url, issuer)

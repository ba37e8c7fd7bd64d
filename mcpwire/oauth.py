"""OAuth 2.1 for a protected MCP server, the way lesson 18 does it by hand, in one small helper.

`OAuth` answers a `401`/`403` challenge: it reads `WWW-Authenticate`, fetches the protected
resource metadata (RFC 9728) and the authorization server metadata (RFC 8414, then OpenID
discovery), checks the issuer and that the server lists PKCE with S256, picks a client registration
(pre-registered, a Client ID Metadata Document, or dynamic registration), runs the authorization
code flow with PKCE S256, `resource` (RFC 8707), `state` and the `iss` check (RFC 9207), and keeps
the tokens.
`HttpWire(url, auth=OAuth(...))` uses it on every request and records its exchanges in the
wire's transcript; `auth.attach(wire)` and `auth.send(wire, frame)` do the same for a wire made without it.

Nothing here opens a browser. The "user agent" is a function that gets the authorization URL
and returns the redirect back to the client: `follow_redirects` (for servers that approve at
once) or `consent_as("ada")` (the lab's consent step, answered in the URL).
"""

import base64
import hashlib
import ipaddress
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, quote, urlencode, urljoin, urlsplit

from .errors import WireError
from .http11 import Connection
from .transcript import Exchange, Transcript

REDIRECT_URI = "http://127.0.0.1/callback"
# What the client keeps per authorization server, keyed by its issuer: nothing here goes to another one.
CREDENTIALS = ("client_id", "client_secret", "auth_method", "access_token", "refresh_token")


class OAuthError(WireError):
    """The authorization dance stopped: a check failed or a server refused."""


# --- the pieces lesson 18 computes by hand -------------------------------------------------

def pkce_pair(verifier=None):
    """(code_verifier, code_challenge) for S256: the challenge is BASE64URL(SHA256(verifier)) without padding."""
    verifier = verifier or secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def parse_challenge(header):
    """The parameters of a `Bearer` challenge: `{"resource_metadata": …, "scope": …, "error": …}`.

    Returns None when the header holds no Bearer challenge. Values may be quoted strings
    (with backslash escapes) or bare tokens (RFC 9110 section 11.2).
    """
    if not header:
        return None
    match = re.search(r"(?i)(?:^|,\s*)bearer(?:\s+|$)", header)
    if match is None:
        return None
    params = {}
    pattern = r'\s*([A-Za-z0-9_.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*(?:,|$)'
    for name, value in re.findall(pattern, header[match.end():]):
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        params.setdefault(name.lower(), value)
    return params


def protected_resource_metadata_urls(resource_url):
    """Where to look without a `resource_metadata` hint: path-based first, then the root."""
    parts = urlsplit(resource_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    urls = [f"{origin}/.well-known/oauth-protected-resource{path}"] if path else []
    return urls + [f"{origin}/.well-known/oauth-protected-resource"]


def authorization_server_metadata_urls(issuer):
    """The discovery order of the MCP spec: RFC 8414 first, then OpenID Connect (inserted, then appended)."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration"]


def is_loopback(host):
    """True for localhost and loopback IP literals (127.0.0.0/8, ::1): traffic to them never leaves the machine."""
    if host is None:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_secure(url, what):
    """Refuse a URL an MCP client must not use for OAuth: anything but https, or plain http on a loopback host.

    MCP says every authorization server endpoint MUST be served over HTTPS and every redirect URI MUST be
    localhost or HTTPS. OAuth 2.1 lets loopback redirect URIs use http because the request never leaves the
    device; this helper also accepts http endpoints on loopback, for the same reason, so the offline lab works.
    Any other scheme (javascript:, data:, file:) is refused too.
    """
    parts = urlsplit(url) if isinstance(url, str) else None
    scheme = parts.scheme.lower() if parts else ""
    if parts and parts.hostname and (scheme == "https" or (scheme == "http" and is_loopback(parts.hostname))):
        return url
    raise OAuthError(f"{what} {url!r} is neither https nor http on a loopback host: refusing it")


def resource_covers(resource, url):
    """True when the metadata's `resource` names this MCP URL or a path above it on the same origin.

    RFC 9728 section 3.3 asks for the identical URL; the path above is the relaxation that
    draft-mcguinness-oauth-rfc9728bis proposes, kept because MCP servers often name their origin.
    """
    want, have = urlsplit(url), urlsplit(resource)
    if (have.scheme.lower(), have.netloc.lower()) != (want.scheme.lower(), want.netloc.lower()):
        return False
    prefix = have.path.rstrip("/")
    return want.path.rstrip("/") == prefix or want.path.startswith(prefix + "/")


# --- plain HTTP with every byte recorded -----------------------------------------------------

@dataclass
class HttpResult:
    status: int
    headers: dict
    body: bytes

    def json(self):
        try:
            value = json.loads(self.body)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    @property
    def location(self):
        return self.headers.get("location")


def http(method, url, *, headers=None, form=None, body=None, timeout=10.0, transcript=None, label=None):
    """One HTTP/1.1 request written by hand; the exchange goes into `transcript` as `oauth <label>`."""
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = dict(headers or {})
    if form is not None:
        body = urlencode(form).encode("ascii")
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    elif isinstance(body, (dict, list)):
        body = json.dumps(body, separators=(",", ":")).encode("utf-8")
        headers.setdefault("Content-Type", "application/json")
    body = body or b""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc}", *(f"{k}: {v}" for k, v in headers.items())]
    if method != "GET" or body:
        lines.append(f"Content-Length: {len(body)}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    connection = Connection(url)
    started = time.perf_counter()
    try:
        connection.send(data, timeout)
        response = connection.read_head(time.monotonic() + timeout)
        connection.read_body(response, time.monotonic() + timeout)
    except OSError as error:
        raise OAuthError(f"no HTTP response from {url}: {error}") from None
    finally:
        connection.close()
    reply_headers = {}
    for name, value in response.headers:
        key = name.lower()
        reply_headers[key] = f"{reply_headers[key]}, {value}" if key in reply_headers else value
    if transcript is not None:
        transcript.append(Exchange("http", f"oauth {label or method}", None, data, bytes(response.raw),
                                   [body.decode("utf-8", "surrogateescape")] if body else [],
                                   [bytes(response.body).decode("utf-8", "surrogateescape")] if response.body else [],
                                   elapsed_ms=(time.perf_counter() - started) * 1000,
                                   status=response.status, url=url))
    return HttpResult(response.status, reply_headers, bytes(response.body))


# --- a client's own metadata document, hosted on this machine ---------------------------------

class ClientDocumentHost:
    """Client ID Metadata Documents served on 127.0.0.1, with every fetch recorded in `fetches`.

    A real client hosts its document at an https URL; this host serves plain http on loopback, which is
    what an offline authorization server (the lab's) can fetch. `serve(path, document, cache_control)`
    publishes one; any other path answers 404.
    """

    def __init__(self):
        self.documents = {}
        self.fetches = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                host.fetches.append(self.path)
                found = host.documents.get(self.path)
                if found is None:
                    self.send_error(404)
                    return
                body, cache_control = json.dumps(found[0]).encode(), found[1]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if cache_control:
                    self.send_header("Cache-Control", cache_control)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass  # the fetches list is the log

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def serve(self, path, document, cache_control=None):
        """Publish `document` at `path`; returns its URL."""
        self.documents[path] = (document, cache_control)
        return self.url + path

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- user agents: who carries the authorization request to the server and back ----------------

def follow_redirects(authorization_url, redirect_uri, get):
    """Follow the authorization server's redirects until one leads back to `redirect_uri`."""
    url = authorization_url
    for _ in range(10):
        if url.startswith(redirect_uri):
            return url
        reply = get(url, "authorize")
        if reply.status not in (301, 302, 303, 307) or not reply.location:
            raise OAuthError(f"the authorization server answered HTTP {reply.status} instead of redirecting back: "
                             f"{reply.body[:200].decode('utf-8', 'replace')}")
        url = urljoin(url, reply.location)
    raise OAuthError("too many redirects on the way back from the authorization server")


def consent_as(user, consent="approve"):
    """A user agent for the lab: on the consent page, `user` answers `consent` (approve or deny)."""

    def agent(authorization_url, redirect_uri, get):
        def answer(url, label):
            if urlsplit(url).path.endswith("/consent"):
                url += "&" + urlencode({"user": user, "consent": consent})
                label = "consent"
            return get(url, label)

        return follow_redirects(authorization_url, redirect_uri, answer)

    return agent


# --- the flow --------------------------------------------------------------------------------

@dataclass
class OAuth:
    """One client's authorization state for one MCP server, used by `HttpWire(url, auth=...)`."""

    client_id: str | None = None  # pre-registered; None: a metadata document or dynamic registration
    client_secret: str | None = None
    auth_method: str | None = None  # token endpoint: "none", "client_secret_basic" or "client_secret_post"
    client_metadata_url: str | None = None  # a Client ID Metadata Document URL to use as client_id
    redirect_uri: str = REDIRECT_URI
    client_name: str = "mcpwire"
    user_agent: object = follow_redirects
    timeout: float = 10.0
    max_step_ups: int = 2
    transcript: Transcript = field(default_factory=Transcript)
    access_token: str | None = None
    refresh_token: str | None = None
    scopes: list = field(default_factory=list)  # every scope asked for so far (a step-up adds, never drops)
    resource: str | None = None
    issuer: str | None = None
    server_metadata: dict | None = None
    resource_metadata: dict | None = None
    # Client ids and tokens of the other authorization servers met so far, keyed by issuer; pass
    # {issuer: {"client_id": …, "auth_method": …}} to give the ids pre-registered with each one.
    credentials: dict = field(default_factory=dict)
    _step_ups: int = 0
    _metadata_hint: str | None = None
    _client_kind: str | None = None  # how the current client id was had: pre-registered, metadata document, dynamic
    _url: str | None = None  # the MCP endpoint of the wire attached last

    def __post_init__(self):
        if self.client_id is not None:
            self._client_kind = "pre-registered"

    def attach(self, wire):
        """Record every authorization exchange in `wire`'s transcript, between its MCP frames."""
        self.transcript = wire.transcript
        self._url = getattr(wire, "url", None)
        return self

    def send(self, wire, frame, headers=None, **kwargs):
        """`wire.send` with `Authorization: Bearer …`; after a 401 or 403 challenge, authorize and send once more.

        The same frame (same id) goes again: the server never processed the refused one.
        """
        reply = wire.send(frame, {**self.headers(), **(headers or {})}, **kwargs)
        if reply.status in (401, 403) and self.on_challenge(wire.url, reply.status,
                                                             (reply.headers or {}).get("www-authenticate")):
            reply = wire.send(frame, {**self.headers(), **(headers or {})}, **kwargs)
        return reply

    def headers(self):
        """The bearer header, only for the server the token was issued for (a token never goes to another one)."""
        if not self.access_token or (self._url and self.resource and not resource_covers(self.resource, self._url)):
            return {}
        return {"Authorization": f"Bearer {self.access_token}"}

    def get(self, url, label):
        return http("GET", url, timeout=self.timeout, transcript=self.transcript, label=label)

    def post(self, url, label, **kwargs):
        return http("POST", url, timeout=self.timeout, transcript=self.transcript, label=label, **kwargs)

    # What HttpWire calls with a 401 or 403: True means "send the request again".
    def on_challenge(self, url, status, www_authenticate):
        challenge = parse_challenge(www_authenticate)
        if challenge is None or status not in (401, 403):
            return False
        if status == 403:
            if challenge.get("error") != "insufficient_scope" or self._step_ups >= self.max_step_ups:
                return False  # the spec asks for a retry limit: a server that keeps challenging wins
            self._step_ups += 1
        else:
            # A refused token: look again where tokens come from (the resource may have moved to another
            # authorization server); the same server can renew it with the refresh token, no new consent.
            issuer = self.issuer
            self.discover(url, challenge)
            self._metadata_hint = challenge.get("resource_metadata")
            if self.refresh_token and self.issuer == issuer and self.refresh():
                return True
        self.authorize(url, challenge)
        return True

    def discover(self, url, challenge):
        """Protected resource metadata, then the authorization server's metadata (issuer checked)."""
        hint = challenge.get("resource_metadata")
        for candidate in [hint] if hint else protected_resource_metadata_urls(url):
            reply = self.get(candidate, "resource metadata")
            document = reply.json() if reply.status == 200 else None
            if document is not None:
                break
        else:
            raise OAuthError(f"no protected resource metadata for {url}")
        resource = document.get("resource")
        if not isinstance(resource, str) or not resource_covers(resource, url):
            raise OAuthError(f"the resource metadata names {resource!r}, not this server ({url}): refusing it")
        servers = document.get("authorization_servers") or []
        if not servers:
            raise OAuthError("the resource metadata names no authorization server")
        if resource != self.resource:
            self.scopes = []  # scopes accumulate per resource: another server starts from its own challenge
        self.resource_metadata, self.resource = document, resource
        issuer = require_secure(servers[0], "the authorization server")
        for candidate in authorization_server_metadata_urls(issuer):
            reply = self.get(candidate, "server metadata")
            metadata = reply.json() if reply.status == 200 else None
            if metadata is None:
                continue
            if metadata.get("issuer") != issuer:
                raise OAuthError(f"the metadata at {candidate} says issuer {metadata.get('issuer')!r}, "
                                 f"not {issuer!r}: refusing it")
            for endpoint in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
                if endpoint in metadata:
                    require_secure(metadata[endpoint], f"the {endpoint.replace('_', ' ')}")
            self.use_issuer(issuer)
            self.server_metadata = metadata
            return
        raise OAuthError(f"no authorization server metadata for {issuer}")

    def use_issuer(self, issuer):
        """Switch to the credentials of `issuer`: MCP binds client ids and tokens to the server that issued them.

        What the previous authorization server issued is kept under its issuer and never sent to the new one; a
        client id from a metadata document or a dynamic registration is had again from the new server, and a
        pre-registered id with no entry for the new issuer in `credentials` is an error, not a guess.
        """
        if self.issuer == issuer:
            return
        kept = self.credentials.get(issuer)
        if self.issuer is None:
            if kept is not None and self.client_id is None:
                self.load(kept)
            self.issuer = issuer
            return
        if self._client_kind == "pre-registered" and kept is None:
            raise OAuthError(f"the client id {self.client_id!r} was registered with {self.issuer!r}, and this server's "
                             f"metadata now names {issuer!r}: give the id that server issued in credentials={{...}}")
        self.credentials[self.issuer] = {**{name: getattr(self, name) for name in CREDENTIALS}, "kind": self._client_kind}
        self.load(kept or {})
        self.issuer = issuer

    def load(self, kept):
        for name in CREDENTIALS:
            setattr(self, name, kept.get(name))
        self._client_kind = kept.get("kind", "pre-registered" if kept.get("client_id") else None)

    def choose_scopes(self, challenge):
        """The challenge's scope, else the metadata's scopes_supported, united with what was asked before."""
        wanted = (challenge.get("scope") or "").split()
        if not wanted:
            wanted = list((self.resource_metadata or {}).get("scopes_supported") or [])
        for scope in wanted:
            if scope not in self.scopes:
                self.scopes.append(scope)
        scopes = list(self.scopes)
        offered = (self.server_metadata or {}).get("scopes_supported") or []
        if scopes and "offline_access" in offered and "offline_access" not in scopes:
            scopes.append("offline_access")  # the spec allows asking for a refresh token this way
        return scopes

    def register(self):
        """Pre-registered if given; else a metadata document if the server takes them; else dynamic registration."""
        metadata = self.server_metadata
        if self.client_id is not None:
            return
        if self.client_metadata_url and metadata.get("client_id_metadata_document_supported"):
            require_secure(self.client_metadata_url, "the client metadata document URL")
            if not urlsplit(self.client_metadata_url).path.strip("/"):
                raise OAuthError(f"a client metadata document URL needs a path: {self.client_metadata_url!r}")
            self.client_id, self.auth_method = self.client_metadata_url, "none"
            self._client_kind = "metadata document"
            return
        endpoint = metadata.get("registration_endpoint")
        if not endpoint:
            raise OAuthError("no client id, and the authorization server offers no way to get one")
        supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        method = next((m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported), "none")
        reply = self.post(endpoint, "register", body={
            "client_name": self.client_name, "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": method, "application_type": "native"})
        client = reply.json()
        if reply.status not in (200, 201) or not client or "client_id" not in client:
            raise OAuthError(f"dynamic registration failed: HTTP {reply.status} {reply.body[:200]!r}")
        self.client_id, self.client_secret = client["client_id"], client.get("client_secret")
        self.auth_method = client.get("token_endpoint_auth_method") or method
        self._client_kind = "dynamic"

    def authorize(self, url, challenge=None):
        """The whole dance for `url`; afterwards `headers()` carries the new bearer token."""
        challenge = challenge or {}
        hint = challenge.get("resource_metadata")
        if self.server_metadata is None or (hint and hint != self._metadata_hint):
            self.discover(url, challenge)
            self._metadata_hint = hint
        self.require_pkce()
        require_secure(self.redirect_uri, "the redirect URI")
        self.register()
        scopes = self.choose_scopes(challenge)
        verifier, code_challenge = pkce_pair()
        state = secrets.token_urlsafe(16)
        query = {"response_type": "code", "client_id": self.client_id, "redirect_uri": self.redirect_uri,
                 "code_challenge": code_challenge, "code_challenge_method": "S256", "state": state,
                 "resource": self.resource}
        if scopes:
            query["scope"] = " ".join(scopes)
        endpoint = self.server_metadata["authorization_endpoint"]
        back = self.user_agent(f"{endpoint}?{urlencode(query, quote_via=quote)}", self.redirect_uri, self.get)
        answer = dict(parse_qsl(urlsplit(back).query))
        self.check_response(answer, state)
        self.token_request({"grant_type": "authorization_code", "code": answer["code"],
                            "redirect_uri": self.redirect_uri, "code_verifier": verifier, "resource": self.resource})

    def require_pkce(self):
        """MCP clients refuse an authorization server whose metadata does not show PKCE with S256."""
        methods = self.server_metadata.get("code_challenge_methods_supported")
        if not isinstance(methods, list) or "S256" not in methods:
            raise OAuthError(f"the authorization server's code_challenge_methods_supported is {methods!r}: "
                             "without S256 there it may not do PKCE, and an MCP client must not go on")

    def check_response(self, answer, state):
        """RFC 9207's `iss` rule (as the MCP spec tabulates it), then `state`, then the code itself."""
        advertised = self.server_metadata.get("authorization_response_iss_parameter_supported") is True
        if "iss" in answer and answer["iss"] != self.issuer:
            raise OAuthError(f"the authorization response came from {answer['iss']!r}, not {self.issuer!r}")
        if "iss" not in answer and advertised:
            raise OAuthError("the authorization server promised an iss parameter and sent none")
        if answer.get("state") != state:
            raise OAuthError("the state in the redirect is not the one we sent: not our request")
        if "error" in answer:
            raise OAuthError(f"authorization refused: {answer['error']} {answer.get('error_description', '')}".strip())
        if "code" not in answer:
            raise OAuthError("the redirect carries no code")

    def refresh(self):
        """Trade the refresh token for a new pair; False when the server refuses it."""
        try:
            self.token_request({"grant_type": "refresh_token", "refresh_token": self.refresh_token,
                                "resource": self.resource})
        except OAuthError:
            self.refresh_token = None
            return False
        return True

    def token_request(self, form):
        headers = {}
        form = {**form, "client_id": self.client_id}
        if self.auth_method == "client_secret_basic" and self.client_secret is not None:
            pair = f"{quote(self.client_id, safe='')}:{quote(self.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif self.auth_method == "client_secret_post" and self.client_secret is not None:
            form["client_secret"] = self.client_secret
        reply = self.post(self.server_metadata["token_endpoint"], "token", headers=headers,
                          form={k: v for k, v in form.items() if v is not None})
        tokens = reply.json()
        if reply.status != 200 or not tokens or "access_token" not in tokens:
            raise OAuthError(f"the token request was refused: HTTP {reply.status} {reply.body[:200]!r}")
        self.access_token = tokens["access_token"]
        self.refresh_token = tokens.get("refresh_token", self.refresh_token)

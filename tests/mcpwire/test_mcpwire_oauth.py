"""mcpwire.oauth: the pieces a learner computes by hand in lesson 18, and the whole dance against the auth lab."""

from __future__ import annotations

import base64
import hashlib
import time

import pytest

from mcpwire import HttpWire, frames
from mcpwire.oauth import (
    OAuth,
    OAuthError,
    authorization_server_metadata_urls,
    consent_as,
    parse_challenge,
    pkce_pair,
    protected_resource_metadata_urls,
    require_secure,
    resource_covers,
)


def test_the_s256_challenge_is_unpadded_base64url_of_the_sha256_of_the_verifier():
    verifier = "a" * 43
    # The same transform written another way: standard base64, then the URL-safe alphabet, then no padding.
    expected = base64.b64encode(hashlib.sha256(verifier.encode()).digest()).decode()
    expected = expected.replace("+", "-").replace("/", "_").rstrip("=")
    assert pkce_pair(verifier) == (verifier, expected) and len(expected) == 43


def test_a_fresh_verifier_is_long_enough_and_never_repeats():
    first, second = pkce_pair()[0], pkce_pair()[0]
    assert 43 <= len(first) <= 128 and first != second


@pytest.mark.parametrize(("header", "expected"), [
    ('Bearer resource_metadata="https://a.example/.well-known/x", scope="files:read"',
     {"resource_metadata": "https://a.example/.well-known/x", "scope": "files:read"}),
    ('Bearer error="insufficient_scope", scope="a b", error_description="needs \\"b\\""',
     {"error": "insufficient_scope", "scope": "a b", "error_description": 'needs "b"'}),
    ("Bearer realm=lab, error=invalid_token", {"realm": "lab", "error": "invalid_token"}),
    ('Basic realm="x", Bearer scope="s"', {"scope": "s"}),
    ("bearer", {}),
])
def test_parse_challenge_reads_quoted_and_bare_values(header, expected):
    assert parse_challenge(header) == expected


@pytest.mark.parametrize("header", [None, "", 'Basic realm="x"', "Bearerish scope=x"])
def test_parse_challenge_finds_no_bearer_challenge(header):
    assert parse_challenge(header) is None


def test_protected_resource_metadata_is_looked_for_path_based_first_then_at_the_root():
    assert protected_resource_metadata_urls("https://a.example/public/mcp") == [
        "https://a.example/.well-known/oauth-protected-resource/public/mcp",
        "https://a.example/.well-known/oauth-protected-resource",
    ]


def test_authorization_server_discovery_follows_the_spec_order():
    assert authorization_server_metadata_urls("https://auth.example/tenant1") == [
        "https://auth.example/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example/.well-known/openid-configuration/tenant1",
        "https://auth.example/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.example") == [
        "https://auth.example/.well-known/oauth-authorization-server",
        "https://auth.example/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(("resource", "url", "covers"), [
    ("https://a.example/mcp", "https://a.example/mcp", True),
    ("https://a.example", "https://a.example/mcp", True),
    ("https://a.example/m", "https://a.example/mcp", False),
    ("https://evil.example/mcp", "https://a.example/mcp", False),
])
def test_the_resource_must_name_this_server(resource, url, covers):
    assert resource_covers(resource, url) is covers


def checked(**answer):
    auth = OAuth(issuer="http://as.example", server_metadata={"authorization_response_iss_parameter_supported": True})
    auth.check_response(answer, "s1")


def test_the_redirect_checks_pass_for_a_good_answer():
    checked(code="c", state="s1", iss="http://as.example")


@pytest.mark.parametrize(("answer", "phrase"), [
    ({"code": "c", "state": "s2", "iss": "http://as.example"}, "state"),
    ({"code": "c", "state": "s1"}, "sent none"),
    ({"code": "c", "state": "s1", "iss": "http://as.example/"}, "not 'http://as.example'"),
    ({"error": "access_denied", "state": "s1", "iss": "http://as.example"}, "access_denied"),
])
def test_the_redirect_checks_refuse(answer, phrase):
    with pytest.raises(OAuthError, match=phrase):
        checked(**answer)


def test_an_absent_iss_goes_on_when_the_server_does_not_advertise_it():
    auth = OAuth(issuer="http://as.example", server_metadata={})
    auth.check_response({"code": "c", "state": "s1"}, "s1")


def test_an_error_from_the_wrong_issuer_is_not_repeated():
    with pytest.raises(OAuthError) as refused:
        checked(error="access_denied", error_description="call 555-0100", state="s1", iss="http://attacker.example")
    assert "555" not in str(refused.value) and "access_denied" not in str(refused.value)


@pytest.mark.parametrize("url", [
    "https://as.example/token", "http://127.0.0.1:8080/token", "http://localhost/callback", "http://[::1]:9/authorize",
    "http://127.0.0.2/callback",
])
def test_https_or_loopback_http_is_accepted(url):
    assert require_secure(url, "url") == url


@pytest.mark.parametrize("url", [
    "http://as.example/token", "http://localhost.example/cb", "javascript:alert(1)", "data:text/html,x",
    "file:///etc/passwd", "https:///no-host", "", None, "HTTP://10.0.0.1/authorize",
])
def test_anything_else_is_refused(url):
    with pytest.raises(OAuthError, match="refusing it"):
        require_secure(url, "url")


def test_a_redirect_uri_off_loopback_without_https_stops_before_the_browser_opens():
    asked = []
    metadata = {"authorization_endpoint": "https://as.example/authorize", "token_endpoint": "https://as.example/token",
                "code_challenge_methods_supported": ["S256"]}
    auth = OAuth(client_id="c", auth_method="none", issuer="https://as.example", server_metadata=metadata,
                 resource="https://rs.example/mcp", redirect_uri="http://app.example/callback",
                 user_agent=lambda url, redirect, get: asked.append(url))
    with pytest.raises(OAuthError, match="redirect URI"):
        auth.authorize("https://rs.example/mcp")
    assert asked == []


def holding(kind="dynamic", **credentials):
    auth = OAuth(issuer="https://a.example", resource="https://rs.example/mcp", access_token="token-a",
                 refresh_token="refresh-a", client_id="id-a", **credentials)
    auth._client_kind = kind
    return auth


def test_a_new_issuer_gets_nothing_the_old_one_issued_and_the_old_ones_are_kept():
    auth = holding()
    auth.use_issuer("https://b.example")
    assert (auth.client_id, auth.access_token, auth.refresh_token, auth.headers()) == (None, None, None, {})
    assert auth.credentials["https://a.example"]["client_id"] == "id-a"
    auth.use_issuer("https://a.example")
    assert (auth.client_id, auth.access_token) == ("id-a", "token-a")


def test_a_pre_registered_id_is_not_carried_to_another_issuer():
    auth = holding("pre-registered")
    with pytest.raises(OAuthError, match="registered with 'https://a.example'"):
        auth.use_issuer("https://b.example")
    assert auth.issuer == "https://a.example" and auth.client_id == "id-a"


def test_an_id_given_for_the_new_issuer_is_used_there():
    auth = holding("pre-registered", credentials={"https://b.example": {"client_id": "id-b", "auth_method": "none"}})
    auth.use_issuer("https://b.example")
    assert (auth.client_id, auth.auth_method, auth.access_token) == ("id-b", "none", None)


class Wire:
    def __init__(self, url):
        self.url, self.transcript = url, []


def test_a_token_goes_only_to_the_server_it_was_issued_for():
    auth = holding()
    assert auth.attach(Wire("https://rs.example/mcp")).headers() == {"Authorization": "Bearer token-a"}
    assert auth.attach(Wire("https://other.example/mcp")).headers() == {}


@pytest.mark.parametrize("methods", [None, [], ["plain"]])
def test_a_server_without_s256_pkce_is_refused_before_the_authorization_request(methods):
    # The spec's rule: without code_challenge_methods_supported a client cannot know the server checks PKCE.
    metadata = {"authorization_endpoint": "http://as.example/authorize", "token_endpoint": "http://as.example/token"}
    if methods is not None:
        metadata["code_challenge_methods_supported"] = methods
    asked = []
    auth = OAuth(client_id="c", auth_method="none", issuer="http://as.example", server_metadata=metadata,
                 resource="http://rs.example/mcp", user_agent=lambda url, redirect, get: asked.append(url))
    with pytest.raises(OAuthError, match="must not go on"):
        auth.authorize("http://rs.example/mcp")
    assert asked == []


# --- against the lab ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wire():
    with HttpWire.labserver("--auth") as wire:
        yield wire


def search(frame_id):
    return frames.request("tools/call", {"name": "search_notes", "arguments": {"query": "sleep"}}, id=frame_id)


def test_the_whole_dance_is_recorded_between_the_mcp_frames(wire):
    auth = OAuth(client_id="notes-notebook", auth_method="none", user_agent=consent_as("ada")).attach(wire)
    start = len(wire.transcript)
    reply = auth.send(wire, frames.request("server/discover", id=1))
    assert reply.status == 200 and reply.ok
    steps = [exchange.method for exchange in wire.transcript][start:]
    assert steps == ["server/discover", "oauth resource metadata", "oauth server metadata", "oauth authorize",
                     "oauth consent", "oauth token", "server/discover"]
    assert auth.scopes == ["notes:read"] and auth.resource == wire.url


def test_step_up_keeps_the_read_scope(wire):
    auth = OAuth(client_id="notes-notebook", auth_method="none", user_agent=consent_as("ada")).attach(wire)
    assert auth.send(wire, search(2)).ok
    create = frames.request("tools/call", {"name": "create_note", "arguments": {"title": "Up", "body": "b"}}, id=3)
    assert auth.send(wire, create).ok
    assert auth.scopes == ["notes:read", "notes:write"]
    assert auth.send(wire, search(4)).ok


def test_dynamic_registration_is_the_fallback(wire):
    auth = OAuth(user_agent=consent_as("ada")).attach(wire)
    assert auth.send(wire, search(5)).ok
    assert auth.client_id not in (None, "notes-notebook") and auth.auth_method == "none"


def test_a_metadata_document_is_used_when_the_server_supports_it(wire):
    auth = OAuth(user_agent=consent_as("ada"))
    auth.attach(wire)
    auth.client_metadata_url = "placeholder"
    auth.discover(wire.url, {})
    auth.client_metadata_url = f"{auth.issuer}/clients/notes-notebook.json"
    assert auth.send(wire, search(6)).ok and auth.client_id == auth.client_metadata_url


def test_a_denied_consent_stops_the_dance(wire):
    auth = OAuth(client_id="notes-notebook", auth_method="none", user_agent=consent_as("ada", "deny")).attach(wire)
    with pytest.raises(OAuthError, match="access_denied"):
        auth.send(wire, search(7))


def test_an_expired_token_is_refreshed_without_a_new_consent():
    with HttpWire.labserver("--auth", "--token-lifetime", "1") as wire:
        auth = OAuth(client_id="notes-notebook", auth_method="none", user_agent=consent_as("ada")).attach(wire)
        assert auth.send(wire, search(1)).ok
        time.sleep(2.2)
        start = len(wire.transcript)
        assert auth.send(wire, search(2)).ok
        assert [e.method for e in wire.transcript][start:] == [
            "tools/call", "oauth resource metadata", "oauth server metadata", "oauth token", "tools/call"]


def test_a_client_that_moves_to_another_authorization_server_registers_again_and_sends_it_no_token(wire):
    auth = OAuth(user_agent=consent_as("ada")).attach(wire)
    assert auth.send(wire, search(8)).ok
    first_issuer, first_id = auth.issuer, auth.client_id
    with HttpWire.labserver("--auth") as other:
        auth.attach(other)
        start = len(other.transcript)
        assert auth.send(other, search(1)).ok
        sent = other.transcript[start:]
    assert b"authorization: bearer" not in sent[0].up.lower() and sent[0].status == 401
    assert "oauth register" in [e.method for e in sent]
    assert auth.issuer != first_issuer and auth.client_id != first_id
    assert auth.credentials[first_issuer]["client_id"] == first_id


def test_a_metadata_document_url_off_loopback_must_be_https():
    auth = OAuth(client_metadata_url="http://app.example/client.json", issuer="https://as.example",
                 server_metadata={"client_id_metadata_document_supported": True})
    with pytest.raises(OAuthError, match="metadata document URL"):
        auth.register()


def test_an_httpwire_given_auth_authorizes_by_itself():
    auth = OAuth(client_id="notes-notebook", auth_method="none", user_agent=consent_as("ada"))
    with HttpWire.labserver("--auth", auth=auth) as wire:
        first = wire.request("server/discover")
        create = wire.request("tools/call", {"name": "create_note", "arguments": {"title": "Hook", "body": "b"}})
        methods = [exchange.method for exchange in wire.transcript]
    assert first.ok and create.ok and auth.scopes == ["notes:read", "notes:write"]
    assert methods.count("oauth token") == 2 and methods[0] == "server/discover" and methods[-1] == "tools/call"

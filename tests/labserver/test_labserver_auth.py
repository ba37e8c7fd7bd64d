"""`python -m labserver --http --auth`: every step of the OAuth 2.1 dance against the lab, by hand with httpx,
including each refusal a client or an attacker meets."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import subprocess
import sys
import time
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from lab_harness import HttpLab, check_result, request, tool_call

CLIENT = "notes-notebook"
REDIRECT = "http://127.0.0.1/callback"


class AuthLab(HttpLab):
    """The lab with --auth: the MCP URL is the first stdout line, the authorization server's issuer the second."""

    def __init__(self, *args: str) -> None:
        super().__init__("--auth", *args)
        self.issuer = self.process.stdout.readline().decode().strip()
        self.origin = self.url.rsplit("/mcp", 1)[0]

    def post(self, frame: dict, token: str | None = None, **headers: str) -> httpx.Response:
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return super().post(frame, **headers)

    def authorize(self, scope: str | None = "notes:read", *, resource: str | None = "", client_id: str = CLIENT,
                  verifier: str | None = None, method: str = "S256", state: str = "st-1", consent: str = "approve"):
        """The authorization request and the consent: returns (query of the final redirect, verifier)."""
        verifier = verifier or secrets.token_urlsafe(48)
        digest = hashlib.sha256(verifier.encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode() if method == "S256" else verifier
        params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
                  "code_challenge": challenge, "code_challenge_method": method, "state": state}
        if scope is not None:
            params["scope"] = scope
        if resource is not None:
            params["resource"] = resource or self.url
        answer = self.client.get(f"{self.issuer}/authorize?{urlencode(params)}")
        if answer.status_code == 302 and answer.headers["location"].startswith(self.issuer + "/consent"):
            answer = self.client.get(answer.headers["location"] + "&" + urlencode({"user": "ada", "consent": consent}))
        if answer.status_code != 302:
            return answer, verifier
        assert answer.headers["location"].startswith(REDIRECT + "?")
        return {k: v[0] for k, v in parse_qs(urlsplit(answer.headers["location"]).query).items()}, verifier

    def token(self, **form: str):
        return self.client.post(f"{self.issuer}/token", data=form)

    def tokens_for(self, scope: str = "notes:read", resource: str | None = "") -> dict:
        query, verifier = self.authorize(scope, resource=resource)
        response = self.token(grant_type="authorization_code", code=query["code"], redirect_uri=REDIRECT,
                              client_id=CLIENT, code_verifier=verifier, resource=resource or self.url)
        assert response.status_code == 200, response.text
        return response.json()


def challenge_params(header: str) -> dict:
    assert header.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


@pytest.fixture(scope="module")
def lab():
    server = AuthLab()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def read_tokens(lab):
    return lab.tokens_for("notes:read")


def test_both_urls_are_printed_on_loopback(lab):
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", lab.url)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", lab.issuer) and lab.issuer != lab.origin


# --- 1. the challenge ------------------------------------------------------------------------

def test_a_request_without_token_gets_401_and_a_challenge_naming_metadata_and_scope(lab):
    response = lab.post(request(1, "server/discover"))
    assert response.status_code == 401
    params = challenge_params(response.headers["www-authenticate"])
    assert params == {"resource_metadata": f"{lab.origin}/.well-known/oauth-protected-resource/mcp",
                      "scope": "notes:read"}
    assert "error" not in params  # RFC 6750 3.1: no error code when no credentials were sent


def test_the_challenge_scope_is_what_the_request_needs(lab):
    response = lab.post(tool_call(1, "create_note", {"title": "x", "body": "y"}))
    assert response.status_code == 401
    assert challenge_params(response.headers["www-authenticate"])["scope"] == "notes:write"


def test_a_token_in_the_query_string_is_not_a_token(lab, read_tokens):
    frame = request(1, "server/discover")
    response = lab.client.post(f"{lab.url}?access_token={read_tokens['access_token']}", content=json.dumps(frame),
                               headers=lab.headers_for(frame))
    assert response.status_code == 401


# --- 2. and 3. metadata ----------------------------------------------------------------------

def test_protected_resource_metadata_lives_at_the_path_based_well_known_uri(lab):
    response = lab.client.get(f"{lab.origin}/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 200
    assert response.json() == {"resource": lab.url, "authorization_servers": [lab.issuer],
                               "scopes_supported": ["notes:read", "notes:write"],
                               "bearer_methods_supported": ["header"], "resource_name": "Notes lab"}
    assert lab.client.get(f"{lab.origin}/.well-known/oauth-protected-resource").status_code == 404


def test_authorization_server_metadata_names_its_exact_issuer_and_what_it_supports(lab):
    response = lab.client.get(f"{lab.issuer}/.well-known/oauth-authorization-server")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    metadata = response.json()
    assert metadata["issuer"] == lab.issuer  # exactly: no trailing slash
    assert metadata["authorization_endpoint"] == f"{lab.issuer}/authorize"
    assert metadata["token_endpoint"] == f"{lab.issuer}/token"
    assert metadata["registration_endpoint"] == f"{lab.issuer}/register"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert "none" in metadata["token_endpoint_auth_methods_supported"]
    assert lab.client.get(f"{lab.issuer}/.well-known/openid-configuration").status_code == 404


# --- 4. client registration ------------------------------------------------------------------

def test_dynamic_client_registration_returns_a_client_that_can_authorize(lab):
    response = lab.client.post(f"{lab.issuer}/register", json={
        "client_name": "test", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    assert response.status_code == 201
    client = response.json()
    assert "client_secret" not in client
    query, _ = lab.authorize(client_id=client["client_id"])
    assert "code" in query


def test_a_client_id_metadata_document_url_works_as_client_id(lab):
    query, _ = lab.authorize(client_id=f"{lab.issuer}/clients/notes-notebook.json")
    assert "code" in query and query["iss"] == lab.issuer


def test_an_unknown_client_is_refused_without_redirect(lab):
    response, _ = lab.authorize(client_id="nobody")
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"


def test_a_metadata_document_outside_loopback_is_not_fetched(lab):
    response, _ = lab.authorize(client_id="https://clients.example.com/app.json")
    assert response.status_code == 400 and "not found" in response.json()["error_description"]


# --- 5. the authorization request ------------------------------------------------------------

def test_the_consent_page_is_html_with_approve_and_deny(lab):
    params = {"response_type": "code", "client_id": CLIENT, "redirect_uri": REDIRECT, "code_challenge": "x" * 43,
              "state": "s", "scope": "notes:read", "resource": lab.url}
    first = lab.client.get(f"{lab.issuer}/authorize?{urlencode(params)}")
    assert first.status_code == 302 and first.headers["cache-control"] == "no-store"
    page = lab.client.get(first.headers["location"])
    assert page.headers["content-type"].startswith("text/html")
    assert 'value="approve"' in page.text and 'value="deny"' in page.text and "notes:read" in page.text


def test_approval_redirects_with_code_state_and_iss(lab):
    query, _ = lab.authorize(state="abc")
    assert set(query) == {"code", "state", "iss"}
    assert query["state"] == "abc" and query["iss"] == lab.issuer


def test_denial_redirects_with_access_denied_state_and_iss(lab):
    query, _ = lab.authorize(consent="deny", state="abc")
    assert query["error"] == "access_denied" and query["state"] == "abc" and query["iss"] == lab.issuer


def test_a_consent_answers_once(lab):
    params = {"response_type": "code", "client_id": CLIENT, "redirect_uri": REDIRECT, "code_challenge": "x" * 43}
    location = lab.client.get(f"{lab.issuer}/authorize?{urlencode(params)}").headers["location"]
    assert lab.client.get(location + "&user=ada&consent=approve").status_code == 302
    again = lab.client.get(location + "&user=ada&consent=approve")
    assert again.status_code == 400 and "answered once" in again.json()["error_description"]


def test_approving_needs_a_user(lab):
    params = {"response_type": "code", "client_id": CLIENT, "redirect_uri": REDIRECT, "code_challenge": "x" * 43}
    location = lab.client.get(f"{lab.issuer}/authorize?{urlencode(params)}").headers["location"]
    assert lab.client.get(location + "&consent=approve").status_code == 400


def test_the_plain_challenge_method_is_refused(lab):
    query, _ = lab.authorize(method="plain", state="p")
    assert query["error"] == "invalid_request" and query["state"] == "p"


def test_a_resource_this_server_does_not_serve_is_refused(lab):
    query, _ = lab.authorize(resource="http://127.0.0.1:1/elsewhere", state="r")
    assert query["error"] == "invalid_target" and query["state"] == "r"


def test_an_unregistered_redirect_uri_gets_no_redirect(lab):
    params = {"response_type": "code", "client_id": CLIENT, "redirect_uri": "http://evil.example/cb",
              "code_challenge": "x" * 43}
    response = lab.client.get(f"{lab.issuer}/authorize?{urlencode(params)}")
    assert response.status_code == 400 and "location" not in response.headers


# --- 6. the token request and the bearer call ------------------------------------------------

def test_the_token_response_is_not_cached_and_names_scope_and_lifetime(lab):
    query, verifier = lab.authorize()
    response = lab.token(grant_type="authorization_code", code=query["code"], redirect_uri=REDIRECT,
                         client_id=CLIENT, code_verifier=verifier, resource=lab.url)
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["token_type"] == "Bearer" and body["scope"] == "notes:read" and body["expires_in"] == 600
    assert body["access_token"] and body["refresh_token"]


def test_a_wrong_code_verifier_is_refused(lab):
    query, _ = lab.authorize()
    response = lab.token(grant_type="authorization_code", code=query["code"], redirect_uri=REDIRECT,
                         client_id=CLIENT, code_verifier="not-the-verifier-" + "x" * 30, resource=lab.url)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


def test_a_code_works_once(lab):
    query, verifier = lab.authorize()
    form = dict(grant_type="authorization_code", code=query["code"], redirect_uri=REDIRECT, client_id=CLIENT,
                code_verifier=verifier, resource=lab.url)
    assert lab.token(**form).status_code == 200
    assert lab.token(**form).json()["error"] == "invalid_grant"


def test_a_bearer_call_succeeds(lab, read_tokens):
    response = lab.post(request(1, "server/discover"), read_tokens["access_token"])
    assert response.status_code == 200
    check_result("server/discover", response.json())


def test_a_read_tool_works_with_the_read_scope(lab, read_tokens):
    frame = tool_call(2, "search_notes", {"query": "sleep"})
    response = lab.post(frame, read_tokens["access_token"])
    assert response.status_code == 200


def test_an_unknown_token_is_refused_with_invalid_token(lab):
    response = lab.post(request(1, "server/discover"), "made-up")
    assert response.status_code == 401
    params = challenge_params(response.headers["www-authenticate"])
    assert params["error"] == "invalid_token" and params["scope"] == "notes:read"


# --- 7. step-up, refresh, expiry ---------------------------------------------------------------

def test_a_write_tool_with_a_read_token_gets_403_insufficient_scope(lab, read_tokens):
    response = lab.post(tool_call(3, "create_note", {"title": "t", "body": "b"}), read_tokens["access_token"])
    assert response.status_code == 403
    params = challenge_params(response.headers["www-authenticate"])
    assert params["error"] == "insufficient_scope" and params["scope"] == "notes:write"
    assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")


def test_step_up_with_the_union_keeps_reads_and_allows_writes(lab):
    tokens = lab.tokens_for("notes:read notes:write")
    created = lab.post(tool_call(4, "create_note", {"title": "Step-up", "body": "written"}), tokens["access_token"],
                       Mcp_Name="create_note")
    assert created.status_code == 200
    assert lab.post(request(5, "server/discover"), tokens["access_token"]).status_code == 200


def test_step_up_that_drops_read_loses_reads(lab):
    tokens = lab.tokens_for("notes:write")
    response = lab.post(tool_call(6, "search_notes", {"query": "sleep"}), tokens["access_token"])
    assert response.status_code == 403
    assert challenge_params(response.headers["www-authenticate"])["scope"] == "notes:read"


def test_refresh_rotates_both_tokens(lab):
    tokens = lab.tokens_for()
    response = lab.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=CLIENT,
                         resource=lab.url)
    assert response.status_code == 200
    fresh = response.json()
    assert fresh["access_token"] != tokens["access_token"] and fresh["refresh_token"] != tokens["refresh_token"]
    assert lab.post(request(1, "server/discover"), fresh["access_token"]).status_code == 200
    again = lab.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=CLIENT)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_refresh_cannot_widen_the_scope(lab):
    tokens = lab.tokens_for()
    response = lab.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=CLIENT,
                         scope="notes:read notes:write")
    assert response.status_code == 400 and response.json()["error"] == "invalid_scope"


def test_a_revoked_token_is_refused(lab):
    tokens = lab.tokens_for()
    # SDK 2.3.0's revocation form requires a client_secret field even from a public client: send it empty.
    form = {"token": tokens["access_token"], "client_id": CLIENT, "client_secret": ""}
    assert lab.client.post(f"{lab.issuer}/revoke", data=form).status_code == 200
    response = lab.post(request(1, "server/discover"), tokens["access_token"])
    assert response.status_code == 401 and "revoked" in response.json()["error_description"]


def test_an_expired_token_is_refused_and_refresh_renews_it():
    lab = AuthLab("--token-lifetime", "1")
    try:
        tokens = lab.tokens_for()
        time.sleep(2.2)
        response = lab.post(request(1, "server/discover"), tokens["access_token"])
        assert response.status_code == 401
        assert challenge_params(response.headers["www-authenticate"])["error_description"] == "the token has expired"
        fresh = lab.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=CLIENT).json()
        assert lab.post(request(2, "server/discover"), fresh["access_token"]).status_code == 200
    finally:
        lab.stop()


# --- 8. what goes wrong --------------------------------------------------------------------------

def test_a_token_for_another_audience_is_refused(lab):
    archive = f"{lab.issuer}/archive"
    tokens = lab.tokens_for(resource=archive)
    response = lab.post(request(1, "server/discover"), tokens["access_token"])
    assert response.status_code == 401
    assert archive in challenge_params(response.headers["www-authenticate"])["error_description"]
    assert lab.client.get(archive, headers={"Authorization": f"Bearer {tokens['access_token']}"}).status_code == 200


def test_a_token_without_resource_is_refused_by_the_mcp_server(lab):
    tokens = lab.tokens_for(resource=None)
    assert lab.post(request(1, "server/discover"), tokens["access_token"]).status_code == 401


def test_an_mcp_token_passed_through_to_the_upstream_api_is_refused(lab, read_tokens):
    response = lab.client.get(f"{lab.issuer}/archive", headers={"Authorization": f"Bearer {read_tokens['access_token']}"})
    assert response.status_code == 401 and response.json()["error"] == "invalid_token"
    metadata = lab.client.get(challenge_params(response.headers["www-authenticate"])["resource_metadata"])
    assert metadata.json()["resource"] == f"{lab.issuer}/archive"


def test_nothing_is_left_on_disk_outside_the_temporary_folder(tmp_path):
    lab = AuthLab("--notes", str(tmp_path))
    try:
        lab.tokens_for()
    finally:
        lab.stop()
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".md"] * len(list(tmp_path.iterdir()))


def test_help_shows_the_auth_mode():
    shown = subprocess.run([sys.executable, "-m", "labserver", "--help"], capture_output=True, text=True, timeout=60)
    assert "--auth" in shown.stdout and "authorization server" in shown.stdout and "--token-lifetime" in shown.stdout


# --- refresh-token reuse and Client ID Metadata Documents the lab fetches -----------------------

def test_a_reused_refresh_token_revokes_its_whole_grant_and_only_that_one(lab):
    stolen, other = lab.tokens_for(), lab.tokens_for()
    renewed = lab.token(grant_type="refresh_token", refresh_token=stolen["refresh_token"], client_id=CLIENT,
                        resource=lab.url).json()
    replay = lab.token(grant_type="refresh_token", refresh_token=stolen["refresh_token"], client_id=CLIENT)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    after = lab.token(grant_type="refresh_token", refresh_token=renewed["refresh_token"], client_id=CLIENT)
    assert after.status_code == 400 and after.json()["error"] == "invalid_grant"
    assert lab.post(request(1, "server/discover"), renewed["access_token"]).status_code == 401
    assert lab.post(request(2, "server/discover"), other["access_token"]).status_code == 200


@pytest.fixture()
def documents():
    from mcpwire.oauth import ClientDocumentHost

    host = ClientDocumentHost()
    yield host
    host.close()


def document_for(host, path, cache_control=None, **fields):
    url = host.url + path
    return host.serve(path, {"client_id": url, "client_name": "test client", "redirect_uris": [REDIRECT], **fields},
                      cache_control)


def test_a_metadata_document_client_gets_tokens_and_is_fetched_again_without_cache_headers(lab, documents):
    client_id = document_for(documents, "/plain.json")
    query, verifier = lab.authorize(client_id=client_id)
    response = lab.token(grant_type="authorization_code", code=query["code"], redirect_uri=REDIRECT,
                         client_id=client_id, code_verifier=verifier, resource=lab.url)
    assert response.status_code == 200 and documents.fetches == ["/plain.json", "/plain.json"]


def test_a_metadata_document_is_kept_as_long_as_its_max_age_allows(lab, documents):
    client_id = document_for(documents, "/kept.json", "public, max-age=300")
    lab.authorize(client_id=client_id)
    lab.authorize(client_id=client_id)
    assert documents.fetches == ["/kept.json"]


@pytest.mark.parametrize(("path", "fields"), [
    ("/copy.json", {"client_id": "http://127.0.0.1:1/original.json"}),
    ("/nameless.json", {"client_name": ""}),
    ("/no-redirects.json", {"redirect_uris": []}),
    ("/secret.json", {"token_endpoint_auth_method": "client_secret_basic"}),
])
def test_a_metadata_document_that_fails_a_check_is_refused_without_redirect(lab, documents, path, fields):
    client_id = document_for(documents, path, **fields)
    response, _ = lab.authorize(client_id=client_id)
    assert response.status_code == 400 and "location" not in response.headers and documents.fetches == [path]


def test_a_redirect_uri_the_document_does_not_list_is_refused(lab, documents):
    client_id = document_for(documents, "/listed.json", redirect_uris=["http://127.0.0.1/other"])
    response, _ = lab.authorize(client_id=client_id)
    assert response.status_code == 400 and "not registered" in response.json()["error_description"]

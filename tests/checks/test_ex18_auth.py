"""Exercise 18's checks against the stub, the solution, right answers written differently, and the typical mistakes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from urllib.parse import parse_qs, parse_qsl, quote, quote_plus, unquote, urlencode, urlsplit

import httpx
import pytest

import checks
from mcpwire import HttpWire

CLIENT_ID, REDIRECT_URI = "notes-notebook", "http://127.0.0.1/callback"


@pytest.fixture(scope="module")
def auth_lab():
    with HttpWire.labserver("--auth") as wire:
        yield wire


def stub(*args):
    raise NotImplementedError("your code here")


def challenge_of(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def request_url(metadata, resource_, scope_, verifier_, state_, **changes):
    """The right URL; `changes` replace fields (None drops one) to make the typical mistakes."""
    query = {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI,
             "code_challenge": challenge_of(verifier_), "code_challenge_method": "S256", "state": state_,
             "scope": scope_, "resource": resource_, **changes}
    return f"{metadata['authorization_endpoint']}?{urlencode({k: v for k, v in query.items() if v is not None})}"


def request_url_by_hand(metadata, resource, scope, verifier, state):
    # Right, written differently: hexdigest turned back into bytes, percent-encoding by hand, fields in another order.
    raw = bytes.fromhex(hashlib.sha256(verifier.encode()).hexdigest())
    code_challenge = base64.b64encode(raw).decode().replace("+", "-").replace("/", "_").strip("=")
    pairs = [("resource", resource), ("scope", scope), ("state", state), ("code_challenge_method", "S256"),
             ("code_challenge", code_challenge), ("redirect_uri", REDIRECT_URI), ("client_id", CLIENT_ID),
             ("response_type", "code")]
    return metadata["authorization_endpoint"] + "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in pairs)


def request_url_with_httpx(metadata, resource, scope, verifier, state):
    # Right, written differently: httpx builds the query from a dict (a space as '+').
    return str(httpx.URL(metadata["authorization_endpoint"], params={
        "response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "state": state, "scope": scope,
        "code_challenge": challenge_of(verifier), "code_challenge_method": "S256", "resource": resource}))


def request_url_quoted_with_slashes(metadata, resource, scope, verifier, state):
    # Right, written differently: quote()'s default keeps '/', and quote_plus for the scope; both decode the same.
    pairs = {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": quote(REDIRECT_URI),
             "code_challenge": challenge_of(verifier), "code_challenge_method": "S256", "state": quote(state),
             "scope": quote_plus(scope), "resource": quote(resource)}
    return metadata["authorization_endpoint"] + "?" + "&".join(f"{k}={v}" for k, v in pairs.items())


def request_url_by_f_string(metadata, resource, scope, verifier, state):
    endpoint = metadata["authorization_endpoint"]
    return (f"{endpoint}?response_type=code&client_id={CLIENT_ID}&code_challenge={challenge_of(verifier)}"
            f"&code_challenge_method=S256&state={state}&scope={scope}&resource={resource}&redirect_uri={REDIRECT_URI}")


def request_url_encoding_only_the_scope(metadata, resource, scope, verifier, state):
    endpoint = metadata["authorization_endpoint"]
    return (f"{endpoint}?response_type=code&client_id={CLIENT_ID}&redirect_uri={REDIRECT_URI}&state={state}"
            f"&code_challenge={challenge_of(verifier)}&code_challenge_method=S256&scope={quote(scope)}"
            f"&resource={resource}")


def request_url_keeping_colons_and_slashes(metadata, resource, scope, verifier, state):
    query = {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "state": state,
             "code_challenge": challenge_of(verifier), "code_challenge_method": "S256", "scope": scope,
             "resource": resource}
    return metadata["authorization_endpoint"] + "?" + urlencode(query, safe=":/")


def request_url_encoded_twice(metadata, resource, scope, verifier, state):
    quoted = {"redirect_uri": quote(REDIRECT_URI, safe=""), "state": quote(state, safe=""), "scope": quote(scope, safe=""),
              "resource": quote(resource, safe="")}
    return request_url(metadata, resource, scope, verifier, state, **quoted)


def request_url_with_the_state_unencoded(metadata, resource, scope, verifier, state):
    return request_url(metadata, resource, scope, verifier, "STATE").replace("STATE", state)


# --- task 1 -------------------------------------------------------------------------------------

@pytest.mark.parametrize("build", [None, stub])
def test_request_stub_is_not_done(verdict, auth_lab, build):
    assert verdict(checks.check_authorization_request, build, auth_lab).startswith("not done yet")


def request_url_with_an_extra_parameter_and_a_trailing_ampersand(metadata, resource, scope, verifier, state):
    # Right: a server ignores a parameter it does not know (RFC 6749 section 3.1), and an empty piece is no parameter.
    return request_url(metadata, resource, scope, verifier, state) + "&prompt=consent&"


@pytest.mark.parametrize("build", [request_url, request_url_by_hand, request_url_with_httpx,
                                   request_url_quoted_with_slashes,
                                   request_url_with_an_extra_parameter_and_a_trailing_ampersand])
def test_request_right_answers_pass(verdict, auth_lab, build):
    out = verdict(checks.check_authorization_request, build, auth_lab)
    assert out.startswith("✓") and "form-encoded" in out, out


@pytest.mark.parametrize(("build", "phrases"), [
    # Every value as it is: the lab still gives a code for 'notes:read', the raw query is what is wrong.
    pytest.param(request_url_by_f_string, ("state=return=/notes ('=' as it is)",
                                           "which reads back as 'return=/notes': the '&' inside the value ended it",
                                           "appendix B", "an f-string encodes none"), id="f-string"),
    pytest.param(request_url_encoding_only_the_scope, ("redirect_uri=http://127.0.0.1/callback ('://' as it is)",),
                 id="only-the-scope-encoded"),
    pytest.param(request_url_keeping_colons_and_slashes, ("redirect_uri=http://127.0.0.1/callback ('://' as it is)",),
                 id="urlencode-safe-colon-slash"),
    pytest.param(request_url_with_the_state_unencoded, ("state=return=/notes", "the '&' inside the value ended it"),
                 id="state-unencoded"),
])
def test_request_without_form_encoding_is_named(verdict, auth_lab, build, phrases):
    out = verdict(checks.check_authorization_request, build, auth_lab)
    assert out.startswith("✗ the query is not form-encoded: given the scope 'notes:read notes:write'"), out
    assert all(phrase in out for phrase in phrases), out


def test_request_plain_method_is_named(verdict, auth_lab):
    def plain(metadata, resource, scope, verifier, state):
        return request_url(metadata, resource, scope, verifier, state, code_challenge=verifier,
                           code_challenge_method="plain")

    out = verdict(checks.check_authorization_request, plain, auth_lab)
    assert out.startswith("✗ wrong challenge method: code_challenge_method is 'plain'")
    assert "error=invalid_request" in out


def test_request_padded_challenge_is_named(verdict, auth_lab):
    def padded(metadata, resource, scope, verifier, state):
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode()
        return request_url(metadata, resource, scope, verifier, state, code_challenge=challenge)

    out = verdict(checks.check_authorization_request, padded, auth_lab)
    assert "✗ wrong challenge: code_challenge is not BASE64URL" in out


@pytest.mark.parametrize("encode", [
    # standard base64: '+' and '/' where base64url has '-' and '_' (the check's verifier always hashes to both)
    lambda digest: base64.b64encode(digest).rstrip(b"=").decode(),
    lambda digest: digest.hex(),
])
def test_request_challenge_in_another_encoding_is_named(verdict, auth_lab, encode):
    def other(metadata, resource, scope, verifier, state):
        challenge = encode(hashlib.sha256(verifier.encode()).digest())
        return request_url(metadata, resource, scope, verifier, state, code_challenge=challenge)

    assert verdict(checks.check_authorization_request, other, auth_lab).startswith("✗ wrong challenge: code_challenge")


def test_request_without_the_method_is_named_though_the_lab_gives_a_code(verdict, auth_lab):
    def no_method(metadata, resource, scope, verifier, state):
        return request_url(metadata, resource, scope, verifier, state, code_challenge_method=None)

    out = verdict(checks.check_authorization_request, no_method, auth_lab)
    assert out.startswith("✗ no code_challenge_method") and "SDK 2.3.0 assumes S256" in out


def test_request_missing_resource_shows_the_refused_token(verdict, auth_lab):
    def no_resource(metadata, resource, scope, verifier, state):
        return request_url(metadata, resource, scope, verifier, state, resource=None)

    out = verdict(checks.check_authorization_request, no_resource, auth_lab)
    assert out.startswith("✗ missing resource") and "HTTP 401" in out and "issued for no resource" in out


def test_request_naming_the_issuer_as_resource_is_named(verdict, auth_lab):
    def issuer_as_resource(metadata, resource, scope, verifier, state):
        return request_url(metadata, resource, scope, verifier, state, resource=metadata["issuer"])

    out = verdict(checks.check_authorization_request, issuer_as_resource, auth_lab)
    assert out.startswith("✗ wrong resource: the request names 'http://127.0.0.1:") and "error=invalid_target" in out


def test_request_asking_for_every_scope_is_named(verdict, auth_lab):
    def every_scope(metadata, resource, scope, verifier, state):
        return request_url(metadata, resource, "notes:read notes:write", verifier, state)

    out = verdict(checks.check_authorization_request, every_scope, auth_lab)
    assert out.startswith("✗ the request asks for scope 'notes:read notes:write', not the scope you were given")


def test_request_without_state_is_named(verdict, auth_lab):
    def no_state(metadata, resource, scope, verifier, state):
        return request_url(metadata, resource, scope, verifier, state, state=None)

    assert "✗ the request does not carry the state" in verdict(checks.check_authorization_request, no_state, auth_lab)


def test_request_without_the_redirect_uri_shows_the_refused_token_request(verdict, auth_lab):
    def no_redirect(metadata, resource, scope, verifier, state):
        return request_url(metadata, resource, scope, verifier, state, redirect_uri=None)

    out = verdict(checks.check_authorization_request, no_redirect, auth_lab)
    assert out.startswith("✗ no redirect_uri") and "redirect_uri did not match" in out, out


def test_request_with_a_trailing_slash_on_the_resource_says_the_lab_accepts_it(verdict, auth_lab):
    def slashed(metadata, resource, scope, verifier, state):
        return request_url(metadata, resource + "/", scope, verifier, state)

    out = verdict(checks.check_authorization_request, slashed, auth_lab)
    assert out.startswith("✗ wrong resource: the request names 'http://127.0.0.1:") and "HTTP 200: None" not in out, out
    assert "accepts it" in out and "a stricter server may refuse" in out, out


def test_request_with_the_scope_written_in_is_told_it_ignored_the_argument(verdict, auth_lab):
    def read_scope_only(metadata, resource, scope, verifier, state):
        return request_url(metadata, resource, "notes:read", verifier, state)

    out = verdict(checks.check_authorization_request, read_scope_only, auth_lab)
    assert out.startswith("✗ given the scope 'notes:read notes:write', the request asks for scope 'notes:read'"), out
    assert "not form-encoded" not in out, out


def test_request_encoded_twice_is_named_by_what_the_server_reads(verdict, auth_lab):
    out = verdict(checks.check_authorization_request, request_url_encoded_twice, auth_lab)
    assert out.startswith("✗ wrong redirect_uri: the request names 'http%3A%2F%2F127.0.0.1%2Fcallback'"), out


def test_request_that_raises_is_reported(verdict, auth_lab):
    def broken(metadata, *rest):
        return metadata["authorize_url"]

    assert verdict(checks.check_authorization_request, broken, auth_lab).startswith("✗ authorization_request should return")


# --- task 2 -------------------------------------------------------------------------------------

def accept(location, sent_state, issuer):
    answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    if answer.get("state") != sent_state or answer.get("iss") != issuer:
        raise ValueError("not our redirect")
    return answer["code"]


def accept_by_regex(location, sent_state, issuer):
    fields = {name: unquote(value) for name, value in re.findall(r"[?&]([^=&]+)=([^&]*)", location)}
    if (fields.get("iss"), fields.get("state")) != (issuer, sent_state) or not fields.get("code"):
        raise ValueError("refused")
    return fields["code"]


def accept_by_get(location, sent_state, issuer):
    answer = dict(parse_qs(urlsplit(location).query))
    if answer.get("state") != [sent_state] or answer.get("iss") != [issuer]:
        raise ValueError("not our redirect")
    return answer.get("code", [None])[0]


def accept_unchecked_state(location, sent_state, issuer):
    answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    if answer.get("iss") != issuer:
        raise ValueError("wrong issuer")
    return answer["code"]


def accept_when_iss_missing(location, sent_state, issuer):
    answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    if answer.get("state") != sent_state or answer.get("iss", issuer) != issuer:
        raise ValueError("refused")
    return answer["code"]


def accept_without_decoding(location, sent_state, issuer):
    # The lab sends iss percent-encoded (http%3A%2F%2F...): compared undecoded, the real redirect is refused.
    fields = dict(re.findall(r"[?&]([^=&]+)=([^&]*)", location))
    if (fields.get("iss"), fields.get("state")) != (issuer, sent_state):
        raise ValueError("refused")
    return fields["code"]


def accept_case_folding(location, sent_state, issuer):
    answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    if answer.get("state") != sent_state or answer.get("iss", "").lower() != issuer.lower():
        raise ValueError("refused")
    return answer["code"]


def accept_normalising(location, sent_state, issuer):
    answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    if answer.get("state") != sent_state or answer.get("iss", "").rstrip("/") != issuer.rstrip("/"):
        raise ValueError("refused")
    return answer["code"]


@pytest.mark.parametrize("function", [None, stub])
def test_redirect_stub_is_not_done(verdict, function):
    assert verdict(checks.check_accept_redirect, function).startswith("not done yet")


def accept_with_code(location, sent_state, issuer):
    answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    if answer.get("state") != sent_state or answer.get("iss") != issuer or "code" not in answer:
        raise ValueError("not our redirect")
    return answer["code"]


@pytest.mark.parametrize("function", [accept_with_code, accept_by_regex])
def test_redirect_right_answers_pass(verdict, function):
    assert verdict(checks.check_accept_redirect, function).startswith("✓")


@pytest.mark.parametrize(("function", "phrase"), [
    (accept_unchecked_state, "✗ unchecked state"),
    (accept_when_iss_missing, "✗ missing iss"),
    (accept_normalising, "✗ normalised iss"),
    (accept_case_folding, "✗ case-folded iss"),
    (accept_without_decoding, "✗ a good redirect should give its code"),
    (accept_by_get, "✗ error redirect: an error response (error=access_denied, no code) was not refused with ValueError (returned None)"),
    (accept, "✗ error redirect: an error response (error=access_denied, no code) was not refused with ValueError (raised KeyError"),
])
def test_redirect_mistakes_are_named(verdict, function, phrase):
    assert verdict(checks.check_accept_redirect, function).startswith(phrase)


def test_redirect_that_raises_on_a_good_one_is_reported(verdict):
    def always(location, sent_state, issuer):
        raise ValueError("no")

    assert verdict(checks.check_accept_redirect, always).startswith("✗ a good redirect should give its code")


# --- task 3 -------------------------------------------------------------------------------------

def form(code, verifier, resource):
    return {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI, "client_id": CLIENT_ID,
            "code_verifier": verifier, "resource": resource}


@pytest.mark.parametrize("function", [None, stub])
def test_token_stub_is_not_done(verdict, auth_lab, function):
    assert verdict(checks.check_token_request, function, auth_lab).startswith("not done yet")


def test_token_right_answer_passes(verdict, auth_lab):
    def in_another_order(code, verifier, resource):
        return dict(reversed(list(form(code, verifier, resource).items())))

    assert verdict(checks.check_token_request, form, auth_lab).startswith("✓")
    assert verdict(checks.check_token_request, in_another_order, auth_lab).startswith("✓")


def test_token_without_verifier_shows_the_refusal(verdict, auth_lab):
    def no_verifier(code, verifier, resource):
        return {k: v for k, v in form(code, verifier, resource).items() if k != "code_verifier"}

    out = verdict(checks.check_token_request, no_verifier, auth_lab)
    assert out.startswith("✗ the token endpoint refused the form: the form has no code_verifier") and "HTTP 400" in out


@pytest.mark.parametrize(("change", "phrase"), [
    ({"redirect_uri": "http://127.0.0.1/cb"}, "it refused redirect_uri 'http://127.0.0.1/cb'"),
    ({"client_id": None}, "the form has no client_id"),
    ({"grant_type": "authorization-code"}, "it refused grant_type 'authorization-code'"),
    ({"code_verifier": "a" * 43}, "it refused code_verifier 'aaaa"),
])
def test_token_refusal_names_the_field_the_server_named(verdict, auth_lab, change, phrase):
    def changed(code, verifier, resource):
        fields = {**form(code, verifier, resource), **change}
        return {k: v for k, v in fields.items() if v is not None}

    out = verdict(checks.check_token_request, changed, auth_lab)
    assert out.startswith(f"✗ the token endpoint refused the form: {phrase}"), out


def test_token_without_resource_is_named(verdict, auth_lab):
    def no_resource(code, verifier, resource):
        return {k: v for k, v in form(code, verifier, resource).items() if k != "resource"}

    assert verdict(checks.check_token_request, no_resource, auth_lab).startswith("✗ missing resource in the token request")


@pytest.mark.parametrize("credential", [{"client_secret": "notes-notebook-secret"}, {"client_secret": ""},
                                        {"client_assertion": "e30.e30.", "client_assertion_type":
                                         "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}])
def test_token_with_an_invented_credential_is_refused(verdict, auth_lab, credential):
    def with_a_secret(code, verifier, resource):
        return {**form(code, verifier, resource), **credential}

    out = verdict(checks.check_token_request, with_a_secret, auth_lab)
    assert out.startswith("✗ the form sends client_") and "public client" in out and "PKCE code_verifier alone" in out


def test_token_with_another_resource_is_named(verdict, auth_lab):
    def metadata_url_as_resource(code, verifier, resource):
        return {**form(code, verifier, resource), "resource": resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")}

    out = verdict(checks.check_token_request, metadata_url_as_resource, auth_lab)
    assert out.startswith("✗ resource is 'http://127.0.0.1:") and "not the MCP server in the token request" in out


# --- task 4 -------------------------------------------------------------------------------------

def union(granted, header):
    return list(dict.fromkeys([*granted, *re.search(r'scope="([^"]*)"', header).group(1).split()]))


def read_and_the_challenged(granted, header):
    return list(dict.fromkeys(["notes:read", *re.search(r'scope="([^"]*)"', header).group(1).split()]))


def granted_plus_challenged(granted, header):
    return [*granted, *re.search(r'scope="([^"]*)"', header).group(1).split()]


def union_as_set(granted, header):
    from mcpwire.oauth import parse_challenge
    return sorted(set(granted) | set(parse_challenge(header)["scope"].split()))


def dropped(granted, header):
    return re.search(r'scope="([^"]*)"', header).group(1).split()


@pytest.mark.parametrize("function", [None, stub])
def test_step_up_stub_is_not_done(verdict, auth_lab, function):
    assert verdict(checks.check_step_up, function, auth_lab).startswith("not done yet")


@pytest.mark.parametrize("function", [union, union_as_set])
def test_step_up_right_answers_pass(verdict, auth_lab, function):
    assert verdict(checks.check_step_up, function, auth_lab).startswith("✓")


def test_step_up_that_drops_read_is_named_with_the_servers_answer(verdict, auth_lab):
    out = verdict(checks.check_step_up, dropped, auth_lab)
    assert out.startswith("✗ scope dropped on step-up") and "HTTP 403" in out and "needs the notes:read scope" in out


def test_step_up_that_keeps_only_the_old_scopes_is_named(verdict, auth_lab):
    out = verdict(checks.check_step_up, lambda granted, header: granted, auth_lab)
    assert out.startswith("✗ the challenged scope is missing")


def test_step_up_that_always_asks_for_every_scope_is_named(verdict, auth_lab):
    out = verdict(checks.check_step_up, lambda granted, header: ["notes:read", "notes:write"], auth_lab)
    assert out.startswith("✗ with no scopes yet and a 401 that names notes:read, you would ask for")


def test_step_up_returning_the_raw_string_is_named(verdict, auth_lab):
    out = verdict(checks.check_step_up, lambda granted, header: ["notes:read notes:write"], auth_lab)
    assert out.startswith("✗ each scope should be one word")


def test_step_up_that_ignores_what_was_granted_is_named(verdict, auth_lab):
    out = verdict(checks.check_step_up, read_and_the_challenged, auth_lab)
    assert out.startswith("✗ with notes:write granted and a 401 that names notes:read, you would ask for"), out


def test_step_up_taking_the_scope_parameter_as_one_item_is_named(verdict, auth_lab):
    def one_item(granted, header):
        return list(dict.fromkeys([*granted, re.search(r'scope="([^"]*)"', header).group(1)]))

    out = verdict(checks.check_step_up, one_item, auth_lab)
    assert out.startswith("✗ with no scopes yet and a 403 whose scope parameter names two scopes, "
                          "'notes:read notes:write', you would ask for ['notes:read notes:write']"), out
    assert "split it on spaces" in out


def test_step_up_with_a_greedy_pattern_is_refused_without_a_crash(verdict, auth_lab):
    def greedy(granted, header):
        return list(dict.fromkeys([*granted, *re.search(r'scope="(.*)"', header).group(1).split()]))

    out = verdict(checks.check_step_up, greedy, auth_lab)
    assert out.startswith("✗ you would ask for ['notes:read', 'notes:write\",'"), out
    assert "the authorization server refused 'notes:write\",'" in out and "error=invalid_scope" in out, out
    assert "read past its closing quote" in out, out


def test_step_up_cutting_the_header_at_scope_is_refused_with_the_pieces_named(verdict, auth_lab):
    def cut_at_scope(granted, header):
        return list(dict.fromkeys([*granted, *header.split("scope=")[1].strip('"').split()]))

    out = verdict(checks.check_step_up, cut_at_scope, auth_lab)
    assert out.startswith("✗ you would ask for ['notes:read', 'notes:write\",'"), out
    assert "read past its closing quote" in out, out


def test_step_up_returning_the_scopes_joined_is_told_to_return_the_list(verdict, auth_lab):
    out = verdict(checks.check_step_up, lambda granted, header: " ".join(union(granted, header)), auth_lab)
    assert out.startswith("✗ step_up_scopes returned the text 'notes:read notes:write'; return a list"), out
    assert "joined them again" in out and "split it on spaces" not in out, out


def test_step_up_that_repeats_a_scope_is_named(verdict, auth_lab):
    out = verdict(checks.check_step_up, granted_plus_challenged, auth_lab)
    assert out.startswith("✗ a scope appears twice"), out


# --- answers a blind learner run found the checks passed or blamed on the wrong cause ------------------------------

def request_url_from_the_issuer(metadata, resource, scope, verifier, state):
    # The lab's endpoint happens to be issuer + '/authorize'; RFC 8414 lets a server name any URL.
    return request_url({"authorization_endpoint": f"{metadata['issuer']}/authorize"}, resource, scope, verifier, state)


def request_url_by_urlsplit(metadata, resource, scope, verifier, state):
    # Right, written differently: the endpoint's parts with the query put in.
    query = urlsplit(request_url(metadata, resource, scope, verifier, state)).query
    return urlsplit(metadata["authorization_endpoint"])._replace(query=query).geturl()


def test_request_built_from_the_issuer_is_named(verdict, auth_lab):
    out = verdict(checks.check_authorization_request, request_url_from_the_issuer, auth_lab)
    assert out.startswith("✗ given metadata whose authorization_endpoint is 'http://127.0.0.1:"), out
    assert "/oauth2/v1/authorize'" in out and "cannot be built from the issuer" in out, out


def test_request_with_the_endpoint_split_and_joined_passes(verdict, auth_lab):
    assert verdict(checks.check_authorization_request, request_url_by_urlsplit, auth_lab).startswith("✓")


def accepting(state_matches, *, blank=False, refusal=ValueError):
    """A redirect check that compares state with state_matches(got, sent) and refuses with `refusal`."""
    def accept_redirect(location, sent_state, issuer):
        answer = dict(parse_qsl(urlsplit(location).query, keep_blank_values=blank))
        if ("error" in answer or not state_matches(answer.get("state", ""), sent_state)
                or answer.get("iss") != issuer or "code" not in answer):
            raise refusal("refused")
        return answer["code"]
    return accept_redirect


def accept_by_keys(location, sent_state, issuer):
    # Refuses by looking the keys up: a missing one raises KeyError.
    answer = dict(parse_qsl(urlsplit(location).query))
    if answer["state"] != sent_state or answer["iss"] != issuer:
        raise ValueError("refused")
    return answer["code"]


def accept_in_constant_time(location, sent_state, issuer):
    # Right, written differently: blank values kept, compared in constant time, an empty code refused by hand.
    answer = dict(parse_qsl(urlsplit(location).query, keep_blank_values=True))
    if not hmac.compare_digest(answer.get("state", ""), sent_state) or answer.get("iss") != issuer:
        raise ValueError("not our redirect")
    if not answer.get("code"):
        raise ValueError(f"no code: {answer.get('error', 'empty')}")
    return answer["code"]


@pytest.mark.parametrize(("function", "phrases"), [
    pytest.param(accepting(lambda got, sent: sent in got), ("✗ longer state", "only begins with the one you sent",
                                                             "no 'in', no startswith"), id="state-contained"),
    pytest.param(accepting(lambda got, sent: got.startswith(sent)), ("✗ longer state",), id="state-prefix"),
    pytest.param(accepting(lambda got, sent: got.lower() == sent.lower()), ("✗ case-folded state",),
                 id="state-case-folded"),
    pytest.param(accepting(lambda got, sent: got.strip() == sent.strip()), ("✗ padded state",), id="state-stripped"),
    pytest.param(accepting(lambda got, sent: got == sent, blank=True), ("✗ empty code", "an empty code is no code",
                                                                        "section 4.1.2"), id="empty-code-accepted"),
    pytest.param(accepting(lambda got, sent: got == sent, refusal=Exception),
                 ("✗ unchecked state: the redirect was refused, but with Exception: refused, not ValueError",),
                 id="refused-with-exception"),
    pytest.param(accepting(lambda got, sent: got == sent, refusal=AssertionError),
                 ("✗ unchecked state: the redirect was refused, but with AssertionError: refused, not ValueError",),
                 id="refused-with-assertion-error"),
    pytest.param(accept_by_keys, ("✗ missing iss: the redirect was refused, but with KeyError: 'iss', not ValueError",
                                  "refuses by accident"), id="refused-with-key-error"),
])
def test_redirect_lax_or_wrongly_raised_refusals_are_named(verdict, function, phrases):
    out = verdict(checks.check_accept_redirect, function)
    assert all(phrase in out for phrase in phrases) and out.startswith(phrases[0][:12]), out
    assert "was accepted (raised" not in out, out


def test_redirect_compared_in_constant_time_passes(verdict):
    assert verdict(checks.check_accept_redirect, accept_in_constant_time).startswith("✓")


def test_token_with_another_grant_type_is_told_the_grant_type(verdict, auth_lab):
    def refresh_grant(code, verifier, resource):
        return {**form(code, verifier, resource), "grant_type": "refresh_token"}

    out = verdict(checks.check_token_request, refresh_grant, auth_lab)
    assert out.startswith("✗ the token endpoint refused the form: it refused grant_type 'refresh_token'"), out
    assert "'authorization_code'" in out and "names no field" not in out, out


def test_step_up_reading_scopes_from_the_whole_header_is_named(verdict, auth_lab):
    def every_scope_word(granted, header):
        return list(dict.fromkeys([*granted, *re.findall(r"notes:\w+", header)]))

    out = verdict(checks.check_step_up, every_scope_word, auth_lab)
    assert out.startswith("✗ with no scopes yet and the 403 whose scope parameter names notes:write"), out
    assert "notes:read appears only in its error_description" in out and "RFC 6750" in out, out


def test_step_up_by_the_challenge_parameters_passes(verdict, auth_lab):
    def by_parameters(granted, header):
        parameters = dict(re.findall(r'(\w+)="([^"]*)"', header))
        return [*granted, *(scope for scope in parameters.get("scope", "").split() if scope not in granted)]

    assert verdict(checks.check_step_up, by_parameters, auth_lab).startswith("✓")

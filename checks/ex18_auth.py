"""Checks for exercise 18: the authorization code flow from a 401, by hand, and a step-up.

Each check runs the learner's function, then carries its result through the real lab
(`python -m labserver --http --auth`, started by the exercise as an HttpWire) and reports
what the authorization server and the MCP server answered.
"""

import base64
import hashlib
import re
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx

from mcpwire import frames
from mcpwire.oauth import parse_challenge
from .attempt import attempt, missing
from .verdict import failed, not_done, passed, short, shown

CLIENT_ID = "notes-notebook"
REDIRECT_URI = "http://127.0.0.1/callback"
SEARCH = frames.request("tools/call", {"name": "search_notes", "arguments": {"query": "sleep"}}, id=1)
PARAMETERS = ("response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "scope",
              "resource")
# Values that are not valid in a query as they are: a space between two scopes, and a state that carries a small
# query of its own (RFC 6749 allows any printable ASCII in state), so that an unencoded '&' or '=' shows.
TWO_SCOPES = "notes:read notes:write"
STATE_WITH_A_QUERY = "return=/notes&tab=2"
FORM_FIELDS = ("code_verifier", "redirect_uri", "grant_type", "client_id", "resource", "code")


def s256(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode("ascii")


def telling_verifier():
    """A fresh verifier whose challenge has both '-' and '_': plain base64 ('+', '/') cannot pass by luck."""
    while True:
        verifier = secrets.token_urlsafe(48)
        if "-" in s256(verifier) and "_" in s256(verifier):
            return verifier


class _Lab:
    """The protected lab as the checks see it: its metadata, and HTTP without following redirects."""

    def __init__(self, wire):
        self.wire = wire
        self.web = httpx.Client(follow_redirects=False, timeout=10)
        challenge = parse_challenge(self.post(SEARCH).headers.get("www-authenticate")) or {}
        self.resource_metadata = self.web.get(challenge["resource_metadata"]).json()
        issuer = self.resource_metadata["authorization_servers"][0]
        self.metadata = self.web.get(f"{issuer}/.well-known/oauth-authorization-server").json()

    def post(self, frame, token=None):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   **self.wire.headers_for(frame)}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.web.post(self.wire.url, content=frames.dumps(frame), headers=headers)

    def approve(self, url):
        """Open an authorization URL and approve as ada: the redirect's query, or the refusal as text."""
        first = self.web.get(url)
        location = first.headers.get("location", "")
        if first.status_code == 302 and "/consent?" in location:
            location = self.web.get(location + "&user=ada&consent=approve").headers.get("location", "")
        elif first.status_code != 302:
            return None, f"HTTP {first.status_code} {short(first.text)}"
        answer = dict(parse_qsl(urlsplit(location).query))
        if "error" in answer:
            return None, f"a redirect with error={answer['error']} ({answer.get('error_description', '')})"
        return answer, None

    def token(self, form):
        return self.web.post(self.metadata["token_endpoint"], data=form)

    def tokens_for(self, scopes):
        """(the token endpoint's JSON, None) for these scopes, or (None, why the authorization server refused)."""
        verifier, state = secrets.token_urlsafe(48), secrets.token_urlsafe(16)
        query = {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "state": state,
                 "code_challenge": s256(verifier), "code_challenge_method": "S256", "scope": " ".join(scopes),
                 "resource": self.wire.url}
        answer, refusal = self.approve(f"{self.metadata['authorization_endpoint']}?{urlencode(query)}")
        if answer is None or "code" not in answer:
            return None, refusal or "a redirect without a code"
        return self.token({"grant_type": "authorization_code", "code": answer["code"], "redirect_uri": REDIRECT_URI,
                           "client_id": CLIENT_ID, "code_verifier": verifier, "resource": self.wire.url}).json(), None


def check_authorization_request(build, wire):
    """Task 1: `build(metadata, resource, scope, verifier, state)` returns the authorization URL."""
    if missing(build):
        not_done("write authorization_request(...)")
        return
    lab = _Lab(wire)
    verifier, state = telling_verifier(), secrets.token_urlsafe(16)
    outcome = attempt(build, lab.metadata, lab.wire.url, "notes:read", verifier, state)
    if outcome.not_done:
        not_done("authorization_request still raises NotImplementedError.")
        return
    if outcome.error is not None or not isinstance(outcome.value, str):
        failed(f"authorization_request should return the URL as a string; it gave {outcome.error_text or short(outcome.value)}")
        return
    url = outcome.value
    query = dict(parse_qsl(urlsplit(url).query))
    if not url.startswith(lab.metadata["authorization_endpoint"] + "?"):
        failed("the URL does not start with the authorization_endpoint from the server's metadata",
               hint="Read the endpoint from the metadata dict instead of building it.")
        return
    if not _endpoint_from_metadata(build, lab, verifier, state):
        return
    answer, refusal = lab.approve(url)
    method = query.get("code_challenge_method")
    if method is None and query.get("code_challenge") == s256(verifier):
        failed("no code_challenge_method: the request does not say the challenge is S256",
               server=refusal or "a code: SDK 2.3.0 assumes S256 when the method is missing, but RFC 7636 reads a "
                                 "missing method as plain, so another server would compare the verifier with the "
                                 "challenge as it is and refuse the token request",
               hint="MCP clients name the S256 method in the authorization request.")
        return
    if method != "S256":
        failed(f"wrong challenge method: code_challenge_method is {method!r}",
               server=refusal or "a code, which the token endpoint will refuse: the verifier does not hash to the challenge",
               hint="PKCE in MCP uses S256 whenever the client can.")
        return
    if query.get("code_challenge") != s256(verifier):
        failed("wrong challenge: code_challenge is not BASE64URL(SHA-256(verifier)) without padding",
               server=refusal or "a code, which the token endpoint will refuse: the verifier does not hash to the challenge",
               hint="Hash the verifier's ASCII bytes, base64url-encode (the '-' and '_' alphabet) the 32 bytes, drop the '='.")
        return
    if query.get("state") != state:
        failed("the request does not carry the state you were given",
               hint="state is what lets you recognise the redirect that answers this request.")
        return
    if query.get("redirect_uri") != REDIRECT_URI:
        said = refusal
        if answer is not None:
            # The lab falls back on the one redirect URI registered, so the code comes; the token request,
            # which must repeat the redirect URI, is where it breaks.
            reply = lab.token({"grant_type": "authorization_code", "code": answer["code"], "redirect_uri": REDIRECT_URI,
                               "client_id": CLIENT_ID, "code_verifier": verifier, "resource": lab.wire.url})
            said = f"a code, but the token request that sends redirect_uri {REDIRECT_URI} with it: HTTP " \
                   f"{reply.status_code} {short(reply.text)}"
        what = ("no redirect_uri: the request does not say where to send the code" if "redirect_uri" not in query
                else f"wrong redirect_uri: the request names {query['redirect_uri']!r}, not {REDIRECT_URI}")
        failed(what, server=said,
               hint="The authorization request names the redirect URI the client registered, and the token request "
                    "repeats it: the two must match.")
        return
    if query.get("resource") != lab.wire.url:
        token = None if answer is None else lab.token({
            "grant_type": "authorization_code", "code": answer["code"], "redirect_uri": REDIRECT_URI,
            "client_id": CLIENT_ID, "code_verifier": verifier, "resource": lab.wire.url}).json().get("access_token")
        refused = lab.post(SEARCH, token) if token else None
        if refused is None:
            said = refusal
        elif refused.status_code == 200:
            said = (f"HTTP 200: the lab's MCP server (SDK 2.3.0) accepts it, as it treats {query['resource']!r} and "
                    f"{lab.wire.url!r} alike; MCP asks for the canonical URI (no trailing slash, lowercase scheme and "
                    "host), and a stricter server may refuse a token issued for another form")
        else:
            said = f"HTTP {refused.status_code}: " \
                   f"{(parse_challenge(refused.headers.get('www-authenticate')) or {}).get('error_description')}"
        what = ("missing resource: the request names no resource" if "resource" not in query
                else f"wrong resource: the request names {query['resource']!r} instead of the MCP server")
        failed(what,
               server=f"the token it led to, at the MCP server: {said}",
               hint="MCP (after RFC 8707): resource is the canonical URI of the MCP server, the resource metadata's 'resource', "
                    "as it is: the resource argument you were given.")
        return
    if refusal is None and query.get("scope") != "notes:read":
        failed(f"the request asks for scope {query.get('scope')!r}, not the scope you were given ('notes:read')",
               server="a code for that scope", hint="Ask for the scope the challenge named, passed in as scope.")
        return
    if refusal is not None:
        failed("the authorization server did not give a code for notes:read", server=refusal or f"scope {query.get('scope')!r}",
               hint="Check response_type, client_id, redirect_uri and scope against the lesson's step 5.")
        return
    if not _form_encoded(build, lab, verifier):
        return
    passed("S256 challenge, state, scope and resource: the lab answered with a code; values that need encoding (two "
           "scopes, a URL, a state with '&' and '=') are form-encoded")


def _endpoint_from_metadata(build, lab, verifier, state):
    """Whether the URL follows the metadata's authorization_endpoint where it is not the issuer's /authorize.

    The lab's endpoint is issuer + '/authorize', so a URL built from the issuer reaches it; RFC 8414 (section 2) lets
    a server name any URL, so the check gives metadata that names another one.
    """
    elsewhere = f"{lab.metadata['issuer']}/oauth2/v1/authorize"
    outcome = attempt(build, {**lab.metadata, "authorization_endpoint": elsewhere}, lab.wire.url, "notes:read",
                      verifier, state)
    url = outcome.value if outcome.error is None and isinstance(outcome.value, str) else None
    if url is not None and url.startswith(elsewhere + "?"):
        return True
    failed(f"given metadata whose authorization_endpoint is {elsewhere!r}, authorization_request gave "
           f"{outcome.error_text or short(outcome.value)}: it does not start with that endpoint",
           hint="RFC 8414 lets an authorization server put its endpoint at any URL, so it cannot be built from the "
                "issuer: read metadata['authorization_endpoint'].")
    return False


def _form_encoded(build, lab, verifier):
    """Whether the URL built for two scopes and a state with a query in it keeps each value whole (RFC 6749 App. B).

    Judged on the URL's raw query, as the learner wrote it: httpx, a browser and the lab's server repair a space,
    and ':' and '/' read the same either way, so what the lab answers cannot tell an encoded URL from a bare one.
    """
    outcome = attempt(build, lab.metadata, lab.wire.url, TWO_SCOPES, verifier, STATE_WITH_A_QUERY)
    if outcome.error is not None or not isinstance(outcome.value, str):
        failed(f"given the scope {TWO_SCOPES!r} and the state {STATE_WITH_A_QUERY!r}, authorization_request gave "
               f"{outcome.error_text or short(outcome.value)}")
        return False
    raw = urlsplit(outcome.value).query
    wanted = {"scope": TWO_SCOPES, "state": STATE_WITH_A_QUERY, "resource": lab.wire.url, "redirect_uri": REDIRECT_URI}
    problems = {}  # parameter name -> what is wrong with it, in the order the URL has them
    for piece in raw.split("&"):
        name, _, value = piece.partition("=")
        if name in wanted and (" " in value or "://" in value or "=" in value):
            bare = [what for what, mark in (("a space", " "), ("'://'", "://"), ("'='", "=")) if mark in value]
            problems[name] = f"{name}={value} ({' and '.join(bare)} as it is)"
    # An extra parameter or a stray '&' is harmless (a server ignores what it does not know); a value cut short is not.
    decoded = dict(parse_qsl(raw))
    if "scope" not in problems and decoded.get("scope") != TWO_SCOPES:
        # Written whole, and still another scope: the argument was not used, whatever the encoding.
        failed(f"given the scope {TWO_SCOPES!r}, the request asks for scope {decoded.get('scope')!r}",
               hint="Put the scope argument in the query as it is given: a client asks for the scopes the "
                    "challenge named, which are not always notes:read.")
        return False
    for name, value in wanted.items():
        if decoded.get(name) != value:
            cut = "&" in value and value.startswith(str(decoded.get(name)))
            problems[name] = (problems.get(name, name) + f", which reads back as {decoded.get(name)!r}"
                              + (": the '&' inside the value ended it" if cut else f", not {value!r}"))
    problems = list(problems.values())
    if not problems:
        return True
    failed(f"the query is not form-encoded: given the scope {TWO_SCOPES!r} and the state {STATE_WITH_A_QUERY!r}, "
           f"your URL has {'; '.join(problems[:3])}",
           server="not asked: a browser or httpx percent-encodes a raw space before it sends the URL, so no server "
                  "sees what you wrote; an '&' or '=' inside a value still splits it into other parameters",
           hint="RFC 6749 (section 4.1.1 and appendix B) adds the parameters to the query in the "
                "application/x-www-form-urlencoded format: each value percent-encoded, a space as '+' or %20.",
           more="urllib.parse.urlencode(query) encodes every value of a dict; an f-string encodes none.")
    return False


def check_accept_redirect(accept, issuer="http://127.0.0.1:9999"):
    """Task 2: `accept(location, sent_state, issuer)` returns the code, or raises ValueError when the redirect is not ours."""
    if missing(accept):
        not_done("write accept_redirect(...)")
        return
    good = f"{REDIRECT_URI}?{urlencode({'code': 'abc', 'state': 's1', 'iss': issuer})}"  # encoded, as the lab sends it
    outcome = attempt(accept, good, "s1", issuer)
    if outcome.not_done:
        not_done("accept_redirect still raises NotImplementedError.")
        return
    if outcome.value != "abc":
        failed(f"a good redirect should give its code 'abc'; got {outcome.error_text or short(outcome.value)}",
               hint="Parse the query of the location with urllib.parse (it also decodes the %-escapes in iss) "
                    "and return the value of code.")
        return
    forged = [
        ("unchecked state", f"{REDIRECT_URI}?code=stolen&state=other&iss={issuer}",
         "a redirect whose state is not the one you sent was accepted"),
        ("unchecked iss", f"{REDIRECT_URI}?code=stolen&state=s1&iss=http://attacker.example",
         "a redirect from another issuer (a mix-up attack) was accepted"),
        ("missing iss", f"{REDIRECT_URI}?code=stolen&state=s1",
         "a redirect without iss was accepted, though the lab's metadata promises it"),
        ("normalised iss", f"{REDIRECT_URI}?code=stolen&state=s1&iss={issuer}/",
         "an iss that only matches after adding or removing a trailing slash was accepted"),
        ("case-folded iss", f"{REDIRECT_URI}?code=stolen&state=s1&iss={issuer.upper()}",
         "an iss that only matches after changing upper to lower case was accepted"),
        # state is compared whole, as it was sent: a test that finds it inside another value is no test.
        ("longer state", f"{REDIRECT_URI}?code=stolen&state=s1.forged&iss={issuer}",
         "a redirect whose state only begins with the one you sent was accepted"),
        ("case-folded state", f"{REDIRECT_URI}?code=stolen&state=S1&iss={issuer}",
         "a state that only matches after changing upper to lower case was accepted"),
        ("padded state", f"{REDIRECT_URI}?code=stolen&state=%20s1%20&iss={issuer}",
         "a state that only matches after stripping spaces was accepted"),
        # The user said no: state and iss are right, and there is no code to return.
        ("error redirect", f"{REDIRECT_URI}?{urlencode({'error': 'access_denied', 'state': 's1', 'iss': issuer})}",
         "an error response (error=access_denied, no code) was not refused with ValueError"),
        ("empty code", f"{REDIRECT_URI}?code=&state=s1&iss={issuer}",
         "a redirect whose code is empty was accepted, and an empty code is no code"),
    ]
    for name, location, problem in forged:
        outcome = attempt(accept, location, "s1", issuer)
        # The error redirect's own wording already says it was not refused with ValueError.
        if outcome.error is not None and not isinstance(outcome.error, ValueError) and name != "error redirect":
            failed(f"{name}: the redirect was refused, but with {outcome.error_text}, not ValueError",
                   hint="The caller catches ValueError to tell a refused redirect from a bug: raise ValueError for "
                        "every refusal."
                        + (" A KeyError from a missing key refuses by accident; look the key up with .get() and "
                           "compare." if isinstance(outcome.error, KeyError) else ""))
            return
        if not isinstance(outcome.error, ValueError):
            failed(f"{name}: {problem} ({'returned ' + shown(outcome.value) if outcome.error is None else 'raised ' + outcome.error_text})",
                   hint=("A redirect that carries error instead of code answers the request with a refusal: raise "
                         "ValueError for it too." if name == "error redirect" else
                         "code is required in a redirect that answers with success (RFC 6749, section 4.1.2): "
                         "refuse a missing or empty one with ValueError." if name == "empty code" else
                         "Compare state, then iss, with plain string equality (==) before returning the code: no "
                         "'in', no startswith, nothing changed first; raise ValueError otherwise."))
            return
    passed("the good redirect gives its code; a forged, longer, case-folded or padded state, a foreign, missing, "
           "normalised or case-folded iss, an empty code and an error response are refused")


def check_token_request(form_for, wire):
    """Task 3: `form_for(code, verifier, resource)` returns the token request's form fields."""
    if missing(form_for):
        not_done("write token_form(...)")
        return
    lab = _Lab(wire)
    verifier, state = secrets.token_urlsafe(48), secrets.token_urlsafe(16)
    query = {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "state": state,
             "code_challenge": s256(verifier), "code_challenge_method": "S256", "scope": "notes:read",
             "resource": lab.wire.url}
    answer, _ = lab.approve(f"{lab.metadata['authorization_endpoint']}?{urlencode(query)}")
    outcome = attempt(form_for, answer["code"], verifier, lab.wire.url)
    if outcome.not_done:
        not_done("token_form still raises NotImplementedError.")
        return
    if outcome.error is not None or not isinstance(outcome.value, dict):
        failed(f"token_form should return a dict of form fields; it gave {outcome.error_text or short(outcome.value)}")
        return
    form = outcome.value
    reply = lab.token(form)
    if reply.status_code != 200:
        failed(f"the token endpoint refused the form: {_refused_field(form, reply)}",
               server=f"HTTP {reply.status_code} {short(reply.text)}",
               hint="grant_type, code, redirect_uri, client_id and code_verifier all travel in the form.")
        return
    if form.get("resource") != lab.wire.url:
        said = "missing resource" if "resource" not in form else f"resource is {form['resource']!r}, not the MCP server"
        failed(f"{said} in the token request",
               server="200 with a token (SDK 2.3.0 ignores resource at the token endpoint), but the spec requires it",
               hint="MCP clients send resource in the authorization request and in the token request.")
        return
    invented = sorted(key for key in form if isinstance(key, str) and key.startswith(("client_secret", "client_assertion")))
    if invented:
        failed(f"the form sends {', '.join(invented)}, but {CLIENT_ID} is a public client: it has no secret",
               server="200 with a token (SDK 2.3.0 ignores credentials a client registered with "
                      "token_endpoint_auth_method \"none\" sends), but the field claims a credential that does not exist",
               hint="A public client proves itself with the PKCE code_verifier alone (OAuth 2.1, section 2.1); "
                    "send no client_secret, and never invent one.")
        return
    call = lab.post(SEARCH, reply.json().get("access_token"))
    if call.status_code != 200:
        failed("the token did not open the MCP server", server=f"HTTP {call.status_code}")
        return
    passed("the token endpoint gave a token, and search_notes answered 200 with it")


def _refused_field(form, reply):
    """The form field the token endpoint's error names, and whether the form has it."""
    try:
        body = reply.json()
    except ValueError:
        body = None
    grant = form.get("grant_type")
    if grant is not None and grant != "authorization_code":
        return (f"it refused grant_type {shown(grant, 60)}: a form that trades an authorization code for a token "
                "says grant_type 'authorization_code'")
    said = str(body.get("error_description") or "") if isinstance(body, dict) else reply.text
    # In this order: 'code' is also inside 'authorization_code' and 'code_verifier'.
    field = next((name for name in FORM_FIELDS if re.search(rf"\b{name}\b", said)), None)
    if field is None:
        return "it names no field"
    if field not in form:
        return f"the form has no {field}"
    return f"it refused {field} {shown(form[field], 60)}"


def _asked(outcome):
    """The learner's scopes as a list, or None when the answer is not a list of scopes."""
    if outcome.error is None and isinstance(outcome.value, (list, tuple, set)):
        return list(outcome.value)
    return None


def _not_a_list(outcome):
    if outcome.error is None and isinstance(outcome.value, str):
        joined = " ".join(outcome.value.split()) == outcome.value and " " in outcome.value
        failed(f"step_up_scopes returned the text {outcome.value!r}; return a list, one scope per item",
               hint=("You split the scopes and joined them again: return the list itself." if joined else
                     "The header is text: read its scope parameter, then split it on spaces."))
        return
    failed(f"step_up_scopes should return a list of scopes; it gave {outcome.error_text or short(outcome.value)}",
           hint="The header is text: read its scope parameter, then split it on spaces.")


def _refused_scopes(lab, scopes, refusal):
    unknown = [scope for scope in scopes if scope not in lab.metadata.get("scopes_supported", [])]
    spilled = any('"' in scope or "=" in scope for scope in unknown)
    refused = ", ".join(map(repr, unknown[:2])) + (f" and {len(unknown) - 2} more" if len(unknown) > 2 else "")
    failed(f"you would ask for {shown(scopes, 120)}: the authorization server refused {refused or 'them'}",
           server=refusal,
           hint=("Those are pieces of the header after the scope parameter: your pattern read past its closing "
                 "quote. Match up to the next quote ([^\"]*), or use mcpwire.oauth.parse_challenge."
                 if spilled else "Ask for the scopes the challenge names and the ones you had, nothing else."))


def check_step_up(step_up, wire):
    """Task 4: `step_up(granted, www_authenticate)` returns the scopes to ask for after a 403."""
    if missing(step_up):
        not_done("write step_up_scopes(...)")
        return
    lab = _Lab(wire)
    read = lab.tokens_for(["notes:read"])[0]["access_token"]
    create = frames.request("tools/call", {"name": "create_note", "arguments": {"title": "Check 12", "body": "b"}}, id=2)
    header = lab.post(create, read).headers.get("www-authenticate", "")
    outcome = attempt(step_up, ["notes:read"], header)
    if outcome.not_done:
        not_done("step_up_scopes still raises NotImplementedError.")
        return
    scopes = _asked(outcome)
    if scopes is None:
        _not_a_list(outcome)
        return
    if not all(isinstance(s, str) and s and " " not in s for s in scopes):
        failed(f"each scope should be one word; got {short(scopes)}", hint="Split the scope parameter on spaces.")
        return
    if "notes:write" not in scopes:
        failed(f"the challenged scope is missing: you would ask for {scopes}",
               server=f"403 with {short(header)}", hint="The 403's scope parameter names what create_note needs.")
        return
    tokens, refusal = lab.tokens_for(scopes)
    if tokens is None:
        _refused_scopes(lab, scopes, refusal)
        return
    token = tokens["access_token"]
    if "notes:read" not in scopes:
        search = lab.post(SEARCH, token)
        failed(f"scope dropped on step-up: you would ask for {scopes}",
               server=f"search_notes with that token: HTTP {search.status_code} "
                      f"{(parse_challenge(search.headers.get('www-authenticate')) or {}).get('error_description')}",
               hint="Ask for the union of the scopes you had and the ones the challenge names.")
        return
    if lab.post(create, token).status_code != 200:
        failed("create_note still failed with the stepped-up token")
        return
    first = lab.post(SEARCH).headers.get("www-authenticate", "")
    outcome = attempt(step_up, [], first)
    asked = _asked(outcome)
    if asked is None or sorted(asked) != ["notes:read"]:
        failed(f"with no scopes yet and a 401 that names notes:read, you would ask for "
               f"{outcome.error_text or short(asked)}",
               server=f"401 with {short(first)}",
               hint="Work from the two arguments: the scopes you had and the challenge's scope, nothing more.")
        return
    # Other grants than the lab's flow gives: the union has to come from granted, and hold each scope once.
    outcome = attempt(step_up, ["notes:write"], first)
    asked = _asked(outcome)
    if asked is None or sorted(asked) != ["notes:read", "notes:write"]:
        failed(f"with notes:write granted and a 401 that names notes:read, you would ask for "
               f"{outcome.error_text or short(asked)}",
               server=f"401 with {short(first)}",
               hint="The scopes you had are in the union too, whichever they are: read them from granted.")
        return
    outcome = attempt(step_up, ["notes:read", "notes:write"], header)
    asked = _asked(outcome)
    if asked is None or sorted(asked) != ["notes:read", "notes:write"]:
        repeated = asked is not None and sorted(set(asked)) == ["notes:read", "notes:write"]
        failed(f"{'a scope appears twice: ' if repeated else ''}with notes:read and notes:write granted and the 403 "
               f"that names notes:write, you would ask for {outcome.error_text or short(asked)}",
               server=f"403 with {short(header)}",
               hint="The union holds each scope once, also when the challenge names one you already had.")
        return
    # The 403's error_description names notes:read too, as prose: only the scope parameter says what to ask for.
    outcome = attempt(step_up, [], header)
    asked = _asked(outcome)
    if asked is None or sorted(asked) != ["notes:write"]:
        # error_description is the cause when the same answer is right for the header without it
        plain = re.sub(r',\s*error_description="[^"]*"', "", header)
        prose = sorted(_asked(attempt(step_up, [], plain)) or []) == ["notes:write"]
        failed(f"with no scopes yet and the 403 whose scope parameter names notes:write, you would ask for "
               f"{outcome.error_text or short(asked)}"
               + (": notes:read appears only in its error_description" if prose else ""),
               server=f"403 with {short(header)}",
               hint=("Read the scope parameter only (RFC 6750, section 3): error_description is text for people, "
                     "and may name any scope." if prose else
                     "Work from the two arguments: the scopes you had and the challenge's scope, nothing more."))
        return
    # A challenge may name several scopes, space-separated (RFC 6750 section 3); the lab's each name one.
    both = re.sub(r'scope="[^"]*"', f'scope="{TWO_SCOPES}"', header)
    outcome = attempt(step_up, [], both)
    asked = _asked(outcome)
    if asked is None or sorted(asked) != sorted(TWO_SCOPES.split()):
        failed(f"with no scopes yet and a 403 whose scope parameter names two scopes, {TWO_SCOPES!r}, you would ask "
               f"for {outcome.error_text or shown(asked if asked is not None else outcome.value)}",
               server=f"403 with {short(both)}",
               hint=("One item holds both scopes: the scope parameter is a space-separated list, so split it on "
                     "spaces." if asked is not None and TWO_SCOPES in asked else
                     "The scope parameter is a space-separated list: each of its scopes is one item."))
        return
    passed(f"step-up asks for {' '.join(scopes)}: create_note and search_notes both answer 200")

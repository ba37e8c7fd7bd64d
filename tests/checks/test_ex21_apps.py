"""Exercise 21 checks (an MCP Apps host's refusals): right answers written differently pass, the wrong answers
learners write fail with the case and the hint that fits."""

from urllib.parse import urlsplit

import pytest

from checks import ex21_apps as apps
from mcpwire.apps_csp import allows, build_policy
from mcpwire.apps_host import malformed, visibility

BEFORE_INITIALIZED = ("ui/initialize", "ping")


# --- task 1 · view_gate -------------------------------------------------------------------------------------

def gate(*, malformed_code=-32600, allowed_before=BEFORE_INITIALIZED, default_visibility=("model", "app"),
         wanted="app", strict_id=True, checks_params=True, crashes_on_text=False, answers_notifications=False):
    def view_gate(message, initialized, tools):
        if crashes_on_text:
            method = message.get("method")
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return {"code": malformed_code, "message": "Invalid Request"}
        identifier = message.get("id")
        if "id" in message and (not isinstance(identifier, (str, int)) or (strict_id and isinstance(identifier, bool))):
            return {"code": malformed_code, "message": "Invalid Request"}
        if "method" not in message:
            return None
        method = message["method"]
        if not isinstance(method, str) or (checks_params and not isinstance(message.get("params", {}), dict)):
            return {"code": malformed_code, "message": "Invalid Request"}
        if "id" not in message and not answers_notifications:
            return None
        if not initialized and method not in allowed_before:
            return {"code": -32000, "message": "not initialized"}
        if method == "tools/call":
            tool = tools.get((message.get("params") or {}).get("name"), {})
            seen = ((tool.get("_meta") or {}).get("ui") or {}).get("visibility") or list(default_visibility)
            if wanted not in seen:
                return {"code": -32000, "message": "not visible to apps"}
        return None
    return view_gate


def gate_on_the_kit(message, initialized, tools):
    """A right answer written on mcpwire's own helpers."""
    problem = malformed(message)
    if problem:
        return {"code": -32600, "message": f"Invalid Request: {problem}"}
    if "method" not in message or "id" not in message:
        return None
    if not initialized and message["method"] not in ("ui/initialize", "ping"):
        return {"code": -32002, "message": "wait for ui/notifications/initialized"}
    if message["method"] == "tools/call":
        name = (message.get("params") or {}).get("name")
        if name in tools and "app" not in visibility(tools[name]):
            return {"code": -32603, "message": f"{name} is model-only"}
    return None


def gate_with_match(message, initialized, tools):
    """A right answer written with structural pattern matching."""
    match message:
        case {"jsonrpc": "2.0", "id": bool()}:
            return {"code": -32600, "message": "bad id"}
        case {"jsonrpc": "2.0", "method": str(method), "id": str() | int(), **rest} if isinstance(rest.get("params", {}), dict):
            if not initialized and method not in ("ui/initialize", "ping"):
                return {"code": -32000, "message": "too early"}
            if method == "tools/call":
                ui = (tools.get(rest.get("params", {}).get("name")) or {}).get("_meta", {}).get("ui", {})
                if "app" not in ui.get("visibility", ["model", "app"]):
                    return {"code": -32000, "message": "not for apps"}
            return None
        case {"jsonrpc": "2.0", "method": str(), **rest} if "id" not in rest and isinstance(rest.get("params", {}), dict):
            return None
        case {"jsonrpc": "2.0", "id": str() | int(), "result": _}:
            return None
        case _:
            return {"code": -32600, "message": "Invalid Request"}


@pytest.mark.parametrize("right", [gate(), gate_on_the_kit, gate_with_match], ids=["plain", "on mcpwire", "match"])
def test_right_gates_pass(verdict, right):
    assert verdict(apps.check_view_gate, right).startswith(f"✓ Your gate answered all {len(apps.GATE_CASES)}")


GATE_WRONG = [
    ("refuses everything before initialized", gate(allowed_before=()), ["refused ui/initialize before initialized",
                                                                        "how it gets there"]),
    ("forgets ping", gate(allowed_before=("ui/initialize",)), ["refused ping before initialized"]),
    ("answers notifications", gate(answers_notifications=True), ["refused a size-changed notification", "never answered"]),
    ("reads visibility the wrong way round", gate(wanted="model"), ["refused a tools/call of an app-only tool"]),
    ("treats a missing visibility as model-only", gate(default_visibility=("model",)),
     ["refused a tools/call of a tool with no visibility", "[\"model\", \"app\"]"]),
    ("treats a missing visibility as app-only only for _meta.ui tools", gate(default_visibility=()),
     ["refused a tools/call of a tool with no visibility"]),
    ("accepts id true", gate(strict_id=False), ["let an id that is true", "True is an int"]),
    ("accepts params that are a list", gate(checks_params=False), ["raised AttributeError", "for params that are a list"]),
    ("refuses malformed frames with a code of its own", gate(malformed_code=-32000),
     ["refused a message that is not an object with code -32000, not -32600", "-32600"]),
    ("crashes on a message that is not an object", gate(crashes_on_text=True),
     ["raised AttributeError", "for a message that is not an object", "untrusted"]),
]


@pytest.mark.parametrize("wrong, phrases", [(w, p) for _, w, p in GATE_WRONG], ids=[n for n, _, _ in GATE_WRONG])
def test_wrong_gates_fail_with_the_case(verdict, wrong, phrases):
    out = verdict(apps.check_view_gate, wrong)
    assert out.startswith("✗ ") and all(phrase in out for phrase in phrases), out


def test_a_gate_that_lets_calls_through_before_initialized_fails(verdict):
    def eager(message, initialized, tools):
        return gate()(message, True, tools)
    out = verdict(apps.check_view_gate, eager)
    assert out.startswith("✗ Your gate let a tools/call before initialized through") and "ui/initialize and ping" in out


def test_a_gate_that_returns_a_bare_string_fails(verdict):
    def says_no(message, initialized, tools):
        refusal = gate()(message, initialized, tools)
        return refusal and refusal["message"]
    out = verdict(apps.check_view_gate, says_no)
    assert "not an error object" in out


def test_gate_stub(verdict):
    def stub(message, initialized, tools):
        raise NotImplementedError("your code here")
    assert verdict(apps.check_view_gate, stub).startswith("not done yet")


# --- task 2 · may_connect -----------------------------------------------------------------------------------

def connect_on_the_kit(url, csp):
    return allows(build_policy(csp), "connect-src", url)


def connect_by_parts(url, csp):
    target = urlsplit(url)
    for entry in (csp or {}).get("connectDomains") or []:
        if any(character in entry for character in ";,'\" ") or "://" not in entry:
            continue
        allowed = urlsplit(entry)
        if (allowed.scheme, allowed.port) != (target.scheme, target.port) or not allowed.hostname:
            continue
        host = allowed.hostname
        if host == target.hostname or (host.startswith("*.") and (target.hostname or "").endswith(host[1:])):
            return True
    return False


@pytest.mark.parametrize("right", [connect_on_the_kit, connect_by_parts], ids=["on mcpwire", "by parts"])
def test_right_connect_rules_pass(verdict, right):
    assert verdict(apps.check_connect_rule, right).startswith("✓ Your rule blocked every undeclared origin")


def starts_with(url, csp):
    return any(url.startswith(entry) for entry in (csp or {}).get("connectDomains", []))


def contains(url, csp):
    return any(entry.removeprefix("https://") in url for entry in (csp or {}).get("connectDomains", []))


def host_only(url, csp):
    hosts = [urlsplit(entry).hostname for entry in (csp or {}).get("connectDomains", [])]
    return urlsplit(url).hostname in hosts


def open_by_default(url, csp):
    return True if csp is None else connect_by_parts(url, csp)


def wildcard_matches_the_bare_domain(url, csp):
    host = urlsplit(url).hostname or ""
    for entry in (csp or {}).get("connectDomains", []):
        if entry.startswith("https://*.") and url.startswith("https://") and host.endswith(entry[len("https://*."):]):
            return True
    return connect_by_parts(url, csp)


def every_list_counts(url, csp):
    merged = [entry for key in ("connectDomains", "resourceDomains") for entry in (csp or {}).get(key, [])]
    return connect_by_parts(url, {"connectDomains": merged})


def split_on_semicolons(url, csp):
    entries = [part.strip() for entry in (csp or {}).get("connectDomains", []) for part in entry.split(";")]
    return any(part == "connect-src *" for part in entries) or connect_by_parts(url, {"connectDomains": entries})


def fnmatch_rule(url, csp):
    from fnmatch import fnmatch
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    return any(fnmatch(origin, entry) for entry in (csp or {}).get("connectDomains", []))


CONNECT_WRONG = [
    ("startswith", starts_with, ["'https://api.example.com.evil.net/steal'", "another host"]),
    ("substring", contains, ["'https://api.example.com.evil.net/steal'", "another host"]),
    ("compares hosts only", host_only, ["'http://api.example.com/v1'", "http is not https"]),
    ("open without ui.csp", open_by_default, ["may_connect('https://api.example.com/v1', None) returned True",
                                              "connect-src 'none'"]),
    ("a wildcard matches the bare domain", wildcard_matches_the_bare_domain, ["'https://example.com/'",
                                                                              "not example.com itself"]),
    ("resourceDomains counts too", every_list_counts, ["resourceDomains", "not connect"]),
    ("splits an entry on ';'", split_on_semicolons, ["'https://evil.net/'", "drops such an entry"]),
    ("fnmatch", fnmatch_rule, ["{'connectDomains': ['*']}", "'*' would allow every domain"]),
    ("a query-string domain", lambda url, csp: connect_by_parts(url, csp) or "api.example.com" in url.partition("?")[2],
     ["'https://evil.net/?from=https://api.example.com'", "inside the query"]),
    ("strips the dot of a wildcard", lambda url, csp: connect_by_parts(url, csp) or (
        "*.example.com" in str(csp) and (urlsplit(url).hostname or "").endswith("example.com")
        and urlsplit(url).hostname != "example.com"), ["'https://badexample.com/'", "needs the dot"]),
]


@pytest.mark.parametrize("wrong, phrases", [(w, p) for _, w, p in CONNECT_WRONG], ids=[n for n, _, _ in CONNECT_WRONG])
def test_wrong_connect_rules_fail_with_the_case(verdict, wrong, phrases):
    out = verdict(apps.check_connect_rule, wrong)
    assert out.startswith("✗ may_connect(") and all(phrase in out for phrase in phrases), out


def test_a_rule_that_crashes_on_none_is_told_so(verdict):
    out = verdict(apps.check_connect_rule, lambda url, csp: url in csp.get("connectDomains", []))
    assert out.startswith("✗ may_connect('https://api.example.com/v1', None) raised AttributeError")
    assert "csp may be None" in out


def test_a_rule_that_blocks_everything_fails_on_the_declared_origin(verdict):
    out = verdict(apps.check_connect_rule, lambda url, csp: False)
    assert out.startswith("✗ may_connect('https://api.example.com/v1/nights'") and "the View may reach it" in out


def test_connect_stub(verdict):
    def stub(url, csp):
        raise NotImplementedError("your code here")
    assert verdict(apps.check_connect_rule, stub).startswith("not done yet")

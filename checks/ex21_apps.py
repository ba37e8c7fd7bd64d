"""Checks for exercise 21: make an MCP Apps host refuse what it must.

Both tasks are pure functions, checked against tables of messages and URLs (no server runs):
`view_gate(message, initialized, tools)` says whether a host may handle a message its View posted;
`may_connect(url, csp)` says whether the View may reach a URL under the resource's `_meta.ui.csp`.
The expected answers are the kit's host's (`mcpwire.apps_host`, `mcpwire.apps_csp`).
"""

from mcpwire.apps_csp import allows, build_policy

from .attempt import attempt, missing
from .verdict import failed, not_done, passed, shown

VIEW_URI = "ui://notes-lab/hypnogram.html"
TOOLS = {
    "show_hypnogram": {"name": "show_hypnogram", "_meta": {"ui": {"resourceUri": VIEW_URI}}},
    "epoch_detail": {"name": "epoch_detail", "_meta": {"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}}},
    "score_night": {"name": "score_night", "_meta": {"ui": {"resourceUri": VIEW_URI, "visibility": ["model"]}}},
    "flag_epoch": {"name": "flag_epoch", "_meta": {"ui": {"resourceUri": VIEW_URI, "visibility": ["model", "app"]}}},
    "search_notes": {"name": "search_notes"},
}


def call(name, request_id=5):
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
              "params": {"appCapabilities": {}, "appInfo": {"name": "v", "version": "1"}, "protocolVersion": "2026-01-26"}}
SIZE = {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"width": 400, "height": 200}}

# (what the case is, message, initialized, expected): None = go on, "refuse" = any error, an int = that code.
GATE_CASES = [
    ("ui/initialize before initialized", INITIALIZE, False, None),
    ("ping before initialized", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, False, None),
    ("a size-changed notification before initialized", SIZE, False, None),
    ("a tools/call before initialized", call("epoch_detail"), False, "refuse"),
    ("a resources/read before initialized",
     {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": VIEW_URI}}, False, "refuse"),
    ("a tools/call of an app-only tool", call("epoch_detail"), True, None),
    ("a tools/call of a tool with no visibility (the default is model and app)", call("show_hypnogram"), True, None),
    ("a tools/call of a tool with no _meta.ui at all", call("search_notes"), True, None),
    ("a tools/call of a tool visible to model and app", call("flag_epoch"), True, None),
    ("a tools/call of a model-only tool", call("score_night"), True, "refuse"),
    ("the View's answer to the host's ui/resource-teardown", {"jsonrpc": "2.0", "id": 1, "result": {}}, True, None),
    ("a message that is not an object", "tools/call", True, -32600),
    ("a message without jsonrpc", {"id": 6, "method": "ping"}, True, -32600),
    ("jsonrpc 1.0", {"jsonrpc": "1.0", "id": 6, "method": "ping"}, True, -32600),
    ("an id that is true (a bool, not an integer)", {"jsonrpc": "2.0", "id": True, "method": "ping"}, True, -32600),
    ("params that are a list", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": ["epoch_detail"]}, True, -32600),
    ("a method that is not a string", {"jsonrpc": "2.0", "id": 8, "method": 42}, True, -32600),
]
GATE_HINTS = {
    "ui/initialize before initialized": "before initialized the View may still initialize itself (and ping): that is how it gets there",
    "ping before initialized": "ping is allowed at any time",
    "a size-changed notification before initialized": "a notification is never answered, so it is never refused: "
                                                       "return None and, at most, ignore it",
    "a tools/call before initialized": "the host refuses every request but ui/initialize and ping until "
                                       "ui/notifications/initialized has come",
    "a resources/read before initialized": "not only tools/call: every request but ui/initialize and ping waits for initialized",
    "a tools/call of a model-only tool": "read the tool's _meta.ui.visibility: a View may call only tools whose "
                                         "visibility includes \"app\"",
    "a tools/call of a tool with no visibility (the default is model and app)":
        "a missing visibility means [\"model\", \"app\"]",
    "a tools/call of a tool with no _meta.ui at all": "no _meta.ui means the default visibility, [\"model\", \"app\"]",
    "the View's answer to the host's ui/resource-teardown": "a response has no method; it answers the host's own request",
}
MALFORMED_HINT = ("JSON-RPC 2.0 calls a message that is not a valid Request an Invalid Request: -32600. Check the type "
                  "of each member before you read it (an id is a string or an integer, and Python's True is an int)")


def _gate_problem(case, answer, expected):
    if expected is None:
        return None if answer is None else f"refused {case} with {shown(answer)}"
    if not (isinstance(answer, dict) and isinstance(answer.get("code"), int) and not isinstance(answer.get("code"), bool)
            and isinstance(answer.get("message"), str)):
        return f"let {case} through (returned {shown(answer)}, not an error object {{'code': ..., 'message': ...}})"
    if isinstance(expected, int) and answer["code"] != expected:
        return f"refused {case} with code {answer['code']}, not {expected}"
    return None


def check_view_gate(view_gate):
    """view_gate(message, initialized, tools) -> None to go on, or {"code": int, "message": str} to refuse."""
    if missing(view_gate):
        not_done("write view_gate(message, initialized, tools)")
        return
    for case, message, initialized, expected in GATE_CASES:
        outcome = attempt(view_gate, message, initialized, dict(TOOLS))
        if outcome.not_done:
            not_done("view_gate still raises NotImplementedError")
            return
        if outcome.error is not None:
            failed(f"view_gate raised {outcome.error_text} for {case} (initialized={initialized})",
                   hint="a View is untrusted: every member may be missing or of the wrong type; read with isinstance "
                        "and .get, never assume")
            return
        problem = _gate_problem(case, outcome.value, expected)
        if problem:
            hint = MALFORMED_HINT if expected == -32600 else GATE_HINTS.get(case)
            failed(f"Your gate {problem} (initialized={initialized}).", hint=hint,
                   more=f"the message was {shown(message)}")
            return
    passed(f"Your gate answered all {len(GATE_CASES)} View messages as a host must.")


# (declared _meta.ui.csp, url, may the View connect?)
CONNECT_DOMAINS = {"connectDomains": ["https://api.example.com"]}
CONNECT_CASES = [
    (None, "https://api.example.com/v1", "no ui.csp at all: the spec's default has connect-src 'none'"),
    ({}, "https://api.example.com/v1", "an empty ui.csp declares no domain"),
    (CONNECT_DOMAINS, "https://api.example.com/v1/nights", None),
    (CONNECT_DOMAINS, "https://api.example.com.evil.net/steal", "a longer host that starts with the declared one is another host"),
    (CONNECT_DOMAINS, "https://evil.net/?from=https://api.example.com", "a declared domain inside the query is not the host"),
    (CONNECT_DOMAINS, "http://api.example.com/v1", "the scheme is part of the origin: http is not https"),
    (CONNECT_DOMAINS, "wss://api.example.com/live", "the scheme is part of the origin: wss is not https"),
    (CONNECT_DOMAINS, "https://api.example.com:8443/v1", "the port is part of the origin"),
    ({"resourceDomains": ["https://api.example.com"]}, "https://api.example.com/v1",
     "resourceDomains lets the View load scripts, styles and images, not connect"),
    ({"connectDomains": ["https://*.example.com"]}, "https://a.example.com/", None),
    ({"connectDomains": ["https://*.example.com"]}, "https://a.b.example.com/", None),
    ({"connectDomains": ["https://*.example.com"]}, "https://example.com/", "*.example.com matches subdomains, not example.com itself"),
    ({"connectDomains": ["https://*.example.com"]}, "https://badexample.com/", "*.example.com needs the dot: badexample.com is another domain"),
    ({"connectDomains": ["https://api.example.com; connect-src *"]}, "https://evil.net/",
     "an entry with a ';' would add a directive to the policy: a host drops such an entry"),
    ({"connectDomains": ["*"]}, "https://evil.net/", "an entry must be an origin; '*' would allow every domain"),
]


def check_connect_rule(may_connect):
    """may_connect(url, csp) -> True if the host's CSP lets the View connect to url, given the resource's ui.csp."""
    if missing(may_connect):
        not_done("write may_connect(url, csp)")
        return
    for csp, url, why_not in CONNECT_CASES:
        expected = allows(build_policy(csp), "connect-src", url)
        outcome = attempt(may_connect, url, csp)
        if outcome.not_done:
            not_done("may_connect still raises NotImplementedError")
            return
        if outcome.error is not None:
            failed(f"may_connect({url!r}, {csp!r}) raised {outcome.error_text}",
                   hint="csp may be None (the resource declared nothing) or lack connectDomains")
            return
        if outcome.value is not expected:
            if expected:
                failed(f"may_connect({url!r}, {csp!r}) returned {shown(outcome.value)}: the View may reach it",
                       hint="compare origins: scheme, host and port; '*.' in front of a host matches its subdomains",
                       more="return exactly True or False")
            else:
                failed(f"may_connect({url!r}, {csp!r}) returned {shown(outcome.value)}: the host must block it",
                       hint=why_not, more="split the URL with urllib.parse.urlsplit and compare the parts, never the text")
            return
    passed(f"Your rule blocked every undeclared origin and allowed the declared ones ({len(CONNECT_CASES)} cases).")

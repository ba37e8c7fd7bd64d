"""Checks for exercise 21: what an MCP Apps host refuses.

Both tasks are pure functions, checked against tables of messages and URLs (no server runs):
`view_gate(message, initialized, tools)` says whether a host may handle a message its View posted;
`may_connect(url, csp)` says whether the View may reach a URL under the resource's `_meta.ui.csp`.
The gate's expected answers follow JSON-RPC 2.0, MCP's error codes, the Apps spec's visibility MUST and
the kit's rule for a request before `initialized`; the connect answers are the browser's under the policy
the kit's host builds (`mcpwire.apps.csp`).
"""

import copy

from mcpwire.apps.csp import allows, approved_domains, build_policy

from .attempt import attempt, missing
from .verdict import failed, not_done, passed, shown

VIEW_URI = "ui://notes-lab/hypnogram.html"
TOOLS = {
    "show_hypnogram": {"name": "show_hypnogram", "_meta": {"ui": {"resourceUri": VIEW_URI}}},
    "epoch_detail": {"name": "epoch_detail", "_meta": {"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}}},
    "score_night": {"name": "score_night", "_meta": {"ui": {"resourceUri": VIEW_URI, "visibility": ["model"]}}},
    "flag_epoch": {"name": "flag_epoch", "_meta": {"ui": {"resourceUri": VIEW_URI, "visibility": ["model", "app"]}}},
    "archive_night": {"name": "archive_night", "_meta": {"ui": {"resourceUri": VIEW_URI, "visibility": []}}},
    "search_notes": {"name": "search_notes"},
}


def call(name, request_id=5):
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


def request(method, request_id, **params):
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


INITIALIZE = request("ui/initialize", 1, appCapabilities={}, appInfo={"name": "v", "version": "1"},
                     protocolVersion="2026-01-26")
SIZE = {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"width": 400, "height": 200}}
REFUSE, EITHER = "refuse", "either"
INVALID = (-32600,)

# (what the case is, message, initialized, expected): None = go on, REFUSE = an error object with a code a host may
# refuse with (see _refusal_code_problem), EITHER = go on or refuse with such a code (but never raise), a tuple = an
# error with one of those codes (None in it: or go on).
GATE_CASES = [
    ("ui/initialize before initialized", INITIALIZE, False, None),
    ("ping before initialized", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, False, None),
    ("a size-changed notification before initialized", SIZE, False, None),
    ("the View's answer to a host's ping before initialized", {"jsonrpc": "2.0", "id": "host-1", "result": {}}, False, None),
    ("a tools/call before initialized", call("epoch_detail"), False, REFUSE),
    ("a resources/read before initialized", request("resources/read", 3, uri=VIEW_URI), False, REFUSE),
    ("a ui/open-link before initialized", request("ui/open-link", 4, url="https://example.com/"), False, REFUSE),
    ("MCP's initialize (not ui/initialize) before initialized", request("initialize", 6), False, REFUSE),
    ("a ui/open-link with id \"\" before initialized", request("ui/open-link", "", url="https://example.com/"), False, REFUSE),
    ("a tools/call of an app-only tool", call("epoch_detail"), True, None),
    ("a tools/call of a tool visible to model and app", call("flag_epoch"), True, None),
    ("a tools/call of a tool with no visibility (the default is model and app)", call("show_hypnogram"), True, None),
    ("a tools/call of a tool with no _meta.ui at all", call("search_notes"), True, None),
    ("a tools/call with a string id", call("epoch_detail", "call-7"), True, None),
    ("a tools/call of a model-only tool", call("score_night"), True, REFUSE),
    ("a tools/call of a tool whose visibility is []", call("archive_night"), True, REFUSE),
    ("a tools/call of a model-only tool with id 0", call("score_night", 0), True, REFUSE),
    ("a tools/call notification (no id) of a model-only tool",
     {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "score_night"}}, True, None),
    ("a tools/call of a tool the server does not have", call("delete_everything"), True, EITHER),
    ("a tools/call without params", {"jsonrpc": "2.0", "id": 9, "method": "tools/call"}, True, EITHER),
    ("a tools/call whose name is a list", request("tools/call", 10, name=["epoch_detail"]), True, EITHER),
    ("the View's answer to the host's ui/resource-teardown", {"jsonrpc": "2.0", "id": 1, "result": {}}, True, None),
    ("the View's error answer to a host's request",
     {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found"}}, True, None),
    ("the View's error answer with an application code",
     {"jsonrpc": "2.0", "id": "host-2", "error": {"code": 4003, "message": "the View declines"}}, True, None),
    ("a ping with a member MCP does not define", {"jsonrpc": "2.0", "id": 2, "method": "ping", "x-trace": "abc"},
     True, None),
    ("a message that is not an object", "tools/call", True, INVALID),
    ("a message without jsonrpc", {"id": 6, "method": "ping"}, True, INVALID),
    ("jsonrpc 1.0", {"jsonrpc": "1.0", "id": 6, "method": "ping"}, True, INVALID),
    ("jsonrpc \" 2.0 \" with white space around it", {"jsonrpc": " 2.0 ", "id": 6, "method": "ping"}, True, INVALID),
    ("jsonrpc 2.0 written as a number", {"jsonrpc": 2.0, "id": 6, "method": "ping"}, True, INVALID),
    ("an id that is true (a bool, not an integer)", {"jsonrpc": "2.0", "id": True, "method": "ping"}, True, INVALID),
    ("an id that is null", {**call("epoch_detail"), "id": None}, True, INVALID),
    ("a size-changed notification with \"id\": null", {**SIZE, "id": None}, True, INVALID),
    ("an id that is 1.5", {"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, True, INVALID),
    ("params that are a list", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": ["epoch_detail"]}, True,
     (-32600, -32602)),
    # Neither an object nor a list: not even JSON-RPC, so only -32600 (-32602 is for params JSON-RPC allows).
    ("params that are a string", {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": VIEW_URI}, True,
     INVALID),
    ("params that are null", {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": None}, True, INVALID),
    ("a method that is not a string", {"jsonrpc": "2.0", "id": 8, "method": 42}, True, INVALID),
    ("a response with both result and error",
     {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": -32603, "message": "oops"}}, True, INVALID),
    ("a response with neither result nor error", {"jsonrpc": "2.0", "id": 1}, True, INVALID),
    ("an error answer whose error is not an object", {"jsonrpc": "2.0", "id": 1, "error": "boom"}, True, INVALID),
    ("an error answer whose error has no code", {"jsonrpc": "2.0", "id": 1, "error": {"message": "no code"}}, True,
     INVALID),
    ("an error answer whose code is a string", {"jsonrpc": "2.0", "id": 1, "error": {"code": "-32603", "message": "x"}},
     True, INVALID),
    ("an error answer whose code is true", {"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "x"}}, True,
     INVALID),
    ("an error answer whose code is -32603.5",
     {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603.5, "message": "x"}}, True, INVALID),
    ("an error answer whose error has no message", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603}}, True,
     INVALID),
    ("a ping that carries a result too", {"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {}}, True, INVALID),
    ("a tools/call that carries an error too",
     {**call("epoch_detail"), "error": {"code": -32603, "message": "oops"}}, True, INVALID),
    ("a notification without jsonrpc", {"method": "ui/notifications/initialized"}, True, INVALID),
    ("a notification that carries a result", {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "result": {}},
     True, INVALID),
    ("a result answer with a null id", {"jsonrpc": "2.0", "id": None, "result": {}}, True, INVALID),
    ("a result answer without an id", {"jsonrpc": "2.0", "result": {}}, True, INVALID),
    ("an error answer without an id", {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}, True,
     (None, -32600)),
    ("an error answer with a null id", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
     True, (None, -32600)),
    ("a batch (a list of messages)", [{"jsonrpc": "2.0", "id": 11, "method": "ping"}], True, INVALID),
    ("a size-changed notification with params that are a string", {**SIZE, "params": "x"}, True, INVALID),
    ("a notification with params that are null",
     {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": None}, True, INVALID),
    ("an error answer whose id is 1.5", {"jsonrpc": "2.0", "id": 1.5, "error": {"code": -1, "message": "x"}}, True,
     INVALID),
    ("an error answer whose id is true", {"jsonrpc": "2.0", "id": True, "error": {"code": -1, "message": "x"}}, True,
     INVALID),
    ("a result answer without jsonrpc", {"id": "host-1", "result": {}}, True, INVALID),
    ("an error answer with jsonrpc 1.0", {"jsonrpc": "1.0", "id": 1, "error": {"code": -1, "message": "x"}}, True,
     INVALID),
    ("PING (not ping) before initialized", {"jsonrpc": "2.0", "id": 2, "method": "PING"}, False, REFUSE),
    ("UI/INITIALIZE (not ui/initialize) before initialized", {**INITIALIZE, "method": "UI/INITIALIZE"}, False, REFUSE),
    # Last, so that a gate which checks nothing is told what it misses before it is told about the order.
    ("a tools/call with params that are a list before initialized",
     {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": ["epoch_detail"]}, False, (-32600, -32602)),
    ("a tools/call that carries a result too before initialized", {**call("epoch_detail"), "result": {}}, False,
     INVALID),
]
NOT_INITIALIZED = ("the kit's rule (lesson 21): the host refuses every request but ui/initialize and ping until "
                   "ui/notifications/initialized has come")
METHOD_EXACT = ("a method name is compared exactly, case and all: JSON-RPC's method is a string, and neither JSON-RPC "
                "nor MCP folds its case, so 'PING' is not ping and the kit's rule refuses it before initialized "
                "(never lower() or strip() a method)")
A_FALSY_ID = ("an id of 0 or \"\" is still an id: a message is a request when \"id\" is in it, whatever its value "
              "(test \"id\" in message, not message.get(\"id\"))")
GATE_HINTS = {
    "ui/initialize before initialized": "before initialized the View may still initialize itself (and ping): that is how it gets there",
    "ping before initialized": "ping is allowed at any time",
    "a size-changed notification before initialized": "a valid notification is never answered, so it is never "
                                                       "refused: return None and, at most, ignore it",
    "the View's answer to a host's ping before initialized": "a response is never refused, initialized or not: it "
                                                             "has no method and answers the host's own request",
    "a tools/call before initialized": NOT_INITIALIZED,
    "a resources/read before initialized": "not only tools/call: under the kit's rule every request but ui/initialize "
                                           "and ping waits for initialized",
    "a ui/open-link before initialized": "not every ui/ method is allowed early: the kit's rule lets in only "
                                         "ui/initialize and ping",
    "MCP's initialize (not ui/initialize) before initialized": "compare the method with == against each allowed "
                                                               "method: 'initialize' is inside the text 'ui/initialize' "
                                                               "but is another method",
    "a ui/open-link with id \"\" before initialized": A_FALSY_ID,
    "PING (not ping) before initialized": METHOD_EXACT,
    "UI/INITIALIZE (not ui/initialize) before initialized": METHOD_EXACT,
    "a tools/call of an app-only tool": "\"app\" in the visibility means the View may call the tool: refuse only "
                                        "when \"app\" is missing",
    "a tools/call of a tool visible to model and app": "refuse only when \"app\" is missing from the visibility; "
                                                       "\"model\" beside it changes nothing",
    "a tools/call of a model-only tool": "read the tool's _meta.ui.visibility: a View may call only tools whose "
                                         "visibility includes \"app\"",
    "a tools/call of a tool whose visibility is []": "only a missing visibility means the default; a declared [] "
                                                      "lacks \"app\", so the View may not call the tool",
    "a tools/call of a model-only tool with id 0": A_FALSY_ID,
    "a tools/call with a string id": "an id is a string or an integer",
    "a tools/call notification (no id) of a model-only tool": "a notification is never answered, so it is never "
                                                              "refused, whatever its method",
    "a tools/call of a tool with no visibility (the default is model and app)":
        "a missing visibility means [\"model\", \"app\"]",
    "a tools/call of a tool with no _meta.ui at all": "no _meta.ui means the default visibility, [\"model\", \"app\"]",
    "the View's answer to the host's ui/resource-teardown": "a response has no method; it answers the host's own request",
    "the View's error answer to a host's request": "a response carries result or error; both are answers, never refused",
    "the View's error answer with an application code": "an error answer's code is any integer: codes outside "
                                                        "-32768…-32000, like 4003, are the application's own; the "
                                                        "range limits only the refusals your host sends",
    "a ping with a member MCP does not define": "MCP's schema does not forbid other members: check the members you "
                                                "know and let the rest be",
}
# Why a message the gate called an Invalid Request (-32600) is valid, where one rule alone does not say it.
VALID_HINTS = {
    "the View's answer to a host's ping before initialized": "this response is valid: its id \"host-1\" is a string "
                                                             "(an id is a string or an integer) and its result {} is "
                                                             "a result (test \"result\" in message, not its truth)",
    "the View's answer to the host's ui/resource-teardown": "this response is valid: its result {} is a result (test "
                                                            "\"result\" in message, not its truth)",
}
MALFORMED_HINT = ("a message that is not a valid request, notification or response is malformed, and the host "
                  "refuses it with -32600, JSON-RPC's Invalid Request")
ERROR_OBJECT = "an error is an object with an integer code and a string message; anything else is not an answer"
MIXED = ("a message with a method is a request or a notification, and JSON-RPC gives neither a result nor an "
         "error; one with both could be read as a request and as a response, so refuse it")
PARAMS_OBJECT = ("when \"params\" is in the message it must be an object (JSON-RPC allows a list too, MCP does not): "
                 "a string or null is neither, so the message is not even valid JSON-RPC, an Invalid Request "
                 "(-32600); -32602 (Invalid params) fits only params JSON-RPC allows, a list. Test \"params\" in "
                 "message, not whether its value is None")
NOTIFICATION_CHECKED = ("a notification is a request without an id, under the same rules: jsonrpc \"2.0\", a string "
                        "method, params an object, no result or error; check them before you let it go on")
ERROR_ID = ("an error answer's id, when it has one, is a string or an integer like any id: only an error answer "
            "without an id or with a null id may go on (JSON-RPC writes null for an id it could not read)")
RESPONSE_VERSION = ("jsonrpc is exactly \"2.0\" in every message, a response too (JSON-RPC: \"MUST be exactly '2.0'\"): "
                    "check it before you look for a method")
CHECK_FIRST = ("check the message before the kit's rule: a malformed message is an Invalid Request whether the View "
               "has initialized or not; -32000 would say only \"not yet\"")
NULL_ID = ("a message with \"id\" in it is a request whatever the id holds (MCP: notifications MUST NOT include an "
           "ID), and MCP forbids a null id (\"Unlike base JSON-RPC, the ID MUST NOT be null\"): refuse it with -32600, "
           "never read null as no id")
MALFORMED_MORE = {
    "an id that is true (a bool, not an integer)": "an id is a string or an integer, and Python's True is an int",
    "an id that is null": NULL_ID,
    "a size-changed notification with \"id\": null": NULL_ID,
    "jsonrpc \" 2.0 \" with white space around it": "jsonrpc must be exactly the string \"2.0\" (JSON-RPC: \"MUST be "
                                                    "exactly '2.0'\"): compare it as it came, never strip() it",
    "an id that is 1.5": "an id is a string or an integer; a float is neither",
    "jsonrpc 2.0 written as a number": "jsonrpc must be the string \"2.0\"; the number 2.0 is not it",
    "params that are a list": "JSON-RPC 2.0 allows params by position (a list); MCP requires params to be an "
                              "object, so refuse with -32600 or -32602 (Invalid params)",
    "a response with both result and error": "JSON-RPC 2.0: a response has result or error, never both",
    "a response with neither result nor error": "JSON-RPC 2.0: a response has result or error; this has neither",
    "an error answer whose error is not an object": ERROR_OBJECT,
    "an error answer whose error has no code": ERROR_OBJECT,
    "an error answer whose code is a string": ERROR_OBJECT,
    "an error answer whose code is true": f"{ERROR_OBJECT}, and Python's True is an int: test for bool first",
    "an error answer whose error has no message": ERROR_OBJECT,
    "a ping that carries a result too": MIXED,
    "a tools/call that carries an error too": MIXED,
    "a result answer with a null id": "a result answers one request, so it carries that request's id: a string or an "
                                      "integer, never null",
    "a batch (a list of messages)": "MCP sends one message at a time (it dropped JSON-RPC batches): a list is not a "
                                    "message",
    "params that are a string": PARAMS_OBJECT,
    "params that are null": PARAMS_OBJECT,
    "a notification without jsonrpc": NOTIFICATION_CHECKED,
    "a notification that carries a result": f"{NOTIFICATION_CHECKED}; {MIXED}",
    "an error answer whose code is -32603.5": f"{ERROR_OBJECT}; -32603.5 is a float, not an integer",
    "a result answer without an id": "a result answers one request, so it carries that request's id (only an error "
                                     "answer may leave it out, when it could not read the id)",
    "an error answer with a null id": "JSON-RPC writes null for an id it could not read, and MCP leaves such an id out; "
                                      "either way you may let the error answer go on or refuse it as -32600",
    "an error answer without an id": "MCP lets an error answer leave out an id it could not read, so you may let it "
                                     "go on; refused, it is an Invalid Request",
    "a size-changed notification with params that are a string": f"{NOTIFICATION_CHECKED}; {PARAMS_OBJECT}",
    "a notification with params that are null": f"{NOTIFICATION_CHECKED}; {PARAMS_OBJECT}",
    "an error answer whose id is 1.5": ERROR_ID,
    "an error answer whose id is true": f"{ERROR_ID}; Python's True is an int: test for bool first",
    "a result answer without jsonrpc": RESPONSE_VERSION,
    "an error answer with jsonrpc 1.0": RESPONSE_VERSION,
    "a tools/call with params that are a list before initialized": CHECK_FIRST,
    "a tools/call that carries a result too before initialized": CHECK_FIRST,
}
UNTRUSTED_HINT = ("a View is untrusted: every member may be missing or of the wrong type, and a tool name may be one "
                  "the server does not have; read with isinstance and .get, never assume")
RAISE_HINTS = {
    "a tools/call of a tool the server does not have": "a View may name any tool: look it up with tools.get(name), "
                                                       "never tools[name]",
    "a tools/call without params": "params may be missing: read message.get(\"params\") and treat None as {}",
    "a tools/call whose name is a list": "a name may be something other than a string, and a list cannot be a dict "
                                         "key: check isinstance(name, str) before you look it up",
}
MALFORMED_DEFAULT_MORE = "check the type of each member before you read it"
SHAPE_HINT = 'a refusal is the error object alone: {"code": <an int>, "message": <a str>}'
APPS_EXAMPLE_CODE = -32000  # the code the Apps spec's examples give a host's ui/* errors
# JSON-RPC 2.0 reserves -32768…-32000; outside it a code is the application's own.
JSON_RPC_RESERVED = range(-32768, -31999)
# Where JSON-RPC has a code for what is wrong with the request itself, that code fits too: MCP's initialize is no
# method of the View-host wire, and MCP answers a tool the server does not have with -32602.
FITTING_CODES = {
    "MCP's initialize (not ui/initialize) before initialized": (-32601,),
    "PING (not ping) before initialized": (-32601,),
    "UI/INITIALIZE (not ui/initialize) before initialized": (-32601,),
    "a tools/call of a tool the server does not have": (-32602,),
    "a tools/call without params": (-32600, -32602),
    "a tools/call whose name is a list": (-32600, -32602),
}
CODE_MEANINGS = {
    -32700: "JSON-RPC's Parse error, but this message parsed",
    -32600: "JSON-RPC's Invalid Request, but this request is valid",
    -32601: "JSON-RPC's Method not found, but the host knows this method: it refuses it",
    -32602: "JSON-RPC's Invalid params, but this request's params are valid (MCP sends -32602 for a tool the server "
            "does not have; this one it has)",
    -32603: "JSON-RPC's Internal error, but nothing failed inside the host",
    -32002: "MCP's retired Resource not found, which a client may still read that way",
    -32020: "MCP's HeaderMismatch", -32021: "MCP's MissingRequiredClientCapability",
    -32022: "MCP's UnsupportedProtocolVersion",
}
CODE_RANGES = [
    (range(-32019, -32000), "in MCP's legacy range -32000…-32019, which new implementations SHOULD NOT use (-32000 "
                            "passes here only because the Apps spec's examples use it)"),
    (range(-32099, -32022), "reserved by MCP for codes it has not defined yet (such codes MUST NOT be emitted)"),
    (JSON_RPC_RESERVED, "inside -32768…-32000, the range JSON-RPC reserves for its predefined errors"),
]
CODE_HINT = ("refuse with -32000, the code the Apps spec's examples give a host's ui/* errors, or with an "
             "application code of your own outside -32768…-32000 (say 4003)")
CODE_MORE = ("MCP's error codes: https://modelcontextprotocol.io/specification/2026-07-28/basic/index#error-codes; "
             "JSON-RPC's: https://www.jsonrpc.org/specification#error_object")


def _shape_problem(answer):
    """What keeps `answer` from being a JSON-RPC error object, or None if it is one."""
    if not isinstance(answer, dict):
        return f"it is a {type(answer).__name__}, not a dict"
    if "error" in answer or "jsonrpc" in answer:
        return "it is a whole response; return only its error object"
    code, message = answer.get("code"), answer.get("message")
    if isinstance(code, bool) or not isinstance(code, int):
        return f"its code is {'missing' if code is None else f'a {type(code).__name__}'}, not an int"
    if not isinstance(message, str):
        return f"its message is {'missing' if message is None else f'a {type(message).__name__}'}, not a str"
    return None


def _refusal_code_problem(case, code):
    """Why `code` is not one a host may refuse `case` with, or None if it is."""
    if code == APPS_EXAMPLE_CODE or code not in JSON_RPC_RESERVED or code in FITTING_CODES.get(case, ()):
        return None
    return CODE_MEANINGS.get(code) or next(why for codes, why in CODE_RANGES if code in codes)


def _gate_problem(case, answer, expected):
    """(what is wrong, the hint) for the gate's answer to one case, or None if it is right."""
    if expected is None:
        return None if answer is None else _valid_message_problem(case, answer)
    if answer is None:
        if expected == EITHER or (isinstance(expected, tuple) and None in expected):
            return None
        hint = MALFORMED_HINT if isinstance(expected, tuple) else GATE_HINTS.get(case)
        return f"let {case} through (returned None)", hint
    shape = _shape_problem(answer)
    if shape:
        return (f"refused {case} with {shown(answer)}, which is not an error object {{'code': ..., 'message': ...}}: "
                f"{shape}", SHAPE_HINT)
    if isinstance(expected, tuple):
        if answer["code"] in expected:
            return None
        wanted = " or ".join(str(code) for code in expected if code is not None)
        return f"refused {case} with code {answer['code']}, not {wanted}", MALFORMED_HINT
    why = _refusal_code_problem(case, answer["code"])
    if not why:
        return None
    falsy_id = answer["code"] == -32600 and GATE_HINTS.get(case) == A_FALSY_ID
    return f"refused {case} with code {answer['code']}, which is {why}", A_FALSY_ID if falsy_id else CODE_HINT


def _valid_message_problem(case, answer):
    """(what is wrong, the hint) for a gate that did not return None to a message the host must go on with."""
    if _shape_problem(answer):
        return (f"answered {case} with {shown(answer)}, which is neither None (go on) nor an error object",
                "return None to let the host go on: None is the only answer that means yes")
    if answer["code"] == -32600:
        return (f"refused {case} with code -32600 (Invalid Request), but this message is valid",
                VALID_HINTS.get(case) or GATE_HINTS.get(case))
    return f"refused {case} with {shown(answer)}", GATE_HINTS.get(case)


def check_view_gate(view_gate):
    """view_gate(message, initialized, tools) -> None to go on, or {"code": int, "message": str} to refuse."""
    if missing(view_gate):
        not_done("write view_gate(message, initialized, tools)")
        return
    # Every case twice: with the lab's tool names, then with the same tools under other names, so a gate that knows
    # the names by heart instead of reading `tools` fails the second time.
    renamed_tools = {RENAMED[name]: {**tool, "name": RENAMED[name]} for name, tool in TOOLS.items()}
    runs = [(case, message, initialized, expected, TOOLS, "") for case, message, initialized, expected in GATE_CASES] + \
           [(case, renamed(message), initialized, expected, renamed_tools, ", with the same tools under other names")
            for case, message, initialized, expected in GATE_CASES]
    for case, message, initialized, expected, tools, under in runs:
        # Copies, so a gate that changes what it is given cannot change the next case or the next run.
        outcome = attempt(view_gate, copy.deepcopy(message), initialized, copy.deepcopy(tools))
        if outcome.not_done:
            not_done("view_gate still raises NotImplementedError")
            return
        if outcome.error is not None:
            failed(f"view_gate raised {outcome.error_text} for {case} (initialized={initialized}{under})",
                   hint=UNTRUSTED_HINT, more=f"{RAISE_HINTS[case]}; the message was {shown(message)}"
                   if case in RAISE_HINTS else f"the message was {shown(message)}")
            return
        problem = _gate_problem(case, outcome.value, expected)
        if problem:
            what, hint = problem
            more = {MALFORMED_HINT: MALFORMED_MORE.get(case, MALFORMED_DEFAULT_MORE), CODE_HINT: CODE_MORE}.get(hint)
            more = f"{more}; the message was {shown(message)}" if more else f"the message was {shown(message)}"
            failed(f"Your gate {what} (initialized={initialized}{under}).", hint=hint, more=more)
            return
    passed(f"Your gate answered all {len(GATE_CASES)} View messages by the specs' rules and the kit's, with the "
           "lab's tool names and with others.")


RENAMED = {name: f"{name}_b" for name in TOOLS}


def renamed(message):
    """The message with a tools/call's tool name changed as RENAMED changes it."""
    params = message.get("params") if isinstance(message, dict) else None
    if isinstance(params, dict) and isinstance(params.get("name"), str) and params["name"] in RENAMED:
        return {**message, "params": {**params, "name": RENAMED[params["name"]]}}
    return message


# (declared _meta.ui.csp, url, why the View may not connect; None when it may)
CONNECT_DOMAINS = {"connectDomains": ["https://api.example.com"]}
LIVE = {"connectDomains": ["wss://live.example.com:8443"]}
WSS_ONLY = {"connectDomains": ["wss://live.example.com"]}
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
    (CONNECT_DOMAINS, "https://api.example.com@evil.net/", "the host is what comes after the '@': "
                                                           "'api.example.com@' is only a user name"),
    (CONNECT_DOMAINS, "https://evil.net\\@api.example.com/", "a browser reads '\\' as '/' in an https URL, so the "
                                                             "host is evil.net; urlsplit does not"),
    (CONNECT_DOMAINS, "https://API.Example.com/v1", None),
    (CONNECT_DOMAINS, "https://api.example.com:443/v1", None),
    (LIVE, "wss://live.example.com:8443/feed", None),
    (LIVE, "wss://live.example.com/feed", "the declared port is part of the origin: without a port a wss URL "
                                          "means 443, not 8443"),
    ({"connectDomains": ["https://*example.com"]}, "https://badexample.com/",
     "a '*' is allowed only as '*.' in front of a host: https://*example.com is not an origin, so it is ignored"),
    ({"connectDomains": ["https://api.example.com; connect-src *"]}, "https://api.example.com/v1",
     "an entry that is not an origin is ignored whole, not cut down to the part that looks right"),
    (CONNECT_DOMAINS, "https://api.example.com:99999/", "a URL a browser cannot parse reaches nowhere: block it"),
    (CONNECT_DOMAINS, "https://[::1/", "a URL a browser cannot parse reaches nowhere: block it"),
    ({"connectDomains": ["https://api.example.com/"]}, "https://api.example.com/v1",
     "an entry with a path, even a trailing '/', is not an origin: the host drops it, so it allows nothing"),
    ({"connectDomains": ["https://api.example.com/v1"]}, "https://api.example.com/v2",
     "an entry with a path is not an origin: the host drops it, so it allows nothing"),
    ({"connectDomains": ["https://user@api.example.com"]}, "https://api.example.com/v1",
     "an entry with a user name is not an origin: the host drops it, so it allows nothing"),
    ({"connectDomains": ["https://api.example.com?v=1"]}, "https://api.example.com/v1",
     "an entry with a query is not an origin: the host drops it, so it allows nothing"),
    ({"connectDomains": ["https://api.example.com\\"]}, "https://api.example.com/v1",
     "an entry with a backslash is not an origin: the host drops it, so it allows nothing"),
    ({"connectDomains": ["http://api.example.com"]}, "http://api.example.com/v1",
     "the kit's host keeps only https and wss entries: an http one is dropped, so it allows nothing"),
    ({"connectDomains": ["ws://live.example.com:8080"]}, "ws://live.example.com:8080/feed",
     "the kit's host keeps only https and wss entries: a ws one is dropped, so it allows nothing"),
    ({"connectDomains": ["http://plain.example.com"]}, "https://plain.example.com/v1",
     "the kit's host drops an http entry whole, so it allows nothing, not even the https URL a browser would let it "
     "upgrade to"),
    ({"connectDomains": ["ws://feed.example.com"]}, "wss://feed.example.com/live",
     "the kit's host drops a ws entry whole, so it allows nothing, not even the wss URL a browser would let it "
     "upgrade to"),
    ({"connectDomains": ["https://api.example.com https://evil.net"]}, "https://evil.net/",
     "an entry with a space is dropped whole: in the policy a space would start a second source"),
    ({"connectDomains": ["https://api.example.com,https://evil.net"]}, "https://evil.net/",
     "an entry with a ',' is dropped whole, not split into two"),
    ({"connectDomains": [" https://api.example.com"]}, "https://api.example.com/v1",
     "an entry with a space is dropped whole, even a space around it: keep the entry as it came, never strip it"),
    ({"connectDomains": ["api.example.com"]}, "https://api.example.com/v1",
     "an entry without a scheme is not an https or wss origin: the host drops it, so it allows nothing"),
    ({"connectDomains": ["wss://live.example.com:*"]}, "wss://live.example.com:9/",
     "':*' is not a port: the entry is not an origin, so the host drops it"),
    ({"connectDomains": ["https://[::1]"]}, "https://[::1]/",
     "a CSP source cannot name an IPv6 address: Chromium ignores https://[::1], and the kit's host drops it"),
    (WSS_ONLY, "https://live.example.com/",
     "a browser matches the scheme exactly: a wss entry does not let https in (CSP3's text says it does; Chromium "
     "does not)"),
    (WSS_ONLY, "wss://live.example.com:80/", "no port means the scheme's default, and for wss that is 443, not 80"),
    ({"connectDomains": ["wss://live.example.com:443"]}, "wss://live.example.com/feed", None),
    ({"connectDomains": ["https://*.example.com"]}, "https://a.example.com:8443/",
     "the port is part of the origin for a '*.' entry too: no port in the entry means 443"),
    (CONNECT_DOMAINS, "https://api.example.com:0/", "port 0 is a port, and not 443: test whether the port is None, "
                                                    "not whether it is truthy"),
    (CONNECT_DOMAINS, "https://api.example.com./", "for a browser's CSP, a host with a trailing dot is another host: "
                                                   "compare the host as written, without stripping dots"),
    (CONNECT_DOMAINS, "HTTPS://api.example.com/v1", None),
    (CONNECT_DOMAINS, "https://user:secret@api.example.com/v1", None),
    (CONNECT_DOMAINS, "https://u@v@api.example.com/v1", None),
    (CONNECT_DOMAINS, "https://api.exa\tmple.com/v1", None),
    ({"connectDomains": ["HTTPS://API.Example.com"]}, "https://api.example.com/v2", None),
    ({"connectDomains": [None, 443, "https://api.example.com"]}, "https://api.example.com/v3", None),
    (CONNECT_DOMAINS, "https://api.example.com:/v4", None),
    (CONNECT_DOMAINS, " https://api.example.com ", None),
    (CONNECT_DOMAINS, "https://api.example.com\x01", None),
    ({"connectDomains": ["https://*.example.com"]}, "https://evil .example.com/",
     "a space inside the host: a browser cannot parse the URL (a space is a forbidden host code point), so it "
     "reaches nowhere; urlsplit keeps the space in the host"),
    ({"connectDomains": ["https://api.example.com:"]}, "https://api.example.com/v1",
     "an entry with ':' and no port is not an origin (a CSP port is digits or '*'): the host drops it"),
    ({"connectDomains": ["https://api.example.com:65536"]}, "https://api.example.com:65536/",
     "a port above 65535 does not parse, in the URL or in the entry: such a URL reaches nowhere"),
    ({"connectDomains": ["https://api.example.com:65535"]}, "https://api.example.com:65535/", None),
    ({"connectDomains": ["https://api.example.com:65979"]}, "https://api.example.com/v1",
     "an entry's port above 65535 is a port no URL has: it matches none (65979 is not 443, even modulo 65536)"),
    ({"connectDomains": "https://api.example.com"}, "https://api.example.com/v1",
     "connectDomains must be a list of origins (the Apps spec's McpUiResourceCsp: string[]): the kit's host drops a "
     "string whole, never reads it as one entry"),
]
# Why the View may reach a URL that a rule blocked, where "compare origins" alone does not say it (each URL here is
# in one allowed case only).
ALLOWED_HINTS = {
    "wss://live.example.com/feed": "an entry's port that is the scheme's default (443 for wss) is the same origin as "
                                   "no port at all",
    "HTTPS://api.example.com/v1": "a browser reads the scheme without case too: HTTPS: is https:",
    "https://api.example.com/v2": "an entry's scheme and host have no case either: the kit's host keeps "
                                  "HTTPS://API.Example.com, lowercased",
    "https://api.example.com/v3": "skip an entry that is not a string and read on: the entries after it still count",
    "https://user:secret@api.example.com/v1": "a user name and password before '@' are not the host: the host is "
                                              "api.example.com, so the policy lets it through (fetch refuses such a "
                                              "URL for its own reasons, XHR does not)",
    "https://u@v@api.example.com/v1": "the user name ends at the last '@', not the first: the host is "
                                      "api.example.com (urlsplit splits there too)",
    "https://api.exa\tmple.com/v1": "a browser removes tabs and newlines from a URL before it reads it (urlsplit does "
                                    "the same)",
    "https://api.example.com:/v4": "a ':' with no port after it is no port: the scheme's default, 443 (WHATWG URL; "
                                   "urlsplit gives port None too)",
    " https://api.example.com ": "a browser strips spaces and control characters from both ends of a URL before it "
                                 "reads it (WHATWG URL): strip them first, or urlsplit keeps the last space in the host",
    "https://api.example.com\x01": "a browser strips control characters (\\x00 to \\x1f) from both ends of a URL, as it "
                                "strips spaces (WHATWG URL): urlsplit strips them only in front, so strip both ends first",
    "https://api.example.com:65535/": "65535 is the highest port, and a port like any other",
}
URL_HINT = ("split the URL with urllib.parse.urlsplit, after turning each '\\' into '/' as a browser does, and compare "
            "the parts (scheme, host, port; no port means the scheme's default), never the text")
ENTRY_HINT = ("keep an entry only if the whole of it, lowercased, is https:// or wss://, an optional '*.', a host and "
              "an optional port (re.fullmatch); urlsplit reads a path, a user or a query and drops them without a word")


def _reads_csp_wrongly(error):
    """Whether an error is what reading a None csp, or one without connectDomains, raises."""
    return isinstance(error, (AttributeError, KeyError)) or (
        isinstance(error, TypeError) and any(word in str(error) for word in ("subscriptable", "iterable")))


def _raise_hint(csp, error):
    if (not isinstance(csp, dict) or "connectDomains" not in csp) and _reads_csp_wrongly(error):
        return "csp may be None (the resource declared nothing) or lack connectDomains"
    entries = csp.get("connectDomains") if isinstance(csp, dict) else None
    if isinstance(entries, list) and not all(isinstance(entry, str) for entry in entries):
        return ("ui.csp comes from the server and is untrusted like the View: an entry may be something other than a "
                "string; skip it (isinstance(entry, str))")
    if not isinstance(error, ValueError):
        return ("the error comes from your own code, not from parsing the URL: urlsplit gives None for a part the URL "
                "does not write (a port, a host), so test for None before you compare or compute with it")
    return ("the URL is untrusted too: urlsplit raises ValueError for a broken IPv6 host, and .port for a port out of "
            "range; a URL you cannot parse is blocked (return False)")


def check_connect_rule(may_connect):
    """may_connect(url, csp) -> True if the host's CSP lets the View connect to url, given the resource's ui.csp."""
    if missing(may_connect):
        not_done("write may_connect(url, csp)")
        return
    for csp, url, why_not in CONNECT_CASES:
        expected = allows(build_policy(csp), "connect-src", url)
        outcome = attempt(may_connect, url, copy.deepcopy(csp))
        if outcome.not_done:
            not_done("may_connect still raises NotImplementedError")
            return
        if outcome.error is not None:
            failed(f"may_connect({url!r}, {csp!r}) raised {outcome.error_text}", hint=_raise_hint(csp, outcome.error))
            return
        if not isinstance(outcome.value, bool):
            failed(f"may_connect({url!r}, {csp!r}) returned {shown(outcome.value)}, not True or False",
                   hint="return exactly True or False: a host acts on a yes or a no, never on an entry, None or 0")
            return
        if outcome.value is not expected:
            if expected:
                failed(f"may_connect({url!r}, {csp!r}) returned False: the View may reach it",
                       hint=ALLOWED_HINTS.get(url, "compare origins: scheme, host and port (no port means the "
                                                   "scheme's default; hosts compare without case); '*.' in front of "
                                                   "a host matches its subdomains"),
                       more=URL_HINT)
            else:
                failed(f"may_connect({url!r}, {csp!r}) returned True: the host must block it",
                       hint=why_not, more=ENTRY_HINT if approved_domains(csp)[1] else URL_HINT)
            return
    passed(f"Your rule blocked every undeclared origin and allowed the declared ones ({len(CONNECT_CASES)} cases).")

"""Exercise 21 checks (an MCP Apps host's refusals): right answers written differently pass, the wrong answers
learners write fail with the case and the hint that fits."""

import re
from urllib.parse import urlparse, urlsplit

import pytest

from checks import ex21_apps as apps
from mcpwire.apps.csp import allows, build_policy
from mcpwire.apps.host import malformed, visibility

BEFORE_INITIALIZED = ("ui/initialize", "ping")


# --- task 1 · view_gate -------------------------------------------------------------------------------------

def lacks_app(seen):
    return "app" not in seen


def valid_response(message):
    error = message.get("error")
    if ("result" in message) == ("error" in message):
        return False
    return "result" in message or (isinstance(error, dict) and isinstance(error.get("message"), str)
                                   and isinstance(error.get("code"), int) and not isinstance(error.get("code"), bool))


def gate(*, malformed_code=-32600, allowed_before=BEFORE_INITIALIZED, default_visibility=("model", "app"),
         refuses=lacks_app, id_types=(str, int), strict_id=True, checks_params=True, crashes_on_text=False,
         answers_notifications=False, empty_means_default=False, jsonrpc_as_text=False, response=valid_response,
         answer_members=("result", "error"), refusal_code=-32000, visibility_code=None):
    def view_gate(message, initialized, tools):
        if crashes_on_text:
            method = message.get("method")
        if not isinstance(message, dict):
            return {"code": malformed_code, "message": "Invalid Request"}
        if (str(message.get("jsonrpc")) if jsonrpc_as_text else message.get("jsonrpc")) != "2.0":
            return {"code": malformed_code, "message": "Invalid Request"}
        identifier = message.get("id")
        if "id" in message and (not isinstance(identifier, id_types) or (strict_id and isinstance(identifier, bool))):
            return {"code": malformed_code, "message": "Invalid Request"}
        if "method" not in message:
            return None if "id" in message and response(message) else {"code": malformed_code, "message": "Invalid Request"}
        if any(member in message for member in answer_members):
            return {"code": malformed_code, "message": "Invalid Request: a request carries no answer"}
        method = message["method"]
        if not isinstance(method, str) or (checks_params and not isinstance(message.get("params", {}), dict)):
            return {"code": malformed_code, "message": "Invalid Request"}
        if "id" not in message and not answers_notifications:
            return None
        if not initialized and method not in allowed_before:
            return {"code": refusal_code, "message": "not initialized"}
        if method == "tools/call":
            name = (message.get("params") or {}).get("name")
            tool = tools.get(name, {}) if isinstance(name, str) else {}
            ui = (tool.get("_meta") or {}).get("ui") or {}
            seen = (ui.get("visibility") or None) if empty_means_default else ui.get("visibility")
            if refuses(list(default_visibility) if seen is None else seen):
                return {"code": refusal_code if visibility_code is None else visibility_code,
                        "message": "not visible to apps"}
        return None
    return view_gate


def gate_on_the_kit(message, initialized, tools):
    """A right answer written on mcpwire's own helpers."""
    problem = malformed(message)
    if problem:
        return {"code": -32600, "message": f"Invalid Request: {problem}"}
    # malformed() lets any error member through, and a method beside an answer; visibility() reads [] as the
    # default: look at all three here.
    code = message["error"].get("code") if isinstance(message.get("error"), dict) else None
    if "error" in message and not (type(code) is int and isinstance(message["error"].get("message"), str)):
        return {"code": -32600, "message": "Invalid Request: error must be an object with code and message"}
    if "method" in message and {"result", "error"} & message.keys():
        return {"code": -32600, "message": "Invalid Request: a method and an answer in one message"}
    if "method" not in message or "id" not in message:
        return None
    if not initialized and message["method"] not in ("ui/initialize", "ping"):
        return {"code": 4002, "message": "wait for ui/notifications/initialized"}
    if message["method"] == "tools/call":
        name = (message.get("params") or {}).get("name")
        tool = tools.get(name) if isinstance(name, str) else None
        declared = ((tool or {}).get("_meta") or {}).get("ui", {}).get("visibility")
        if tool and "app" not in (visibility(tool) if declared is None else declared):
            return {"code": -40300, "message": f"{name} is model-only"}
    return None


def gate_with_match(message, initialized, tools):
    """A right answer written with structural pattern matching."""
    match message:
        case {"jsonrpc": "2.0", "id": bool()}:
            return {"code": -32600, "message": "bad id"}
        case {"jsonrpc": "2.0", "method": str(method), "id": str() | int(), **rest} if isinstance(
                rest.get("params", {}), dict) and not {"result", "error"} & rest.keys():
            if not initialized and method not in ("ui/initialize", "ping"):
                return {"code": -32000, "message": "too early"}
            match method, rest.get("params", {}).get("name"):
                case "tools/call", str(name) if "app" not in (tools.get(name) or {}).get("_meta", {}).get("ui", {}).get(
                        "visibility", ["model", "app"]):
                    return {"code": -32000, "message": "not for apps"}
            return None
        case {"jsonrpc": "2.0", "method": str(), **rest} if not {"id", "result", "error"} & rest.keys() and isinstance(
                rest.get("params", {}), dict):
            return None
        case {"jsonrpc": "2.0", "id": str() | int(), "result": _, **rest} if not {"error", "method"} & rest.keys():
            return None
        case {"jsonrpc": "2.0", "id": str() | int(), "error": {"code": int(code), "message": str()}, **rest} if (
                not {"result", "method"} & rest.keys() and not isinstance(code, bool)):
            return None
        case _:
            return {"code": -32600, "message": "Invalid Request"}


def gate_that_refuses_what_it_cannot_look_up(message, initialized, tools):
    """A right answer that refuses more: -32602 for params by position and for a tools/call naming no known tool."""
    refusal = gate()(message, initialized, tools)
    if isinstance(message, dict) and isinstance(message.get("params"), list) and "method" in message:
        return {"code": -32602, "message": "Invalid params: MCP's params is an object"}
    if refusal is None and "id" in message and message.get("method") == "tools/call":
        name = (message.get("params") or {}).get("name")
        if not isinstance(name, str) or name not in tools:
            return {"code": -32602, "message": f"Unknown tool: {name!r}"}
    return refusal


def gate_that_edits_what_it_is_given(message, initialized, tools):
    """A right answer that takes the name out of params and fills in each tool's default visibility as it reads."""
    params = message.get("params") if isinstance(message, dict) else None
    if isinstance(params, dict) and isinstance(params.get("name"), str) and params["name"] in tools:
        ui = tools[params["name"]].setdefault("_meta", {}).setdefault("ui", {})
        ui.setdefault("visibility", ["model", "app"])
        refusal = gate()(message, initialized, tools)
        params.pop("name")
        return refusal
    return gate()(message, initialized, tools)


def gate_that_does_not_know_mcps_initialize(message, initialized, tools):
    """A right answer that refuses MCP's initialize as a method the View-host wire does not have."""
    refusal = gate()(message, initialized, tools)
    if refusal is not None and isinstance(message, dict) and message.get("method") == "initialize":
        return {"code": -32601, "message": "Method not found: initialize (a View sends ui/initialize)"}
    return refusal


def lets_an_error_answer_without_an_id_go_on(message, initialized, tools):
    """A right answer that reads MCP's schema, where an error answer's id is optional."""
    if isinstance(message, dict) and not {"id", "method", "result"} & message.keys() and "error" in message:
        return gate()({**message, "id": 0}, initialized, tools)
    return gate()(message, initialized, tools)


def answers_unknown_methods_32601(message, initialized, tools):
    """A right answer that tells a method the View-host wire does not have by -32601, before any other refusal."""
    known = {"ui/initialize", "ping", "tools/call", "resources/read", "ui/open-link"}
    refusal = gate()(message, initialized, tools)
    if refusal and refusal["code"] == -32000 and message.get("method") not in known:
        return {"code": -32601, "message": f"Method not found: {message['method']}"}
    return refusal


def refuses_an_error_answer_with_a_null_id(message, initialized, tools):
    """A right answer that holds an error answer to MCP's schema, where an id, when present, is a string or integer."""
    if isinstance(message, dict) and "error" in message and "id" in message and message["id"] is None:
        return {"code": -32600, "message": "Invalid Request: a null id"}
    return lets_an_error_answer_with_a_null_id_go_on(message, initialized, tools)


def lets_an_error_answer_with_a_null_id_go_on(message, initialized, tools):
    """A right answer that reads JSON-RPC, where an error answer to a request whose id could not be read has null."""
    if isinstance(message, dict) and "error" in message and "method" not in message and message.get("id", 0) is None:
        return gate()({**message, "id": 0}, initialized, tools)
    return gate()(message, initialized, tools)


RIGHT_GATES = [("plain", gate()), ("on mcpwire", gate_on_the_kit), ("match", gate_with_match),
               ("refuses what it cannot look up", gate_that_refuses_what_it_cannot_look_up),
               ("edits what it is given", gate_that_edits_what_it_is_given),
               ("an application code", gate(refusal_code=4003)),
               ("a code just above JSON-RPC's range", gate(refusal_code=-31999)),
               ("a code below JSON-RPC's range", gate(refusal_code=-32769)),
               ("Method not found for MCP's initialize", gate_that_does_not_know_mcps_initialize),
               ("an error answer without an id goes on", lets_an_error_answer_without_an_id_go_on),
               ("Method not found for PING", answers_unknown_methods_32601),
               ("an error answer with a null id refused", refuses_an_error_answer_with_a_null_id),
               ("an error answer with a null id goes on", lets_an_error_answer_with_a_null_id_go_on)]


@pytest.mark.parametrize("right", [r for _, r in RIGHT_GATES], ids=[n for n, _ in RIGHT_GATES])
def test_right_gates_pass(verdict, right):
    assert verdict(apps.check_view_gate, right).startswith(f"✓ Your gate answered all {len(apps.GATE_CASES)}")


def test_a_gate_that_edits_its_arguments_passes_twice_in_one_kernel(verdict):
    for _ in range(2):
        assert verdict(apps.check_view_gate, gate_that_edits_what_it_is_given).startswith("✓ ")
    assert "visibility" not in apps.TOOLS["show_hypnogram"]["_meta"]["ui"]


def with_refusal(change):
    """The right gate, with each refusal it returns passed through `change` (a refusal of the wrong shape)."""
    def view_gate(message, initialized, tools):
        refusal = gate()(message, initialized, tools)
        return refusal if refusal is None else change(refusal, message)
    return view_gate


def reads_a_falsy_id_as_a_notification(message, initialized, tools):
    if isinstance(message, dict) and "method" in message and not message.get("id"):
        return None  # has_id = bool(message.get("id"))
    return gate()(message, initialized, tools)


def reads_a_null_id_as_a_notification(message, initialized, tools):
    if isinstance(message, dict) and "method" in message and message.get("id") is None:
        return None  # has_id = message.get("id") is not None
    return gate()(message, initialized, tools)


def strips_the_version(message, initialized, tools):
    if isinstance(message, dict) and isinstance(message.get("jsonrpc"), str):
        message = {**message, "jsonrpc": message["jsonrpc"].strip()}
    return gate()(message, initialized, tools)


def lowercases_the_method(message, initialized, tools):
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        message = {**message, "method": message["method"].lower()}
    return gate()(message, initialized, tools)


def lets_every_ui_method_in_early(message, initialized, tools):
    early = isinstance(message, dict) and str(message.get("method", "")).startswith("ui/")
    return gate()(message, initialized or early, tools)


def refuses_answers_before_initialized(message, initialized, tools):
    if not initialized and isinstance(message, dict) and "method" not in message:
        return {"code": -32000, "message": "not initialized"}
    return gate()(message, initialized, tools)


def applies_visibility_to_notifications(message, initialized, tools):
    if isinstance(message, dict) and "id" not in message and message.get("method") == "tools/call":
        return gate()({**message, "id": 0}, initialized, tools)
    return gate()(message, initialized, tools)


def looks_the_tool_up(read_name):
    """The right gate, after it has read the tool the way `read_name(message, tools)` does."""
    def view_gate(message, initialized, tools):
        refusal = gate()(message, initialized, tools)
        if refusal is None and isinstance(message, dict) and message.get("method") == "tools/call" and "id" in message:
            read_name(message, tools)
        return refusal
    return view_gate


GATE_WRONG = [
    ("refuses everything before initialized", gate(allowed_before=()), ["refused ui/initialize before initialized",
                                                                        "how it gets there"]),
    ("forgets ping", gate(allowed_before=("ui/initialize",)), ["refused ping before initialized"]),
    ("answers notifications", gate(answers_notifications=True), ["refused a size-changed notification", "never answered"]),
    ("reads visibility the wrong way round", gate(refuses=lambda seen: "model" not in seen),
     ["refused a tools/call of an app-only tool", "refuse only when \"app\" is missing"]),
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
    # found by a blind learner run: each of these got ✓
    ("reads id 0 or \"\" as no id", reads_a_falsy_id_as_a_notification,
     ["let a ui/open-link with id \"\" before initialized through", "\"id\" in message"]),
    ("reads a null id as no id", reads_a_null_id_as_a_notification,
     ["let an id that is null through", "-32600", "the ID MUST NOT be null"]),
    ("lets every ui/ request in before initialized", lets_every_ui_method_in_early,
     ["let a ui/open-link before initialized through", "only ui/initialize and ping"]),
    ("tests the method against one text", gate(allowed_before="ui/initialize ping"),
     ["let MCP's initialize (not ui/initialize) before initialized through", "compare the method with =="]),
    ("refuses only exactly [\"model\"]", gate(refuses=lambda seen: seen == ["model"]),
     ["let a tools/call of a tool whose visibility is [] through", "a declared [] lacks \"app\""]),
    ("reads visibility [] as the default", gate(empty_means_default=True),
     ["let a tools/call of a tool whose visibility is [] through"]),
    ("refuses a tool when \"model\" is in its visibility", gate(refuses=lambda seen: "model" in seen),
     ["refused a tools/call of a tool visible to model and app", "refuse only when \"app\" is missing"]),
    ("accepts an id that is a float", gate(id_types=(str, int, float)), ["let an id that is 1.5 through", "a float"]),
    ("refuses string ids", gate(id_types=(int,)), ["refused the View's answer to a host's ping",
                                                   "with code -32600 (Invalid Request), but this message is valid",
                                                   "its id \"host-1\" is a string"]),
    ("accepts jsonrpc 2.0 as a number", gate(jsonrpc_as_text=True),
     ["let jsonrpc 2.0 written as a number through", "the string \"2.0\""]),
    ("refuses the View's answers before initialized", refuses_answers_before_initialized,
     ["refused the View's answer to a host's ping before initialized", "a response is never refused"]),
    ("accepts both result and error", gate(response=lambda m: "result" in m or "error" in m),
     ["let a response with both result and error through", "never both"]),
    ("accepts a response with neither result nor error", gate(response=lambda m: not ("result" in m and "error" in m)),
     ["let a response with neither result nor error through", "this has neither"]),
    ("does not look inside error", gate(response=lambda m: ("result" in m) != ("error" in m)),
     ["let an error answer whose error is not an object through", "an integer code and a string message"]),
    ("refuses a model-only tools/call notification", applies_visibility_to_notifications,
     ["refused a tools/call notification (no id) of a model-only tool", "never refused, whatever its method"]),
    ("indexes tools by the name", looks_the_tool_up(lambda message, tools: tools[message["params"]["name"]]),
     ["view_gate raised KeyError: 'delete_everything' for a tools/call of a tool the server does not have",
      "untrusted", "never tools[name]"]),
    ("indexes the message for params", looks_the_tool_up(lambda message, tools: tools.get(message["params"]["name"])),
     ["view_gate raised KeyError: 'params' for a tools/call without params", "untrusted", "params may be missing"]),
    ("looks a list up in tools", looks_the_tool_up(lambda message, tools: tools.get((message.get("params") or {}).get("name"))),
     ["view_gate raised TypeError: unhashable type: 'list' for a tools/call whose name is a list",
      "check isinstance(name, str)"]),
    ("accepts a result with a null id", lambda message, initialized, tools: None if (
        isinstance(message, dict) and "result" in message and message.get("id", 0) is None) else gate()(
        message, initialized, tools),
     ["let a result answer with a null id through", "never null"]),
    ("lets a batch through", lambda message, initialized, tools: None if isinstance(message, list) else gate()(
        message, initialized, tools), ["let a batch (a list of messages) through", "dropped JSON-RPC batches"]),
    # found by a fresh reading: each of these got ✓
    ("takes any dict for an error object", gate(response=lambda m: ("result" in m) != ("error" in m) and (
        "result" in m or isinstance(m["error"], dict))),
     ["let an error answer whose error has no code through", "an integer code and a string message"]),
    ("takes a bool for an error's code", gate(response=lambda m: ("result" in m) != ("error" in m) and (
        "result" in m or (isinstance(m["error"], dict) and isinstance(m["error"].get("code"), int)
                          and isinstance(m["error"].get("message"), str)))),
     ["let an error answer whose code is true through", "test for bool first"]),
    ("does not look for an error's message", gate(response=lambda m: ("result" in m) != ("error" in m) and (
        "result" in m or (isinstance(m["error"], dict) and type(m["error"].get("code")) is int))),
     ["let an error answer whose error has no message through", "a string message"]),
    ("lets a request carry a result", gate(answer_members=()),
     ["let a ping that carries a result too through", "-32600", "read as a request and as a response"]),
    ("lets a request carry an error", gate(answer_members=("result",)),
     ["let a tools/call that carries an error too through", "neither a result nor an error"]),
    ("refuses with a code MCP reserves", gate(refusal_code=-32050),
     ["refused a tools/call before initialized with code -32050, which is reserved by MCP", "MUST NOT be emitted",
      "say 4003", "basic/index#error-codes"]),
    ("refuses with Method not found", gate(refusal_code=-32601), ["with code -32601, which is JSON-RPC's Method not found"]),
    ("refuses with Internal error", gate(refusal_code=-32603), ["with code -32603, which is JSON-RPC's Internal error"]),
    ("refuses an early request as Invalid Request", gate(refusal_code=-32600),
     ["refused a tools/call before initialized with code -32600, which is JSON-RPC's Invalid Request, but this "
      "request is valid"]),
    ("refuses a model-only tool as an unknown one", gate(visibility_code=-32602),
     ["refused a tools/call of a model-only tool with code -32602, which is JSON-RPC's Invalid params",
      "this one it has"]),
    ("refuses with a legacy MCP code", gate(refusal_code=-32001), ["in MCP's legacy range", "SHOULD NOT"]),
    ("refuses with MCP's retired resource code", gate(refusal_code=-32002), ["MCP's retired Resource not found"]),
    ("refuses with MCP's HeaderMismatch", gate(refusal_code=-32020), ["with code -32020, which is MCP's HeaderMismatch"]),
    ("refuses with a code JSON-RPC reserves", gate(refusal_code=-32500), ["inside -32768…-32000, the range JSON-RPC reserves for its predefined errors"]),
    ("refuses an unknown tool with a code MCP reserves", lambda message, initialized, tools: (
        {"code": -32050, "message": "unknown tool"} if isinstance(message, dict) and "id" in message
        and message.get("method") == "tools/call" and message.get("params") == {"name": "delete_everything", "arguments": {}}
        else gate()(message, initialized, tools)),
     ["refused a tools/call of a tool the server does not have with code -32050"]),
    # found by a second blind learner run: each of these got ✓ or was told the wrong cause
    ("lets every notification through unchecked", lambda message, initialized, tools: None if (
        isinstance(message, dict) and "method" in message and "id" not in message) else gate()(
        message, initialized, tools),
     ["let a notification without jsonrpc through", "under the same rules", "before you let it go on"]),
    ("checks jsonrpc only when there is an id", lambda message, initialized, tools: gate()(
        {**message, "jsonrpc": "2.0"} if isinstance(message, dict) and "id" not in message and "method" in message
        else message, initialized, tools),
     ["let a notification without jsonrpc through", "-32600"]),
    ("checks for an answer only in requests", lambda message, initialized, tools: gate()(
        {key: value for key, value in message.items() if key not in ("result", "error")}
        if isinstance(message, dict) and "id" not in message and "method" in message else message, initialized, tools),
     ["let a notification that carries a result through", "read as a request and as a response"]),
    ("takes a result without an id", lambda message, initialized, tools: gate()(
        {"id": 0, **message} if isinstance(message, dict) and "method" not in message else message, initialized, tools),
     ["let a result answer without an id through", "carries that request's id"]),
    ("takes params that are a string", lambda message, initialized, tools: gate()(
        {**message, "params": {}} if isinstance(message, dict) and isinstance(message.get("params"), str) else message,
        initialized, tools),
     ["let params that are a string through", "must be an object"]),
    ("tests params only when not None", lambda message, initialized, tools: gate()(
        {key: value for key, value in message.items() if not (key == "params" and value is None)}
        if isinstance(message, dict) else message, initialized, tools),
     ["let params that are null through", "not whether its value is None"]),
    ("refuses an error answer whose code is outside JSON-RPC's range", gate(response=lambda m: valid_response(m) and (
        "result" in m or m["error"]["code"] in range(-32768, -31999))),
     ["refused the View's error answer with an application code with code -32600 (Invalid Request), but this "
      "message is valid", "like 4003, are the application's own"]),
    ("takes a float for an error's code", gate(response=lambda m: ("result" in m) != ("error" in m) and (
        "result" in m or (isinstance(m["error"], dict) and isinstance(m["error"].get("code"), (int, float))
                          and not isinstance(m["error"].get("code"), bool)
                          and isinstance(m["error"].get("message"), str)))),
     ["let an error answer whose code is -32603.5 through", "a float, not an integer"]),
    ("applies the kit's rule before the shape check", lambda message, initialized, tools: (
        {"code": -32000, "message": "not initialized"} if not initialized and isinstance(message, dict)
        and "id" in message and message.get("method") not in ("ui/initialize", "ping", None)
        else gate()(message, initialized, tools)),
     ["refused a tools/call with params that are a list before initialized with code -32000, not -32600 or -32602",
      "before the kit's rule"]),
    ("refuses members it does not know", lambda message, initialized, tools: (
        {"code": -32600, "message": "unknown member"} if isinstance(message, dict)
        and set(message) - {"jsonrpc", "id", "method", "params", "result", "error"}
        else gate()(message, initialized, tools)),
     ["refused a ping with a member MCP does not define with code -32600 (Invalid Request), but this message is valid",
      "does not forbid other members"]),
    ("returns False to go on", lambda message, initialized, tools: gate()(message, initialized, tools) or False,
     ["answered ui/initialize before initialized with False, which is neither None (go on) nor an error object",
      "return None to let the host go on"]),
    ("tests a result by its truth", gate(response=lambda m: bool(m.get("result")) != bool(m.get("error"))
                                         and valid_response(m)),
     ["refused the View's answer to a host's ping before initialized with code -32600 (Invalid Request)",
      "its result {} is a result"]),
    # A blind learner run: -32602 for params that are null, or anything but an object, passed; the task allows it
    # only for a list, which JSON-RPC allows and MCP does not.
    ("answers -32602 for params that are null", lambda message, initialized, tools: (
        {"code": -32602, "message": "Invalid params"} if isinstance(message, dict) and "params" in message
        and message["params"] is None else gate()(message, initialized, tools)),
     ["refused params that are null with code -32602, not -32600", "fits only params JSON-RPC allows, a list"]),
    ("answers -32602 for params that are not an object", lambda message, initialized, tools: (
        {"code": -32602, "message": "Invalid params"} if isinstance(message, dict) and "params" in message
        and not isinstance(message["params"], dict) else gate()(message, initialized, tools)),
     ["refused params that are a string with code -32602, not -32600", "is not even valid JSON-RPC"]),
    # A blind learner's, each ✓ before its case was added.
    ("strips the jsonrpc version", strips_the_version,
     ["let jsonrpc \" 2.0 \" with white space around it through", "never strip() it"]),
    ("lowercases the method", lowercases_the_method,
     ["let PING (not ping) before initialized through", "compared exactly, case and all"]),
    ("calls an id of \"\" or 0 invalid", lambda message, initialized, tools: (
        {"code": -32600, "message": "empty id"} if isinstance(message, dict) and message.get("id", 1) in ("", 0)
        and not isinstance(message.get("id"), bool) else gate()(message, initialized, tools)),
     ["refused a ui/open-link with id \"\" before initialized with code -32600", "test \"id\" in message"]),
    # A blind learner's (session 11), each ✓ before its case was added.
    ("checks params only when there is an id", lambda message, initialized, tools: gate()(
        {key: value for key, value in message.items() if key != "params"}
        if isinstance(message, dict) and "method" in message and "id" not in message else message, initialized, tools),
     ["let a size-changed notification with params that are a string through", "under the same rules"]),
    ("lets an error answer with any id go on", lambda message, initialized, tools: gate()(
        {**message, "id": 0} if isinstance(message, dict) and "method" not in message and "error" in message
        and "id" in message else message, initialized, tools),
     ["let an error answer whose id is 1.5 through", "only an error answer without an id or with a null id"]),
    ("checks jsonrpc only when there is a method", lambda message, initialized, tools: gate()(
        {**message, "jsonrpc": "2.0"} if isinstance(message, dict) and "method" not in message else message,
        initialized, tools),
     ["let a result answer without jsonrpc through", "a response too"]),
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


class Unprintable:
    def __repr__(self):
        raise RuntimeError("no repr")


REFUSAL_SHAPES = [
    ("a bare string", lambda refusal, message: refusal["message"], "it is a str, not a dict"),
    ("a whole response", lambda refusal, message: {"jsonrpc": "2.0", "id": message.get("id"), "error": refusal},
     "it is a whole response; return only its error object"),
    ("code as a string", lambda refusal, message: {**refusal, "code": str(refusal["code"])}, "its code is a str, not an int"),
    ("code True", lambda refusal, message: {**refusal, "code": True}, "its code is a bool, not an int"),
    ("code as a float", lambda refusal, message: {**refusal, "code": float(refusal["code"])}, "its code is a float"),
    ("no message", lambda refusal, message: {"code": refusal["code"]}, "its message is missing, not a str"),
    ("message None", lambda refusal, message: {**refusal, "message": None}, "its message is missing"),
    ("a list", lambda refusal, message: [refusal["code"], refusal["message"]], "it is a list, not a dict"),
    ("an object whose repr raises", lambda refusal, message: Unprintable(),
     "a Unprintable whose repr raised RuntimeError"),
]


@pytest.mark.parametrize("change, phrase", [(c, p) for _, c, p in REFUSAL_SHAPES], ids=[n for n, _, _ in REFUSAL_SHAPES])
def test_a_refusal_of_the_wrong_shape_is_named_not_called_a_pass(verdict, change, phrase):
    out = verdict(apps.check_view_gate, with_refusal(change))
    assert out.startswith("✗ Your gate refused a tools/call before initialized with "), out
    assert "not an error object" in out and phrase in out and '{"code": <an int>, "message": <a str>}' in out, out
    assert "let " not in out.splitlines()[0], out


def test_gate_stub(verdict):
    def stub(message, initialized, tools):
        raise NotImplementedError("your code here")
    assert verdict(apps.check_view_gate, stub).startswith("not done yet")


# --- task 2 · may_connect -----------------------------------------------------------------------------------

def connect_on_the_kit(url, csp):
    return allows(build_policy(csp), "connect-src", url)


DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def origin_of(text, *, backslash_ends_host=True, default_ports=True, strips=True, space_fails=True):
    """(scheme, host, port) of a URL or an entry, or None when it cannot be parsed."""
    if strips:
        text = text.strip("".join(chr(code) for code in range(0x21)))  # a browser strips these from both ends
    try:
        parts = urlsplit(text.replace("\\", "/") if backslash_ends_host else text)
        port = parts.port
    except ValueError:
        return None
    if space_fails and " " in (parts.hostname or ""):
        return None  # a host with a space does not parse
    return parts.scheme, parts.hostname or "", DEFAULT_PORTS.get(parts.scheme) if port is None and default_ports else port


def is_origin_entry(entry, *, ipv6=False, empty_port=False):
    """Whether an entry is an https or wss origin and nothing more, read by urlsplit's parts instead of a pattern."""
    if not isinstance(entry, str) or any(character in entry for character in ";,'\"\\ ") or "://" not in entry \
            or (entry.endswith(":") and not empty_port):
        return False
    if "[" in entry and not ipv6:
        return False
    parts = urlsplit(entry)
    return (parts.scheme in ("https", "wss") and not (parts.path or parts.query or parts.fragment)
            and "@" not in parts.netloc and "?" not in entry and "#" not in entry)


def connect_by_parts(url, csp, *, keeps=is_origin_entry, **reading):
    target = origin_of(url, **reading)
    for entry in (csp or {}).get("connectDomains") or []:
        if target is None or not keeps(entry):
            continue
        allowed = origin_of(entry, **reading)
        if allowed is None or not allowed[1] or (allowed[0], allowed[2]) != (target[0], target[2]):
            continue
        host = allowed[1]
        if host == target[1] or (host.startswith("*.") and target[1].endswith(host[1:])):
            return True
    return False


ENTRY = re.compile(r"(https|wss)://(\*\.)?([a-z0-9.-]+)(?::(\d+))?")


def connect_by_regex(url, csp, entry_pattern=ENTRY):
    """A right answer that keeps only entries a regex calls origins and blocks any URL with a backslash."""
    url = re.sub(r"[\t\n\r]", "", re.sub(r"^[\x00-\x20]+|[\x00-\x20]+$", "", url))
    if "\\" in url or re.search(r"\s", url.split("/")[2] if url.count("/") >= 2 else url):
        return False
    try:
        target = urlparse(url)
        port = target.port
    except ValueError:
        return False
    wanted = (target.scheme, target.hostname, {"https": 443, "wss": 443}.get(target.scheme, 80) if port is None else port)
    for entry in (csp or {}).get("connectDomains", []) if isinstance(csp, dict) else []:
        match = entry_pattern.fullmatch(entry.lower()) if isinstance(entry, str) else None
        if not match:
            continue
        scheme, star, host, port = match.groups()
        declared = (scheme, host, int(port) if port else {"https": 443, "wss": 443}.get(scheme, 80))
        if star and wanted[0::2] == declared[0::2] and (wanted[1] or "").endswith("." + host):
            return True
        if not star and wanted == declared:
            return True
    return False


@pytest.mark.parametrize("right", [connect_on_the_kit, connect_by_parts, connect_by_regex],
                         ids=["on mcpwire", "by parts", "by regex"])
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


def entries_of(csp):
    return (csp or {}).get("connectDomains") or []


def with_entries(change):
    """The right rule, after each declared connect entry went through `change` (text -> list of texts)."""
    def may_connect(url, csp):
        return connect_by_parts(url, {"connectDomains": [
            part for entry in entries_of(csp) if isinstance(entry, str) for part in change(entry)]})
    return may_connect


def wss_default_port_80(url, csp):
    def with_80(text):
        return text.replace(".com/", ".com:80/") if text.startswith("wss://") and ".com/" in text else (
            f"{text}:80" if text.startswith("wss://") and text.count(":") == 1 else text)
    return connect_by_parts(with_80(url), {"connectDomains": [with_80(entry) for entry in entries_of(csp)
                                                              if isinstance(entry, str)]})


def wildcard_ignores_the_port(url, csp):
    if origin_of(url) is None:
        return False
    parts = urlsplit(url)
    wildcards = [entry for entry in entries_of(csp) if isinstance(entry, str) and "://*." in entry]
    return connect_by_parts(url, csp) or connect_by_parts(parts._replace(netloc=parts.hostname or "").geturl(),
                                                          {"connectDomains": wildcards})


def port_star_means_any_port(url, csp):
    if origin_of(url) is None:
        return False
    parts = urlsplit(url)
    return connect_by_parts(url, csp) or any(
        entry.endswith(":*") and urlsplit(entry[:-2])[:2] == (parts.scheme, parts.hostname)
        for entry in entries_of(csp) if isinstance(entry, str))


def user_name_to_the_first_at(url, csp):
    """A blind learner's hand-written parser: the host starts after the first '@', so 'v@api.example.com' matches no
    entry (urlsplit, and a browser, split at the last)."""
    authority = re.split(r"[/\\?#]", url.partition("://")[2], maxsplit=1)[0]
    if authority.count("@") > 1:
        return False
    return connect_by_parts(url, csp)


def entry_port_modulo(url, csp):
    """A hand-written parser that reads an entry's port as digits and wraps it into 16 bits, as a C uint16 would."""
    def wrapped(entry):
        found = re.fullmatch(r"(https|wss)://([a-z0-9.-]+):(\d+)", entry.lower())
        return found and (found[1], found[2], int(found[3]) % 65536)
    target = origin_of(url)
    return connect_by_parts(url, csp) or target is not None and any(
        wrapped(entry) == target for entry in entries_of(csp) if isinstance(entry, str))


def port_without_range(url, csp):
    """A hand-written parser that takes up to five digits as the port and never checks 65535."""
    def read(text, rest):
        found = re.fullmatch(r"(https|wss)://([a-z0-9.-]+)(?::(\d{1,5}))?" + rest, text.lower())
        return found and (found[1], found[2], int(found[3]) if found[3] else 443)
    target = read(url, "(/.*)?")
    return connect_by_parts(url, csp) or bool(target) and any(
        read(entry, "") == target for entry in entries_of(csp) if isinstance(entry, str))


def one_string_as_one_entry(url, csp):
    if isinstance(csp, dict) and isinstance(csp.get("connectDomains"), str):
        csp = {**csp, "connectDomains": [csp["connectDomains"]]}
    return connect_by_parts(url, csp)


def origin_in_the_list(url, csp):
    """`origin in connectDomains`: on a list it tests the entries, on a string it finds a substring."""
    target = origin_of(url)
    entries = csp.get("connectDomains") if isinstance(csp, dict) else None
    if target is None or not entries:
        return False
    port = "" if target[2] == 443 else f":{target[2]}"
    return connect_by_parts(url, csp) or isinstance(entries, str) and f"{target[0]}://{target[1]}{port}" in entries


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
    # found by a blind learner run: each of these got ✓
    ("takes the host before the '@'", lambda url, csp: connect_by_parts(
        urlsplit(url)._replace(netloc=urlsplit(url).netloc.split("@")[0]).geturl(), csp),
     ["'https://api.example.com@evil.net/'", "after the '@'"]),
    ("cuts an entry down at ';'", lambda url, csp: connect_by_parts(url, {"connectDomains": [
        entry.split(";")[0] for entry in (csp or {}).get("connectDomains", [])]}),
     ["may_connect('https://api.example.com/v1', {'connectDomains': ['https://api.example.com; connect-src *']}) "
      "returned True", "ignored whole"]),
    ("drops the entry's port", lambda url, csp: connect_by_parts(url, {"connectDomains": [
        entry.replace(":8443", "") for entry in (csp or {}).get("connectDomains", [])]}),
     ["may_connect('wss://live.example.com:8443/feed'", "returned False: the View may reach it"]),
    ("any port when the URL names none", lambda url, csp: connect_by_parts(url, csp) or (
        urlsplit(url).port is None and connect_by_parts(url.replace(".com/", ".com:8443/"), csp)),
     ["may_connect('wss://live.example.com/feed'", "means 443, not 8443"]),
    ("fnmatch on the host", lambda url, csp: connect_by_parts(url, csp) or any(
        __import__("fnmatch").fnmatch(urlsplit(url).hostname or "", urlsplit(entry).hostname or "")
        for entry in (csp or {}).get("connectDomains", []) if "*" in entry and ";" not in entry),
     ["may_connect('https://badexample.com/', {'connectDomains': ['https://*example.com']}) returned True",
      "only as '*.'"]),
    ("reads .port unguarded", lambda url, csp: urlsplit(url).port == urlsplit(url).port and connect_by_parts(url, csp),
     ["may_connect('https://api.example.com:99999/'", "raised ValueError", "the URL is untrusted too"]),
    ("urlsplit's host for a backslash", lambda url, csp: connect_by_parts(url, csp, backslash_ends_host=False),
     ["'https://evil.net\\\\@api.example.com/'", "returned True", "the host is evil.net", "turning each '\\'"]),
    ("compares ports as written", lambda url, csp: connect_by_parts(url, csp, default_ports=False),
     ["may_connect('https://api.example.com:443/v1'", "returned False", "the scheme's default"]),
    ("compares the host text", lambda url, csp: connect_by_parts(url, csp) and urlsplit(url).netloc.islower(),
     ["may_connect('https://API.Example.com/v1'", "without case"]),
    # found by a fresh reading: the reference solution itself got ✓ with the first
    ("reads an entry with urlsplit", lambda url, csp: connect_by_parts(
        url, csp, keeps=lambda entry: "://" in entry and not any(character in entry for character in ";,'\" ")),
     ["may_connect('https://api.example.com/v1', {'connectDomains': ['https://api.example.com/']}) returned True",
      "even a trailing '/'", "re.fullmatch", "urlsplit reads a path"]),
    ("strips an entry's trailing '/'", lambda url, csp: connect_by_parts(url, {"connectDomains": [
        entry.rstrip("/") for entry in (csp or {}).get("connectDomains", [])]}),
     ["{'connectDomains': ['https://api.example.com/']}) returned True", "even a trailing '/'"]),
    ("keeps an entry with a user name", lambda url, csp: connect_by_parts(
        url, csp, keeps=lambda entry: is_origin_entry(entry.replace("user@", ""))),
     ["{'connectDomains': ['https://user@api.example.com']}) returned True", "a user name"]),
    ("keeps an entry with a query", lambda url, csp: connect_by_parts(
        url, csp, keeps=lambda entry: is_origin_entry(entry.partition("?")[0])),
     ["{'connectDomains': ['https://api.example.com?v=1']}) returned True", "a query"]),
    ("checks an entry's path before turning '\\' into '/'", lambda url, csp: connect_by_parts(
        url, csp, keeps=lambda entry: "://" in entry and not urlsplit(entry).path and "@" not in entry
        and "?" not in entry and not any(character in entry for character in ";,'\" ")),
     ["{'connectDomains': ['https://api.example.com\\\\']}) returned True", "a backslash"]),
    ("keeps http and ws entries", lambda url, csp: connect_by_regex(
        url, csp, re.compile(r"(https?|wss?)://(\*\.)?([a-z0-9.-]+)(?::(\d+))?")),
     ["{'connectDomains': ['http://api.example.com']}) returned True", "keeps only https and wss entries"]),
    # found by a third blind learner run: an http or ws entry read as its https or wss upgrade got ✓
    ("keeps an http entry as its https upgrade", with_entries(
        lambda entry: [re.sub(r"^http://", "https://", re.sub(r"^ws://", "wss://", entry))]),
     ["may_connect('https://plain.example.com/v1', {'connectDomains': ['http://plain.example.com']}) returned True",
      "not even the https URL"]),
    ("keeps a ws entry as its wss upgrade", with_entries(
        lambda entry: [re.sub(r"^ws://", "wss://", entry)] if entry.startswith("ws://") else [entry]),
     ["may_connect('wss://feed.example.com/live', {'connectDomains': ['ws://feed.example.com']}) returned True",
      "not even the wss URL"]),
    # found by a second blind learner run: each of these got ✓
    ("splits an entry on spaces", with_entries(str.split),
     ["may_connect('https://evil.net/', {'connectDomains': ['https://api.example.com https://evil.net']}) returned "
      "True", "a space would start a second source"]),
    ("splits an entry on ','", with_entries(lambda entry: entry.split(",")),
     ["{'connectDomains': ['https://api.example.com,https://evil.net']}) returned True", "not split into two"]),
    ("strips an entry", with_entries(lambda entry: [entry.strip()]),
     ["{'connectDomains': [' https://api.example.com']}) returned True", "never strip it"]),
    ("reads an entry without a scheme as https", with_entries(
        lambda entry: [entry if "://" in entry else f"https://{entry}"]),
     ["{'connectDomains': ['api.example.com']}) returned True", "an entry without a scheme"]),
    ("reads ':*' as any port", port_star_means_any_port,
     ["may_connect('wss://live.example.com:9/', {'connectDomains': ['wss://live.example.com:*']}) returned True",
      "':*' is not a port"]),
    ("lets a wss entry reach https (CSP3's scheme-part match)", lambda url, csp: connect_by_parts(url, csp) or (
        url.startswith("https://") and connect_by_parts("wss://" + url.removeprefix("https://"), csp)),
     ["may_connect('https://live.example.com/', {'connectDomains': ['wss://live.example.com']}) returned True",
      "matches the scheme exactly", "CSP3's text"]),
    ("takes 80 for wss without a port", wss_default_port_80,
     ["may_connect('wss://live.example.com:80/'", "returned True", "443, not 80"]),
    ("ignores the port for a '*.' entry", wildcard_ignores_the_port,
     ["may_connect('https://a.example.com:8443/', {'connectDomains': ['https://*.example.com']}) returned True",
      "for a '*.' entry too"]),
    ("takes port 0 for no port (port or 443)", lambda url, csp: connect_by_parts(url.replace(":0/", "/"), csp),
     ["may_connect('https://api.example.com:0/'", "returned True", "port 0 is a port"]),
    ("strips a trailing dot from the host", lambda url, csp: origin_of(url) is not None and connect_by_parts(
        urlsplit(url)._replace(netloc=urlsplit(url).netloc.rstrip(".")).geturl(), csp),
     ["may_connect('https://api.example.com./'", "returned True", "without stripping dots"]),
    ("keeps an IPv6 entry", lambda url, csp: connect_by_parts(url, csp, keeps=lambda entry: is_origin_entry(
        entry, ipv6=True)),
     ["may_connect('https://[::1]/', {'connectDomains': ['https://[::1]']}) returned True", "cannot name an IPv6"]),
    ("reads every entry as a string", lambda url, csp: connect_by_parts(url, csp, keeps=lambda entry: (
        "://" in entry and is_origin_entry(entry))),
     ["{'connectDomains': [None, 443, 'https://api.example.com']}) raised TypeError",
      "an entry may be something other than a string"]),
    ("gives up at an entry that is not a string", lambda url, csp: all(
        isinstance(entry, str) for entry in entries_of(csp)) and connect_by_parts(url, csp),
     ["may_connect('https://api.example.com/v3', {'connectDomains': [None, 443, 'https://api.example.com']}) "
      "returned False", "the entries after it still count"]),
    ("drops an entry written in capitals", lambda url, csp: connect_by_parts(url, {"connectDomains": [
        entry for entry in entries_of(csp) if isinstance(entry, str) and entry == entry.lower()]}),
     ["may_connect('https://api.example.com/v2', {'connectDomains': ['HTTPS://API.Example.com']}) returned False",
      "have no case either"]),
    ("compares the scheme as written", lambda url, csp: connect_by_parts(url, csp) and url.split(":")[0].islower(),
     ["may_connect('HTTPS://api.example.com/v1'", "returned False", "HTTPS: is https:"]),
    ("blocks every URL with a user name", lambda url, csp: connect_by_parts(url, csp) and "@" not in url,
     ["may_connect('https://user:secret@api.example.com/v1'", "returned False", "are not the host"]),
    ("keeps a tab in the host", lambda url, csp: connect_by_parts(url, csp) and "\t" not in url,
     ["may_connect('https://api.exa\\tmple.com/v1'", "returned False", "removes tabs and newlines"]),
    ("ends the user name at the first '@'", user_name_to_the_first_at,
     ["may_connect('https://u@v@api.example.com/v1'", "returned False", "ends at the last '@', not the first"]),
    # A blind learner's, each ✓ before its case was added.
    ("blocks an empty port", lambda url, csp: connect_by_parts(url, csp) and not re.search(r"://[^/]*:(/|$)", url),
     ["may_connect('https://api.example.com:/v4'", "returned False", "no port after it is no port"]),
    ("leaves the white space around a URL", lambda url, csp: connect_by_parts(url, csp, strips=False),
     ["may_connect(' https://api.example.com '", "returned False", "from both ends of a URL"]),
    ("keeps a space inside the host", lambda url, csp: connect_by_parts(url, csp, space_fails=False),
     ["may_connect('https://evil .example.com/'", "returned True", "forbidden host code point"]),
    ("reads an entry's empty port as none", lambda url, csp: connect_by_parts(url, csp, keeps=lambda entry: (
        is_origin_entry(entry, empty_port=True))),
     ["{'connectDomains': ['https://api.example.com:']}) returned True", "a CSP port is digits"]),
    ("wraps an entry's port into 16 bits", entry_port_modulo,
     ["{'connectDomains': ['https://api.example.com:65979']}) returned True", "even modulo 65536"]),
    ("never checks a port's range", port_without_range,
     ["may_connect('https://api.example.com:65536/'", "returned True", "above 65535 does not parse"]),
    ("reads a connectDomains string as one entry", one_string_as_one_entry,
     ["{'connectDomains': 'https://api.example.com'}) returned True", "McpUiResourceCsp: string[]"]),
    ("tests the origin with `in` on a string", origin_in_the_list,
     ["{'connectDomains': 'https://api.example.com'}) returned True", "drops a string whole"]),
    ("refuses port 65535", lambda url, csp: connect_by_parts(url, csp) and ":65535" not in url,
     ["may_connect('https://api.example.com:65535/'", "returned False", "65535 is the highest port"]),
    # A blind learner's (session 11), ✓ before its case was added: urlsplit strips the leading control characters
    # itself, not a trailing one after the host.
    ("strips only spaces from a URL's ends", lambda url, csp: connect_by_parts(url.strip(" "), csp, strips=False),
     ["may_connect('https://api.example.com\\x01'", "returned False", "control characters"]),
]


def never_printable(url, csp):
    class Unprintable:
        def __repr__(self):
            raise RuntimeError("no repr")
    return Unprintable()


@pytest.mark.parametrize("wrong, phrase", [
    (lambda url, csp: True if connect_by_parts(url, csp) else None, "returned None, not True or False"),
    (lambda url, csp: 1 if connect_by_parts(url, csp) else 0, "returned 0, not True or False"),
    (lambda url, csp: next((entry for entry in (csp or {}).get("connectDomains", [])
                            if connect_by_parts(url, {"connectDomains": [entry]})), False),
     "returned 'https://api.example.com', not True or False"),
    (never_printable, "returned a Unprintable whose repr raised RuntimeError, not True or False"),
], ids=["None for no", "1 and 0", "the entry for yes", "an object whose repr raises"])
def test_a_rule_that_answers_other_than_true_or_false_is_told_so(verdict, wrong, phrase):
    out = verdict(apps.check_connect_rule, wrong)
    assert out.startswith("✗ may_connect(") and phrase in out and "return exactly True or False" in out, out
    assert "connect-src 'none'" not in out, out


def test_every_connect_case_says_why_exactly_when_the_kit_blocks_it():
    assert [why is None for _, _, why in apps.CONNECT_CASES] == [
        allows(build_policy(csp), "connect-src", url) for csp, url, _ in apps.CONNECT_CASES]


def test_a_hint_for_a_url_the_view_may_reach_names_one_allowed_case():
    allowed = [url for _, url, why in apps.CONNECT_CASES if why is None]
    assert all(allowed.count(url) == 1 for url in apps.ALLOWED_HINTS), apps.ALLOWED_HINTS.keys()


@pytest.mark.parametrize("wrong, phrases", [(w, p) for _, w, p in CONNECT_WRONG], ids=[n for n, _, _ in CONNECT_WRONG])
def test_wrong_connect_rules_fail_with_the_case(verdict, wrong, phrases):
    out = verdict(apps.check_connect_rule, wrong)
    assert out.startswith("✗ may_connect(") and all(phrase in out for phrase in phrases), out


def test_a_rule_that_crashes_on_none_is_told_so(verdict):
    out = verdict(apps.check_connect_rule, lambda url, csp: url in csp.get("connectDomains", []))
    assert out.startswith("✗ may_connect('https://api.example.com/v1', None) raised AttributeError")
    assert "csp may be None" in out


def test_a_rule_that_trips_over_a_missing_port_is_not_sent_to_urlsplit(verdict):
    def compares_none(url, csp):
        return urlsplit(url).port > 0 and connect_by_parts(url, csp)
    out = verdict(apps.check_connect_rule, compares_none)
    assert out.startswith("✗ may_connect('https://api.example.com/v1', None) raised TypeError"), out
    assert "from your own code" in out and "test for None" in out, out
    assert "broken IPv6" not in out and "csp may be None" not in out, out


def test_a_rule_that_blocks_everything_fails_on_the_declared_origin(verdict):
    out = verdict(apps.check_connect_rule, lambda url, csp: False)
    assert out.startswith("✗ may_connect('https://api.example.com/v1/nights'") and "the View may reach it" in out


def test_connect_stub(verdict):
    def stub(url, csp):
        raise NotImplementedError("your code here")
    assert verdict(apps.check_connect_rule, stub).startswith("not done yet")


def test_a_gate_that_knows_the_tool_names_by_heart_fails(verdict):
    # A blind learner's: the lab's model-only and hidden tools refused by name, `tools` never read. It passed every
    # case while the cases used only the lab's names.
    right = gate()

    def by_heart(message, initialized, tools):
        params = message.get("params") if isinstance(message, dict) else None
        name = params.get("name") if isinstance(params, dict) else None
        answer = right(message, initialized, apps.TOOLS)
        if answer is None and initialized and message.get("method") == "tools/call" and "id" in message \
                and name in ("score_night", "archive_night"):
            return {"code": -32000, "message": "not for the View"}
        return answer

    out = verdict(apps.check_view_gate, by_heart)
    assert out.startswith("✗ Your gate let ") and "with the same tools under other names" in out, out

"""The bakery: a small 2025-11-25 stdio server of exercise 22's check, run as a script (standard library only).

Real servers cannot show some mistakes a report makes, so this one is built to: it answers any method it does not
know, server/discover included, with an empty result (a result, but no DiscoverResult); its first tool requires
nothing, with an empty `required` list (JSON Schema allows one; the SDKs leave the key out), and its two tools with
`required` properties answer a call without them differently; an unknown tool gets a result not marked isError; and
its text is not ASCII, so characters and bytes differ. It leaves out what the 2025-11-25 schema lets it leave out and
the real servers here always send: isError in a result that did not fail ("If not set, this is assumed to be false"),
and the last tool's annotations and description. `--false-is-error write` writes `"isError": false` as the SDKs do, so
that a report which takes the key's presence for a failure meets one.

`--before-initialize refuse` or `ignore` makes it a legacy server of another kind: every request before initialize
(server/discover included) gets -32600, or no reply at all, as the stdio binding warns legacy servers may answer.
"""

import argparse
import json
import sys

PROTOCOL_VERSION = "2025-11-25"
TOOLS = [
    {"name": "opening_hours",
     "description": "When the Bäckerei Müller is open: Mon–Sat 06:30–18:00, closed on Sundays.",
     "inputSchema": {"type": "object", "properties": {"day": {"type": "string", "description": "A weekday, e.g. Mittwoch."}},
                     "required": []},
     "annotations": {"title": "Öffnungszeiten", "readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}},
    {"name": "order_bread",
     "description": "Order bread for pick-up: Roggenbrot, Brötchen or Brezel (2,40 € each).",
     "inputSchema": {"type": "object", "properties": {"loaf": {"type": "string"}, "count": {"type": "integer"}},
                     "required": ["loaf"]},
     "annotations": {"destructiveHint": False}},
    {"name": "cancel_order",
     "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
]
TOOL_NAMES = [tool["name"] for tool in TOOLS]
FIRST_REQUIRING = next(tool["name"] for tool in TOOLS if tool["inputSchema"].get("required"))


def text_result(text, *, failed=False, write_false=False):
    """A CallToolResult; isError when it is true, or written as false too with write_false."""
    result = {"content": [{"type": "text", "text": text}]}
    return {**result, "isError": failed} if failed or write_false else result


def call_tool(params, write_false=False):
    """(result, error) of a tools/call: each tool answers missing arguments in its own way."""
    name, arguments = params.get("name"), params.get("arguments", {})

    def result(text, failed=False):
        return text_result(text, failed=failed, write_false=write_false), None

    if name not in TOOL_NAMES:
        return result(f"The bakery has no tool named {name}; ask for {', '.join(TOOL_NAMES)}.")
    if not isinstance(arguments, dict):
        return None, {"code": -32602, "message": "Invalid params: arguments must be an object"}
    if name == "opening_hours":
        return result("Mon–Sat 06:30–18:00; closed on Sundays.")
    if name == "order_bread":
        if not isinstance(arguments.get("loaf"), str):
            return result("Say which loaf: Roggenbrot, Brötchen or Brezel.", failed=True)
        return result(f"Order 17: {arguments.get('count', 1)} × {arguments['loaf']}.")
    if not isinstance(arguments.get("order_id"), str):
        return None, {"code": -32602, "message": "Invalid params: order_id is required"}
    return result(f"Order {arguments['order_id']} cancelled.")


def answer(message, write_false=False):
    """The reply to one request, or None for a notification."""
    if not isinstance(message, dict) or "id" not in message:
        return None
    method, params = message.get("method"), message.get("params")
    params = params if isinstance(params, dict) else {}
    result, error = {}, None
    if method == "initialize":
        result = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {"tools": {"listChanged": False}},
                  "serverInfo": {"name": "bakery", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result, error = call_tool(params, write_false)
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    reply.update({"error": error} if error else {"result": result})
    return reply


def before_initialize(message, how):
    """What a request that comes before initialize gets: None for no reply, else the reply."""
    if how == "ignore":
        return None
    return {"jsonrpc": "2.0", "id": message["id"],
            "error": {"code": -32600, "message": "Invalid Request: send initialize first"}}


def serve(how="answer", write_false=False):
    """how: what a request before initialize gets: an answer as after it, -32600 ("refuse") or nothing ("ignore");
    write_false: whether a result that did not fail says "isError": false."""
    initialized = False
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        else:
            early = (how != "answer" and not initialized and isinstance(message, dict) and "id" in message
                     and message.get("method") not in ("initialize", "ping"))
            reply = before_initialize(message, how) if early else answer(message, write_false)
            initialized = initialized or (isinstance(message, dict) and message.get("method") == "initialize")
        if reply is not None:
            sys.stdout.buffer.write(json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The bakery, exercise 22's own 2025-11-25 server.")
    parser.add_argument("--before-initialize", choices=["answer", "refuse", "ignore"], default="answer")
    parser.add_argument("--false-is-error", choices=["omit", "write"], default="omit")
    arguments = parser.parse_args()
    serve(arguments.before_initialize, arguments.false_is_error == "write")

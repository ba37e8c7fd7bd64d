"""A client for the official MCP conformance suite, written only with mcpwire.

    python -m mcpwire.conformance SERVER_URL

The suite starts it with `MCP_CONFORMANCE_SCENARIO` (which scenario), `MCP_CONFORMANCE_PROTOCOL_VERSION`
(which revision to speak) and, for some scenarios, `MCP_CONFORMANCE_CONTEXT` (JSON: pre-registered
credentials, tool calls to make). One session does what every client scenario watches for: authorize
when challenged, list the tools and call them (answering input requests of a multi round-trip
result), then list and read resources and prompts. Exit status 1 means a step was refused.
"""

import json
import os
import sys

from . import frames
from .errors import WireError
from .oauth import OAuth, OAuthError
from .streamable_http import HttpWire

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
CAPABILITIES = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
MAX_ROUNDS = 5
# The suite serves a requirements run's 39 client scenarios from one Node process at once: on two busy cores a
# reply took more than the 10 s HttpWire and OAuth wait by default. The suite limits each scenario's time
# itself (--timeout).
REPLY_TIMEOUT_S = 60.0


def example_value(schema):
    """A value that satisfies a (simple) JSON Schema: the first enum value, the default, or a typed placeholder."""
    schema = schema if isinstance(schema, dict) else {}
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: example_value(sub) for name, sub in properties.items()}
    return {"integer": 1, "number": 1, "boolean": True, "array": [], "null": None}.get(kind, "conformance")


def answer_input(request):
    """The client's answer to one input request of an `input_required` result."""
    method = request.get("method")
    params = request.get("params") or {}
    if method == "elicitation/create":
        return {"action": "accept", "content": example_value(params.get("requestedSchema"))}
    if method == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": "conformance"}, "model": "mcpwire",
                "stopReason": "endTurn"}
    if method == "roots/list":
        return {"roots": [{"uri": "file:///conformance", "name": "conformance"}]}
    return {}


class Session:
    def __init__(self, url, version, context):
        self.wire = HttpWire(url, timeout=REPLY_TIMEOUT_S)
        self.legacy = version != frames.PROTOCOL_VERSION
        self.wire.default_version = version
        self.auth = OAuth(client_id=context.get("client_id"), client_secret=context.get("client_secret"),
                          auth_method="client_secret_basic" if context.get("client_secret") else None,
                          client_metadata_url=CLIENT_METADATA_URL, client_name="mcpwire conformance client",
                          timeout=REPLY_TIMEOUT_S)
        self.auth.attach(self.wire)
        self.next_id = 1

    def frame(self, method, params=None):
        frame_id, self.next_id = self.next_id, self.next_id + 1
        if self.legacy:
            return frames.legacy_request(method, params, id=frame_id)
        return frames.request(method, params, id=frame_id, meta={frames.CLIENT_CAPABILITIES_KEY: CAPABILITIES})

    def call(self, method, params=None, tool=None, optional=False):
        """Send a request; a refusal stops the session unless the method is `optional` (a JSON-RPC error then says no)."""
        frame = self.frame(method, params)
        reply = self.auth.send(self.wire, frame, tool=tool)
        if reply.code == -32022 and not self.legacy:
            retried = frames.retry_with_supported_version(frame, reply)
            if retried is not None:
                reply = self.auth.send(self.wire, retried, tool=tool)
        if reply.message is None or (reply.status >= 400 and not (optional and reply.error)):
            raise WireError(f"{method}: HTTP {reply.status} {reply.text[:200]!r}")
        return reply

    def open(self):
        if self.legacy:
            self.call("initialize", {"protocolVersion": self.wire.default_version, "capabilities": CAPABILITIES,
                                     "clientInfo": dict(frames.CLIENT_INFO)})
            self.auth.send(self.wire, frames.legacy_initialized())

    def call_tool(self, tool, arguments):
        params = {"name": tool["name"], "arguments": arguments}
        reply = self.call("tools/call", params, tool)
        for _ in range(MAX_ROUNDS):
            result = reply.result if reply.ok else {}
            if result.get("resultType") != "input_required":
                return reply
            retry = {**params, "inputResponses": {key: answer_input(request)
                                                  for key, request in (result.get("inputRequests") or {}).items()}}
            if "requestState" in result:
                retry["requestState"] = result["requestState"]  # echoed exactly; omitted when the server sent none
            reply = self.call("tools/call", retry, tool)
        return reply

    def run(self, context):
        self.open()
        listed = self.call("tools/list")
        tools = listed.result.get("tools", []) if listed.ok else []
        by_name = {tool.get("name"): tool for tool in tools}
        planned = context.get("toolCalls") or [
            {"name": tool["name"], "arguments": example_value(tool.get("inputSchema"))} for tool in tools]
        for planned_call in planned:
            tool = by_name.get(planned_call["name"], {"name": planned_call["name"]})
            self.call_tool(tool, planned_call.get("arguments") or {})
        for method, key, field in (("resources/list", "resources", "uri"), ("prompts/list", "prompts", "name")):
            listed = self.call(method, optional=True)
            for item in (listed.result.get(key, []) if listed.ok else [])[:1]:
                read = "resources/read" if method == "resources/list" else "prompts/get"
                params = {field: item[field]} if field == "uri" else {field: item[field], "arguments": {}}
                self.call(read, params, optional=True)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m mcpwire.conformance SERVER_URL  (MCP_CONFORMANCE_SCENARIO names the scenario)",
              file=sys.stderr)
        return 2
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or frames.LEGACY_PROTOCOL_VERSION
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    session = Session(argv[0], version, context)
    try:
        session.run(context)
    except (WireError, OAuthError) as error:
        print(f"mcpwire.conformance ({os.environ.get('MCP_CONFORMANCE_SCENARIO', '?')}): {error}", file=sys.stderr)
        return 1
    finally:
        session.wire.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

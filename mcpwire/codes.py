"""What each JSON-RPC / MCP error code means: the teaching table behind `explain()`.

For each code: its name, what it means, what usually causes it, and the HTTP status
that goes with it on Streamable HTTP, saying whether the spec requires that status
or it is only the SDK's mapping.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorCode:
    code: int
    name: str
    meaning: str
    usual_cause: str
    http_status: str  # the status the spec requires on Streamable HTTP, or who else decides it


# The spec requires a status only for -32601 (404), -32020..-32022 (400) and -32602 for a missing _meta field
# (400): https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http and
# https://modelcontextprotocol.io/specification/2026-07-28/basic/index; every other status here is the SDK's.
# SDK 2.3.0 applies its status table only to a reply it sends as JSON (mcp/server/_streamable_http_modern.py): once
# a handler has sent a notification, or stayed silent 15 s, the reply is already 200 text/event-stream, and an
# error of any code comes as the stream's last event.
NO_STATUS_400 = "the spec sets none; SDK 2.3.0 answers 400"

CODES = {
    e.code: e
    for e in [
        ErrorCode(-32700, "Parse error", "the bytes received were not valid JSON",
                  "a typo in a hand-written frame, a truncated line, or pretty-printed JSON split over several stdio lines",
                  NO_STATUS_400),
        ErrorCode(-32600, "Invalid Request", "valid JSON, but not a JSON-RPC request object",
                  "missing \"jsonrpc\":\"2.0\" or \"method\", an \"id\" of null, a batch array, or a response sent to the server",
                  NO_STATUS_400),
        ErrorCode(-32601, "Method not found", "the server does not offer this method",
                  "a misspelt method, a method removed in 2026-07-28 (initialize, ping, logging/setLevel), "
                  "or one whose capability the server did not advertise",
                  "404"),
        ErrorCode(-32602, "Invalid params", "the method exists but its params are wrong",
                  "a missing or incomplete _meta envelope, an unknown resource URI, a bad cursor or log level, "
                  "or an invalid/expired requestState",
                  "400 when a required _meta field is missing (the spec requires it); for the other causes "
                  "the spec sets none and SDK 2.3.0 answers 400 in a JSON reply, 200 once it has opened an SSE stream"),
        ErrorCode(-32603, "Internal error", "the server failed while handling a well-formed request",
                  "a bug or an unexpected exception in the handler (the SDK also uses it for an unknown prompt)",
                  "the spec sets none; SDK 2.3.0 answers 200"),
        ErrorCode(-32000, "Connection closed (legacy, implementation-defined)",
                  "the SDK's code for a request still running when the connection closed; not an MCP code",
                  "stdin was closed (or the server shut down) before the answer was ready",
                  "-"),
        ErrorCode(-32001, "Request timeout (legacy, implementation-defined)",
                  "the SDK's code for a request that timed out locally; never meant for the wire",
                  "the peer took longer than the caller's timeout",
                  "-"),
        ErrorCode(-32002, "Resource not found (retired)",
                  "pre-2026 servers used it for an unknown resource; 2026-07-28 uses -32602 instead",
                  "resources/read of a URI an older server does not know",
                  "-"),
        ErrorCode(-32020, "Header mismatch",
                  "an HTTP routing header is missing, malformed, or disagrees with the JSON body",
                  "MCP-Protocol-Version != _meta protocolVersion, Mcp-Method != method, Mcp-Name != params.name/uri, "
                  "or an Mcp-Param-* header that does not match its argument",
                  "400"),
        ErrorCode(-32021, "Missing required client capability",
                  "serving the request needs a client capability this request did not declare",
                  "calling a tool that asks the client for input (elicitation, sampling or roots) without that "
                  "capability in io.modelcontextprotocol/clientCapabilities; error.data.requiredCapabilities names it",
                  "400"),
        ErrorCode(-32022, "Unsupported protocol version",
                  "the server does not serve the protocol version this request names",
                  "a typo in _meta io.modelcontextprotocol/protocolVersion, or a legacy version sent with the envelope; "
                  "retry with one of error.data.supported",
                  "400"),
        ErrorCode(-32042, "URL elicitation required (retired)",
                  "2025-11-25 only: the server needed a URL-mode elicitation first; not used in 2026-07-28",
                  "an older server asking the user to visit a URL",
                  "-"),
    ]
}


def explain(code):
    """A few plain lines: the code's name, what it means, what usually causes it."""
    known = CODES.get(code)
    if known is not None:
        return (f"{code} {known.name}: {known.meaning}.\n"
                f"Usually: {known.usual_cause}.\n"
                f"HTTP status: {known.http_status}.")
    if -32099 <= code <= -32023:
        return f"{code}: reserved for future MCP codes; no server should send it yet."
    if -32019 <= code <= -32000:
        return f"{code}: implementation-defined (legacy range); only the sending server knows what it means."
    if -32768 <= code <= -32000:
        return f"{code}: reserved by JSON-RPC; not a code MCP defines."
    return f"{code}: an application-defined code; the error message is all there is to go on."

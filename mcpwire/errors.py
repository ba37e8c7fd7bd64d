"""The exceptions mcpwire raises, all in one tree.

An error *reply* from a server is not an exception: it comes back as a `Reply`
whose `.error` is set. These are for the wire itself going wrong::

    WireError                    anything that went wrong on the wire (catch this for all of them)
    ├── WireTimeout              nothing (or not all of a reply) arrived in time; also a TimeoutError
    ├── ServerExited             the server process ended while we talked to it (.returncode, .stderr_tail)
    ├── ResponseTooLarge         an HTTP response over http11.MAX_RESPONSE_BYTES; we stopped reading it
    └── InvalidHeaderAnnotation  a tool's x-mcp-header breaks the rules, so no client may call it over HTTP;
                                 also a ValueError

What each JSON-RPC / MCP error *code* means is in `mcpwire.codes`.
"""


class WireError(Exception):
    """Something went wrong on the wire itself (not an error reply from the server)."""


class WireTimeout(WireError, TimeoutError):
    """Nothing arrived in time."""


class ServerExited(WireError):
    """The server process ended while we were talking to it."""

    def __init__(self, message, returncode=None, stderr_tail=()):
        tail = "".join(f"\n  stderr: {line}" for line in stderr_tail)
        super().__init__(message + tail)
        self.returncode = returncode
        self.stderr_tail = list(stderr_tail)


class ResponseTooLarge(WireError):
    """The server sent more than `http11.MAX_RESPONSE_BYTES` for one response."""


class InvalidHeaderAnnotation(WireError, ValueError):
    """A tool definition's `x-mcp-header` annotation breaks the rules, so no client may call it over HTTP."""

"""What every wire does: the contract `StdioWire` and `HttpWire` both keep.

Code that only needs to send frames and read replies (the frame composer, the
exercise checks) is written against `Wire` and works on either transport.

Where the two transports must differ, once:

- **What comes back for a notification.** On stdio nothing does, so `notify()` and
  `send()` of a notification return None. On Streamable HTTP every POST gets an
  HTTP response, so they return a `Reply` with `status` 202 and no message (and
  `notify()` raises `WireError` for any other status: the server refused it).
- **Headers.** Only HTTP has them: there `headers=` overrides derived headers by
  name (None drops one) and `headers_for(frame)` shows what would be sent; on
  stdio `headers_for` is {} and `headers=` must be empty. `HttpWire.send` also
  takes `tool=` (a tool definition, for `Mcp-Param-*` headers).
- **Ending an open request.** `send(frame, stream_for=s)` stops waiting for a
  request that stays open (subscriptions/listen) after `s` seconds. On HTTP that
  closes the stream, which is how a client cancels there; on stdio the request
  stays open until a notifications/cancelled, and what it sends goes to `read()`.
- **Framing typed text.** stdio ends a message at a newline, so `one_message(text)`
  joins a multi-line text into one line there; HTTP sends it as typed.
- **The server process.** A `StdioWire` always has one (`returncode`,
  `stderr_lines`, and `write`/`wait`/`read`/`send_all` for pipelining); an
  `HttpWire` has one only when `HttpWire.labserver()` started it.
"""

from typing import Protocol

RAW_TIMEOUT = 2.0  # a raw send waits this long by default: silence may be the server's whole answer


class Wire(Protocol):
    """The methods and attributes every wire has.

    Errors: a reply that carries a JSON-RPC error is a `Reply` (`.error`, `.code`),
    never an exception; the wire raises only for the wire itself (see `mcpwire.errors`).
    """

    transport: str  # "stdio" or "http", for display
    timeout: float  # seconds a request waits for its reply unless told otherwise
    transcript: object  # every exchange, with its exact bytes (a `Transcript`)
    notifications: list  # every notification that came back, in arrival order

    @property
    def next_id(self):
        """The id `request()` gives the next request: one more than the highest integer id sent so far."""

    @property
    def closed(self):
        """True once the wire can no longer reach its server (it was closed, or the server ended)."""

    def request(self, method, params=None, *, timeout=None, **frame_kwargs):
        """Build a 2026-07-28 request with `next_id` (unless `id=` is given), send it, return its Reply.

        Raises `WireTimeout` if no reply comes within `timeout` (default: `self.timeout`),
        `ServerExited` if the server is gone.
        """

    def send(self, frame, headers=None, *, timeout=None, stream_for=None):
        """Send a frame (a dict) as compact JSON. A request returns its Reply (or raises, as `request`).

        With `stream_for=seconds`, a request still open after that long returns the Reply
        so far, whose `problem` says it was cut off, instead of raising WireTimeout.
        """

    def notify(self, method, params=None, **frame_kwargs):
        """Send a notification (see the module docstring for what comes back)."""

    def send_raw(self, text, headers=None, *, timeout=RAW_TIMEOUT):
        """Send exactly `text` (str or bytes), malformed or not: the reply is the lesson.

        Returns the Reply that came back within `timeout`, or None when nothing did
        (silence can be the right answer: to a response, or a notification on stdio).
        Never raises WireTimeout.
        """

    def headers_for(self, frame):
        """The HTTP headers `send` would write for `frame` ({} on stdio)."""

    def one_message(self, text):
        """`text` as this transport carries it as one message (see the module docstring)."""


    def close(self):
        """Stop talking: drop connections, and stop the server if this wire started it. Idempotent."""

"""One HTTP/1.1 keep-alive connection: our exact request bytes out, every reply byte kept, h11 reading them.

The request is written as the bytes we compose, because the lessons send requests no
careful library would write (a header with a CR LF in it: lesson 15 shows httpx
refusing the one `HttpWire` sends). The reply is parsed by `h11`, a well-kept HTTP/1.1
state machine, which is told what request went out so it knows how the reply must be
framed. Every byte read for a reply is kept in `Response.raw` (status line, headers,
chunk sizes and all) so the transcript holds exactly what came back.
"""

import select
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import h11

from .errors import ResponseTooLarge, WireError, WireTimeout

MAX_RESPONSE_BYTES = 16 * 1024 * 1024  # a server that sends more is cut off, so it cannot fill our memory


@dataclass
class Response:
    status: int
    reason: str
    headers: list  # (name, value) pairs as received
    raw: bytearray = field(default_factory=bytearray)  # every byte read for this response
    body: bytearray = field(default_factory=bytearray)  # the body with chunk framing removed
    complete: bool = False  # the body ended where its framing said it would

    def header(self, name):
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


class Connection:
    """One keep-alive connection to `url`'s host; reconnects when the server closed it."""

    def __init__(self, url):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.path = parts.path or "/"
        self.host_header = parts.netloc
        self._sock = None
        self._h11 = None

    def close(self):
        if self._sock is not None:
            self._sock.close()
        self._sock, self._h11 = None, None

    def request_bytes(self, headers, body):
        """The exact bytes of a POST: request line, Host, the given headers, Content-Length, blank line, body."""
        lines = [f"POST {self.path} HTTP/1.1", f"Host: {self.host_header}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    def send(self, data, timeout):
        """Write a request (exact bytes); reconnect first if the idle connection was closed by the server."""
        if self._sock is not None and select.select([self._sock], [], [], 0)[0]:
            self.close()  # readable while idle means the server hung up (keep-alive timeout)
        if self._sock is None:
            try:
                self._sock = socket.create_connection((self.host, self.port), timeout=timeout)
            except OSError as error:
                raise WireError(f"cannot connect to {self.host}:{self.port}: {error}") from None
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_RESPONSE_BYTES)
        self._sock.settimeout(timeout)
        self._sock.sendall(data)
        self._told_h11(data)

    def _told_h11(self, data):
        """Let h11 know a request went out (its bytes are discarded: ours went instead)."""
        method = data.split(b" ", 1)[0] or b"POST"
        try:
            self._h11.send(h11.Request(method=method, target=self.path,
                                       headers=[("Host", self.host_header), ("Content-Length", "0")]))
            self._h11.send(h11.EndOfMessage())
        except h11.LocalProtocolError:  # a method h11 cannot spell: the reply is read as a POST's would be
            self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_RESPONSE_BYTES)
            self._h11.send(h11.Request(method="POST", target=self.path,
                                       headers=[("Host", self.host_header), ("Content-Length", "0")]))
            self._h11.send(h11.EndOfMessage())

    def _next_event(self, deadline, response):
        """The next h11 event for this response, reading from the socket as needed."""
        while True:
            event = self._h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            if len(response.raw) > MAX_RESPONSE_BYTES:
                self.close()
                raise ResponseTooLarge(f"the server sent more than {MAX_RESPONSE_BYTES} bytes for one response; "
                                       "mcpwire stopped reading it")
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout()
            self._sock.settimeout(left)
            chunk = self._sock.recv(65536)
            response.raw += chunk
            self._h11.receive_data(chunk)  # b"" tells h11 the server closed

    def read_head(self, deadline):
        response = Response(0, "", [])
        try:
            event = self._next_event(deadline, response)
            while isinstance(event, h11.InformationalResponse):  # a 1xx comes before the real status
                event = self._next_event(deadline, response)
            if not isinstance(event, h11.Response):
                raise ValueError("the server closed the connection")
        except socket.timeout:
            self.close()
            raise WireTimeout("no HTTP response headers in time") from None
        except (ConnectionError, ValueError, h11.RemoteProtocolError) as error:
            self.close()
            raise WireError(f"the server broke off before sending a complete status line and headers: {error}") from None
        response.status, response.reason = event.status_code, event.reason.decode("latin-1")
        response.headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in
                            event.headers.raw_items()]
        return response

    def read_body(self, response, deadline, on_data=None):
        """Read the body (calling `on_data(bytes)` as pieces arrive). Stops early if `on_data` returns True."""
        try:
            while not isinstance(event := self._next_event(deadline, response), h11.EndOfMessage):
                if not isinstance(event, h11.Data):
                    raise ValueError(f"unexpected {type(event).__name__}")
                response.body += event.data
                if on_data is not None and on_data(bytes(event.data)):
                    return False
        except socket.timeout:
            self.close()
            raise
        except (ConnectionError, ValueError, h11.RemoteProtocolError):
            self.close()
            return False
        leftover, _ = self._h11.trailing_data
        if leftover:  # bytes after the end belong to no request of ours: not this response's
            del response.raw[len(response.raw) - len(leftover):]
        response.complete = True
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
        else:  # "Connection: close", or a body that ran until the server closed
            self.close()
        return True

"""Just enough HTTP/1.1 over a socket to POST and read the reply, keeping every byte.

We write the request ourselves so the transcript holds exactly what went out, and
read the reply ourselves so it holds exactly what came back (status line, headers,
chunk sizes and all). Bodies are either Content-Length or chunked.
"""

import select
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

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
        self._buffer = b""

    def close(self):
        if self._sock is not None:
            self._sock.close()
        self._sock, self._buffer = None, b""

    def request_bytes(self, headers, body):
        """The exact bytes of a POST: request line, Host, the given headers, Content-Length, blank line, body."""
        lines = [f"POST {self.path} HTTP/1.1", f"Host: {self.host_header}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    def send(self, data, timeout):
        """Write a request; reconnect first if the idle connection was closed by the server."""
        if self._sock is not None and select.select([self._sock], [], [], 0)[0]:
            self.close()  # readable while idle means the server hung up (keep-alive timeout)
        if self._sock is None:
            try:
                self._sock = socket.create_connection((self.host, self.port), timeout=timeout)
            except OSError as error:
                raise WireError(f"cannot connect to {self.host}:{self.port}: {error}") from None
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.settimeout(timeout)
        self._sock.sendall(data)

    def _fill(self, deadline, response):
        if len(response.raw) + len(self._buffer) > MAX_RESPONSE_BYTES:
            self.close()
            raise ResponseTooLarge(f"the server sent more than {MAX_RESPONSE_BYTES} bytes for one response; "
                                   "mcpwire stopped reading it")
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout()
        self._sock.settimeout(left)
        chunk = self._sock.recv(65536)
        if not chunk:
            raise ConnectionResetError("the server closed the connection")
        self._buffer += chunk

    def _take(self, n, response):
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        response.raw += data
        return data

    def _line(self, deadline, response):
        while b"\r\n" not in self._buffer:
            self._fill(deadline, response)
        return self._take(self._buffer.index(b"\r\n") + 2, response)

    def _exactly(self, n, deadline, response):
        while len(self._buffer) < n:
            self._fill(deadline, response)
        return self._take(n, response)

    def read_head(self, deadline):
        response = Response(0, "", [])
        try:
            status_line = self._line(deadline, response).decode("latin-1")
            _, status, reason = (status_line.rstrip("\r\n").split(" ", 2) + [""])[:3]
            response.status, response.reason = int(status), reason
            while (line := self._line(deadline, response)) != b"\r\n":
                name, _, value = line.decode("latin-1").rstrip("\r\n").partition(":")
                response.headers.append((name, value.strip()))
        except socket.timeout:
            self.close()
            raise WireTimeout("no HTTP response headers in time") from None
        except (ConnectionError, ValueError) as error:
            self.close()
            raise WireError(f"the server broke off before sending a complete status line and headers: {error}") from None
        return response

    def read_body(self, response, deadline, on_data=None):
        """Read the body (calling `on_data(bytes)` as pieces arrive). Stops early if `on_data` returns True."""
        try:
            if (response.header("Transfer-Encoding") or "").lower() == "chunked":
                while True:
                    size = int(self._line(deadline, response).split(b";")[0], 16)
                    if size == 0:
                        self._line(deadline, response)  # the blank line after the last chunk
                        break
                    data = self._exactly(size, deadline, response)
                    self._exactly(2, deadline, response)
                    response.body += data
                    if on_data is not None and on_data(data):
                        return False
            elif response.header("Content-Length") is not None:
                data = self._exactly(int(response.header("Content-Length")), deadline, response)
                response.body += data
                if on_data is not None:
                    on_data(data)
            elif response.status not in (204, 304) and response.status >= 200:
                while True:  # no framing: the body runs until the server closes
                    try:
                        self._fill(deadline, response)
                    except ConnectionResetError:
                        break
                    data = self._take(len(self._buffer), response)
                    response.body += data
                    if on_data is not None:
                        on_data(data)
                self.close()
        except socket.timeout:
            self.close()
            raise
        except (ConnectionError, ValueError):
            self.close()
            return False
        response.complete = True
        if (response.header("Connection") or "").lower() == "close":
            self.close()
        return True

"""The HTTP tap: a reverse proxy on 127.0.0.1 that forwards each request and response as it comes.

HTTP/1.1 is parsed and written by `h11` on both sides. The proxy rewrites one thing:
the `Host` header, set to the upstream's host and port (the host addressed the tap).
Before that, the tap makes the check a local server makes against DNS rebinding: a
`Host` other than `127.0.0.1:PORT` or `localhost:PORT` gets 421 from the tap and goes
no further. `Origin` and every other header pass unchanged, so the upstream still
judges the host's real `Origin`. Bodies are never changed; a streamed (SSE) reply is
forwarded chunk by chunk as the upstream writes it. The framing is h11's: it writes
`Transfer-Encoding: chunked` in its own spelling and cuts chunks where the data came
in, so a chunked body carries the same bytes, maybe in other chunk sizes.

Each exchange is recorded as `HttpWire` records it: the request and the response as
they crossed the tap, status and payloads (the JSON body, or each SSE event's data).
"""

import json
import signal
import socket
import threading
import time
from urllib.parse import urlsplit

import h11

from .. import sse
from ..transcript import Exchange

HOST = "127.0.0.1"
CHUNK = 1 << 16


class _Recorder:
    def __init__(self, out, url):
        self._out, self.url, self._lock = out, url, threading.Lock()

    def write(self, raw_up, body, raw_down, status, down_payloads, times_up, times_down):
        up_text = body.decode("utf-8", "surrogateescape")
        try:
            frame = json.loads(up_text) if body else {}
        except (ValueError, RecursionError):
            frame = {}
        frame = frame if isinstance(frame, dict) else {}
        method = frame.get("method") if isinstance(frame.get("method"), str) else None
        moments = times_up + times_down
        exchange = Exchange(transport="http", method=method, id=frame.get("id"), up=bytes(raw_up),
                            down=bytes(raw_down), up_payloads=[up_text] if body else [],
                            down_payloads=down_payloads, elapsed_ms=round((max(moments) - min(moments)) * 1000, 3),
                            status=status, url=self.url)
        entry = exchange.to_dict()
        entry["times_up"], entry["times_down"] = times_up, times_down
        with self._lock:
            self._out.write(json.dumps(entry) + "\n")
            self._out.flush()


class _Downstream:
    """What the upstream sent back for one request: its raw bytes, and the payloads found in them."""

    def __init__(self):
        self.raw = bytearray()
        self.status = None
        self.payloads, self.times = [], []
        self._events = None  # an SseParser when the reply is an event stream
        self._body = bytearray()

    def response(self, event):
        self.status = event.status_code
        kind = dict(event.headers).get(b"content-type", b"").split(b";")[0].strip().lower()
        self._events = sse.SseParser() if kind == b"text/event-stream" else None

    def body(self, data):
        if self._events is None:
            self._body += data
            return
        for event in self._events.feed(data):
            self.payloads.append(event.data)
            self.times.append(time.time())

    def end(self):
        if self._events is None and self._body:
            self.payloads.append(self._body.decode("utf-8", "surrogateescape"))
            self.times.append(time.time())
        elif self._events is not None and self._events.unfinished:
            for event in self._events.feed(b"\n\n"):
                self.payloads.append(event.data)
                self.times.append(time.time())


class _InFlight:
    """Counts exchanges between reading a request and recording its response, so a stop can wait for them."""

    def __init__(self):
        self._count = 0
        self._idle = threading.Condition()

    def __enter__(self):
        with self._idle:
            self._count += 1

    def __exit__(self, *exc):
        with self._idle:
            self._count -= 1
            self._idle.notify_all()

    def wait_idle(self, timeout):
        with self._idle:
            self._idle.wait_for(lambda: self._count == 0, timeout=timeout)


class Proxy:
    """Accepts hosts on 127.0.0.1 and forwards each to `upstream` on a connection of its own."""

    def __init__(self, upstream, out, port=0):
        parts = urlsplit(upstream)
        self.upstream_address = (parts.hostname, parts.port or 80)
        self.upstream_authority = parts.netloc.encode()
        self.path = parts.path or "/"
        self.listener = socket.create_server((HOST, port))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://{HOST}:{self.port}{self.path}"
        self.own_hosts = {f"{HOST}:{self.port}".encode(), f"localhost:{self.port}".encode()}
        self.recorder = _Recorder(out, upstream)
        self._in_flight = _InFlight()

    def serve_forever(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._connection, args=(client,), daemon=True).start()

    def close(self):
        """Stop accepting, then give exchanges under way a moment to reach the file."""
        self.listener.close()
        self._in_flight.wait_idle(timeout=2)

    def _connection(self, client):
        upstream = None
        try:
            downstream_side = h11.Connection(h11.SERVER)
            while True:
                request = self._read_request(client, downstream_side)
                if request is None:
                    return
                event, body, raw_up, at = request
                hosts = [value for name, value in event.headers if name == b"host"]
                if hosts != [hosts[0]] or hosts[0] not in self.own_hosts:
                    self._refuse(client, downstream_side, raw_up, body, at)
                    return
                if upstream is None:
                    upstream = socket.create_connection(self.upstream_address)
                    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    upstream_side = h11.Connection(h11.CLIENT)
                headers = [(name, self.upstream_authority if name.lower() == b"host" else value)
                           for name, value in event.headers.raw_items()]
                upstream.sendall(upstream_side.send(h11.Request(method=event.method, target=event.target,
                                                                headers=headers, http_version=event.http_version))
                                 + (upstream_side.send(h11.Data(data=bytes(body))) if body else b"")
                                 + upstream_side.send(h11.EndOfMessage()))
                with self._in_flight:
                    down, last = self._relay(upstream, upstream_side, client, downstream_side)
                    self.recorder.write(raw_up, body, down.raw, down.status, down.payloads, [at], down.times)
                    client.sendall(last)
                if (downstream_side.our_state is h11.DONE and downstream_side.their_state is h11.DONE
                        and upstream_side.our_state is h11.DONE and upstream_side.their_state is h11.DONE):
                    downstream_side.start_next_cycle()
                    upstream_side.start_next_cycle()
                else:
                    return
        except (OSError, h11.ProtocolError):
            return
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    sock.close()

    def _read_request(self, client, side):
        raw, body, event = bytearray(), bytearray(), None
        while True:
            next_event = side.next_event()
            if next_event is h11.NEED_DATA:
                data = client.recv(CHUNK)
                raw += data
                side.receive_data(data)
            elif isinstance(next_event, h11.Request):
                event = next_event
            elif isinstance(next_event, h11.Data):
                body += next_event.data
            elif isinstance(next_event, h11.EndOfMessage):
                return event, body, raw, time.time()
            else:  # the host closed the connection
                return None

    def _relay(self, upstream, upstream_side, client, downstream_side):
        down = _Downstream()
        while True:
            event = upstream_side.next_event()
            if event is h11.NEED_DATA:
                data = upstream.recv(CHUNK)
                down.raw += data
                upstream_side.receive_data(data)
                continue
            if isinstance(event, h11.ConnectionClosed):
                down.end()
                return down, b""
            if isinstance(event, (h11.Response, h11.InformationalResponse)):
                if isinstance(event, h11.Response):
                    down.response(event)
                event = type(event)(status_code=event.status_code, headers=event.headers.raw_items(),
                                    reason=event.reason, http_version=event.http_version)
            elif isinstance(event, h11.Data):
                down.body(event.data)
            if isinstance(event, h11.EndOfMessage):
                down.end()
                return down, downstream_side.send(event)
            client.sendall(downstream_side.send(event))  # at once: an SSE event reaches the host as it comes

    def _refuse(self, client, side, raw_up, body, at):
        message = b"the tap answers only to Host 127.0.0.1 or localhost on its own port\n"
        reply = side.send(h11.Response(status_code=421, headers=[("Content-Type", "text/plain"),
                                                                 ("Content-Length", str(len(message)))]))
        reply += side.send(h11.Data(data=message)) + side.send(h11.EndOfMessage())
        client.sendall(reply)
        self.recorder.write(raw_up, body, reply, 421, [message.decode()], [at], [time.time()])


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def serve(upstream, out_path, port=0):
    """Print the tap's URL as the first line, then forward until interrupted."""
    with open(out_path, "w", encoding="utf-8") as out:
        proxy = Proxy(upstream, out, port)
        print(proxy.url, flush=True)
        signal.signal(signal.SIGTERM, _interrupt)  # stopped like Ctrl-C: the file keeps what the hosts received
        try:
            proxy.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            proxy.close()
    return 0

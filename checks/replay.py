"""Serve a recorded HTTP answer on 127.0.0.1, once, so a wire reads it exactly as the real server sent it.

The recordings in checks/recorded/ are answers of servers the kit cannot run without
Node (each file's name says which), captured byte for byte with HttpWire's transcript.
"""

import contextlib
import socket
import threading
from pathlib import Path

RECORDED = Path(__file__).parent / "recorded"


@contextlib.contextmanager
def replaying(name):
    """The URL of a one-request server that answers with the bytes of checks/recorded/`name`."""
    answer = (RECORDED / name).read_bytes()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(30)

    def answer_once():
        with contextlib.suppress(OSError), listener.accept()[0] as connection:
            request = b""
            while b"\r\n\r\n" not in request:  # the head; the body is small and read below with it
                request += connection.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                body += connection.recv(65536)
            connection.sendall(answer)

    server = threading.Thread(target=answer_once, daemon=True)
    server.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        server.join(timeout=30)
        listener.close()

"""Read and write the stdio file descriptors from the event loop, without a thread per call.

The wire's descriptors are shared with the parent process, so they stay blocking
(O_NONBLOCK would change them for the parent too). Instead we ask the kernel first
and then make one call that cannot block: after "readable", `os.read` returns what is
there. A pipe we write to is opened again through /proc, which gives a description of
our own that can be non-blocking, so a whole message goes out in one write; where that
fails (a socket), a pipe takes up to PIPE_BUF bytes at once after "writable". Saving
the thread hop is what makes the lab's stdio front cheaper than the SDK's own transport.

Where the event loop cannot watch a descriptor (a regular file, /dev/null, pipes on
Windows), each call goes to a worker thread instead, like the SDK does.
"""

from __future__ import annotations

import os
import select
import stat

import anyio
import anyio.to_thread

READ_CHUNK_BYTES = 64 * 1024
PIPE_BUF = getattr(select, "PIPE_BUF", 512)


class Descriptor:
    """One blocking file descriptor, read or written without stalling the event loop."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.watchable = os.name == "posix"  # becomes False once the loop refuses this fd
        self._writer: int | None = None  # set on the first write: reopening a read end for writing would be wrong

    async def read(self) -> bytes:
        """The next bytes available, b"" at EOF."""
        if self.watchable:
            try:
                await anyio.wait_readable(self.fd)
            except (OSError, NotImplementedError):
                self.watchable = False
            else:
                return os.read(self.fd, READ_CHUNK_BYTES)
        return await anyio.to_thread.run_sync(os.read, self.fd, READ_CHUNK_BYTES)

    async def write(self, data: bytes) -> None:
        """Write all of data."""
        view = memoryview(data)
        if self._writer is None:
            self._writer = nonblocking_copy(self.fd) if self.watchable else -1
        while view and self._writer >= 0:
            try:
                view = view[os.write(self._writer, view) :]
            except BlockingIOError:
                await anyio.wait_writable(self._writer)
        while view and self.watchable:
            try:
                if not self._writable_now():
                    await anyio.wait_writable(self.fd)
            except (OSError, ValueError, NotImplementedError):
                self.watchable = False
                break
            view = view[os.write(self.fd, view[:PIPE_BUF]) :]
        if view:
            await anyio.to_thread.run_sync(write_all, self.fd, bytes(view))

    def _writable_now(self) -> bool:
        # A zero-timeout poll is cheaper than a trip through the event loop.
        return bool(select.select([], [self.fd], [], 0)[1])


def nonblocking_copy(fd: int) -> int:
    """A non-blocking descriptor of our own for the pipe `fd` writes to, or -1 when fd is no pipe."""
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            return os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        pass
    return -1


def write_all(fd: int, data: bytes) -> None:
    """Blocking write of all of data (for worker threads and plain files)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]

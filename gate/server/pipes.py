"""stdin and stdout as the event loop's own pipes, without the SDK's worker threads.

The SDK's ``stdio_server`` reads each line and writes and flushes each reply through
``anyio.wrap_file``: three worker-thread hops a call (each wakes an idle thread, then the
loop), about as much time as a write to the log. When both ends are pipes or sockets (as
every MCP client that spawns a server makes them) or a terminal (an operator trying the
server by hand), the loop reads and writes them itself (``connect_read_pipe``/
``connect_write_pipe``; a reply that fills the pipe waits in ``drain``, never blocking the
loop), so Ctrl-C stops it at once (the SDK's reader thread waited for a line first).
Anything else (a file, the null device) is ``None`` here and served by the SDK's transport.
A terminal is opened anew for this, so the non-blocking mode the loop sets stays on a file
description of its own, not the one stderr and the shell share.

Like the SDK's, the transport claims the descriptors while it serves: fd 0 reads the null
device and fd 1 writes to stderr, so stray reads and prints miss the wire; both are put back
on exit.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress

LIMIT = 1 << 30  # a line may be as long as the SDK's reader would take (it has no limit)


def _pipe_like(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _terminal(fd: int) -> int | None:
    """``fd``'s terminal opened anew (a file description of its own), if it is one that can
    be (its device may not be reachable by name, as in some containers)."""
    if not os.isatty(fd):
        return None
    try:
        return os.open(os.ttyname(fd), os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None


def _claim(fd: int, diversion: Callable[[], int]) -> int:
    """A private descriptor of ``fd``'s pipe or terminal to serve on; ``fd`` itself now
    points elsewhere."""
    private = _terminal(fd)
    if private is None:
        private = os.dup(fd)
        os.set_inheritable(private, False)
    target = diversion()
    try:
        os.dup2(target, fd)
    finally:
        os.close(target)
    return private


class Pipes:
    """Lines in from the client, lines out to it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def lines(self) -> AsyncIterator[bytes]:
        """Each line as sent (its newline stripped), until the client closes stdin."""
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                if end.partial.strip():
                    yield end.partial
                return
            if line.strip():
                yield line[:-1]

    async def send(self, line: str) -> None:
        self.writer.write(line.encode() + b"\n")
        await self.writer.drain()


@asynccontextmanager
async def stdio_pipes() -> AsyncIterator[Pipes | None]:
    """The process's stdin and stdout served by the loop, or ``None`` where they are not
    both pipes, sockets or terminals."""
    if not (_pipe_like(0) and _pipe_like(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    stdin = _claim(0, lambda: os.open(os.devnull, os.O_RDONLY))
    stdout = _claim(1, lambda: os.dup(2))

    def give_back() -> None:  # the wire back on fds 0 and 1, blocking as it was
        for fd, private in ((0, stdin), (1, stdout)):
            with suppress(OSError):
                os.dup2(private, fd)
                os.set_blocking(fd, True)
                os.close(private)

    reader = asyncio.StreamReader(limit=LIMIT, loop=loop)
    try:
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
            os.fdopen(stdin, "rb", 0, closefd=False),
        )
        write_transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop=loop),
            os.fdopen(stdout, "wb", 0, closefd=False),
        )
    except NotImplementedError:  # a loop without pipe transports: the SDK's serves instead
        give_back()
        yield None
        return
    writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    try:
        yield Pipes(reader, writer)
    finally:
        with suppress(OSError, ConnectionError, RuntimeError):
            await writer.drain()
        read_transport.close()
        write_transport.close()
        give_back()

"""Round trips counted on the wire: a TCP relay between PostgreSQL and its clients.

A round trip is the client waiting for the server: it has sent a message that asks to be
answered (a simple Query, a Sync, a Flush, its password or its start-up) and speaks again
only once the server has answered. The relay reads the client's message framing to know
which: psycopg's pipeline sends many statements in one turn, and may go on sending them
while the first answers arrive (on a busy machine), which is not a wait; a pipelined read
sends a Flush and is.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from types import TracebackType

from psycopg.conninfo import conninfo_to_dict

WAITS = frozenset(b"QSHp")  # Query, Sync, Flush, password: the client waits for the answer
STARTUP_CODES = (80877103, 80877104)  # SSL and GSS encryption requests: a start-up follows


class _Turn:
    """One connection's conversation: whether the client's last message asks to be answered
    and whether the server has spoken since the client last did."""

    def __init__(self) -> None:
        self.waiting = True  # the client's first words are a turn of their own
        self.answered = True
        self._startup = True  # the start-up packet has a length and no type byte
        self._buffer = b""

    def read(self, data: bytes) -> None:
        """Follow the client's messages through ``data`` to the last one it completes."""
        buffer = self._buffer + data
        at = 0
        while True:
            if self._startup:
                if len(buffer) - at < 8:
                    break
                length, code = struct.unpack_from("!ii", buffer, at)
                if len(buffer) - at < length:
                    break
                self._startup = code in STARTUP_CODES
                self.waiting, at = True, at + length
                continue
            if len(buffer) - at < 5:
                break
            (length,) = struct.unpack_from("!i", buffer, at + 1)
            if len(buffer) - at < length + 1:
                break
            self.waiting, at = buffer[at] in WAITS, at + length + 1
        self._buffer = buffer[at:]


class RoundTrips:
    """Listens on a free local port and relays each connection to PostgreSQL's ``port``;
    ``count`` is the round trips of every connection through it so far."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.count = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._sockets: list[socket.socket] = [self._listener]
        threading.Thread(target=self._accept, daemon=True, name="relay").start()

    def dsn(self, dsn: str) -> str:
        """``dsn`` (a ``postgresql://`` address) through the relay, without TLS so that the
        relay sees the protocol: an address still, as writegate opens a log by it."""
        port = self._listener.getsockname()[1]
        parts = conninfo_to_dict(dsn)
        user = f"{parts['user']}@" if parts.get("user") else ""
        return f"postgresql://{user}127.0.0.1:{port}/{parts['dbname']}?sslmode=disable"

    def reset(self) -> int:
        """The count so far, and start again from 0."""
        with self._lock:
            counted, self.count = self.count, 0
        return counted

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(("127.0.0.1", self.port))
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, server]
            turn = _Turn()
            for pair in ((client, server, True), (server, client, False)):
                threading.Thread(target=self._pump, args=(*pair, turn), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, asks: bool, turn: _Turn) -> None:
        """Pass ``source``'s bytes to ``sink``; ``asks``: the client's side of ``turn``."""
        try:
            while data := source.recv(65536):
                with self._lock:
                    if not asks:
                        turn.answered = True
                    else:
                        if turn.waiting and turn.answered:
                            self.count += 1
                        turn.answered = False  # set before it is passed on: the reply follows
                        turn.read(data)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            s.close()

    def __enter__(self) -> RoundTrips:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

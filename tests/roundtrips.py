"""Round trips counted on the wire: a TCP relay between PostgreSQL and its clients.

A round trip is the client waiting for the server: it has sent a message that asks to be
answered (a simple Query, a Sync or a Flush) and speaks again only once the server has
answered. Opening a connection is not counted: the pool opens its connections in the
background, at any moment of a test. The relay reads the client's message framing to know
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
SYNCS = frozenset(b"QS")  # answered in full only by a ReadyForQuery
SYNC, FLUSH, READY, PARSE, BIND, QUERY = (ord(c) for c in "SHZPBQ")
STARTUP_CODES = (80877103, 80877104)  # SSL and GSS encryption requests: one byte answers


def _messages(buffer: bytes) -> tuple[list[tuple[int, bytes]], int]:
    """The whole messages (type, body) at the start of ``buffer``, and where they end."""
    messages, at = [], 0
    while len(buffer) - at >= 5:
        (length,) = struct.unpack_from("!i", buffer, at + 1)
        if len(buffer) - at < length + 1:
            break
        messages.append((buffer[at], buffer[at + 5 : at + length + 1]))
        at += length + 1
    return messages, at


class _Turn:
    """One connection's conversation: whether the client's last message asks to be answered
    and whether the server has answered all it was asked. A Sync or Query is answered by a
    ReadyForQuery. psycopg follows a pipeline's Sync with a Flush when it has not read all the
    answers yet: that Flush is part of the Sync's wait, whether the server's answers (some,
    or all) come before it or after."""

    def __init__(self, ran: list[str] | None = None) -> None:
        self.waiting = True  # the client's first words are a turn of their own
        self.answered = True
        self._startup = True  # the start-up packet has a length and no type byte
        self._one_byte = 0  # encryption requests the server answers with one unframed byte
        self.opening = True  # until the server is first ready for a query
        self._syncs = 0  # Syncs and Queries the server has not answered yet
        self._last: int | None = None  # the type of the client's last whole message
        self._client = b""
        self._server = b""
        self._parsed: dict[bytes, str] = {}  # the statements the client named, by name
        self.ran = [] if ran is None else ran  # each statement the client had run, its text

    def client(self, data: bytes) -> bool:
        """Follow the client's messages through ``data``: whether it starts a round trip."""
        waited = self.waiting and self.answered and not self.opening
        buffer, at = self._client + data, 0
        while self._startup and len(buffer) - at >= 8:
            length, code = struct.unpack_from("!ii", buffer, at)
            if len(buffer) - at < length:
                break
            self._startup = code in STARTUP_CODES
            self._one_byte += self._startup
            self.waiting, at = True, at + length
        types: list[int] = []
        if not self._startup:
            messages, end = _messages(buffer[at:])
            types = [kind for kind, _ in messages]
            self._statements(messages)
            at += end
        self._client = buffer[at:]
        if types and set(types) == {FLUSH} and self._last == SYNC and not self._client:
            return False  # psycopg's Flush after a Sync: asks nothing the Sync did not
        self.answered = False  # set before it is passed on: the reply follows
        if types:
            self.waiting, self._last = types[-1] in WAITS, types[-1]
            self._syncs += sum(kind in SYNCS for kind in types)
        return waited

    def _statements(self, messages: list[tuple[int, bytes]]) -> None:
        for kind, body in messages:
            if kind == PARSE:
                name, query = body.split(b"\0")[:2]
                self._parsed[name] = query.decode()
            elif kind == BIND:
                self.ran.append(self._parsed.get(body.split(b"\0")[1], "?"))
            elif kind == QUERY:
                self.ran.append(body.rstrip(b"\0").decode())

    def server(self, data: bytes) -> None:
        """Follow the server's messages through ``data``."""
        buffer = self._server + data
        while self._one_byte and buffer:
            self._one_byte, buffer = self._one_byte - 1, buffer[1:]
        messages, end = _messages(buffer)
        types = [kind for kind, _ in messages]
        self._syncs = max(0, self._syncs - types.count(READY))
        self.opening = self.opening and READY not in types
        self._server = buffer[end:]
        self.answered = self._syncs == 0


class RoundTrips:
    """Listens on a free local port and relays each connection to PostgreSQL's ``port``;
    ``count`` is the round trips of every connection through it so far, ``ran`` the text of
    each statement they ran."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.count = 0
        self.ran: list[str] = []
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
        """The count so far, and start again from 0 (and from no statements run)."""
        with self._lock:
            counted, self.count = self.count, 0
            self.ran.clear()
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
            turn = _Turn(self.ran)
            for pair in ((client, server, True), (server, client, False)):
                threading.Thread(target=self._pump, args=(*pair, turn), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, asks: bool, turn: _Turn) -> None:
        """Pass ``source``'s bytes to ``sink``; ``asks``: the client's side of ``turn``."""
        try:
            while data := source.recv(65536):
                with self._lock:
                    if not asks:
                        turn.server(data)
                    elif turn.client(data):
                        self.count += 1
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

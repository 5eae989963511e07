"""Round trips counted on the wire: a TCP relay between PostgreSQL and its clients.

A round trip is the client speaking again after the server has answered: the relay counts
each turn the conversation takes from server to client and back, whatever the client
library does inside (psycopg's pipeline sends many statements in one turn). A server that
fills its output buffer mid-pipeline would make more turns than the client waited for; an
append's answers are far smaller than that buffer.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

from psycopg.conninfo import conninfo_to_dict


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
            answered = [True]  # the client's first words are a turn of their own
            threading.Thread(
                target=self._pump, args=(client, server, answered, True), daemon=True
            ).start()
            threading.Thread(
                target=self._pump, args=(server, client, answered, False), daemon=True
            ).start()

    def _pump(
        self, source: socket.socket, sink: socket.socket, answered: list[bool], asks: bool
    ) -> None:
        try:
            while data := source.recv(65536):
                with self._lock:
                    if asks and answered[0]:
                        self.count += 1
                    answered[0] = not asks  # set before it is passed on: the reply follows it
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

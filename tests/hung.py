"""A server that accepts TCP connections and never answers: the hung Bolt server (or any
peer stuck after ``accept``) that timeouts on connect alone do not catch.

It records each connection it accepted and notices when the other side gives up (closes),
so a test can say "answered while the stuck attempt was still waiting" by order of events
rather than by the clock.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class HungServer:
    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self.accepted = threading.Event()  # set by the first connection
        self._open: list[socket.socket] = []
        self._closed = 0
        self.connections = 0  # accepted so far
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def waiting(self) -> int:
        """Connections accepted whose client has not given up yet."""
        self._poll()
        with self._lock:
            return len(self._open)

    def gave_up(self) -> int:
        """Connections the client closed (having had no answer)."""
        self._poll()
        with self._lock:
            return self._closed

    def _poll(self) -> None:
        with self._lock:
            for conn in list(self._open):
                if self._hung_up(conn):
                    conn.close()
                    self._open.remove(conn)
                    self._closed += 1

    @staticmethod
    def _hung_up(conn: socket.socket) -> bool:
        """Whether the client closed ``conn`` (what it sent is read and never answered)."""
        while True:
            try:
                if not conn.recv(65536):
                    return True
            except BlockingIOError:
                return False
            except OSError:
                return True

    def _run(self) -> None:
        self._listener.settimeout(0.1)
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.setblocking(False)
            with self._lock:
                self._open.append(conn)
                self.connections += 1
            self.accepted.set()

    def close(self) -> None:
        self._stopping.set()
        self._thread.join()
        self._listener.close()
        with self._lock:
            for conn in self._open:
                conn.close()
            self._open.clear()


@contextmanager
def hung_server() -> Iterator[HungServer]:
    server = HungServer()
    try:
        yield server
    finally:
        server.close()

"""The socket ``serve --http`` listens on: connections it accepts send without Nagle's delay.

Bound with the protocol left unnamed, asyncio (and so uvicorn) did not turn Nagle off on the
connections it accepted, and every response's body waited for the client's delayed ACK of
its headers: ~48 ms a call instead of ~6 ms over loopback.
"""

from __future__ import annotations

import asyncio
import socket

from writegate.gate.server.http import bind


def test_accepted_connections_have_nagle_off() -> None:
    async def accepted_nodelay() -> int:
        listening = bind("127.0.0.1", 0)
        port = listening.getsockname()[1]
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def accept(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accept, sock=listening)  # as uvicorn serves it
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            flag = await asyncio.wait_for(seen, 10)
            writer.close()
        return flag

    assert asyncio.run(accepted_nodelay()) != 0

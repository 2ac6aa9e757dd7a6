"""The receiver's listening socket: answers go out at once (TCP_NODELAY on every accepted
connection), not after the client's ~40 ms delayed ACK."""

from __future__ import annotations

import asyncio
import socket

from billops.listen import tcp_listener


def _nodelay_of_accepted(listener: socket.socket) -> int:
    async def main() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=listener)
        port = listener.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        value = await asyncio.wait_for(seen, 10)
        writer.close()
        server.close()
        return value

    return asyncio.run(main())


def test_accepted_connections_send_without_delay() -> None:
    assert _nodelay_of_accepted(tcp_listener("127.0.0.1", 0)) != 0


def test_a_plain_socket_would_not() -> None:
    """Why billops/listen.py exists: asyncio leaves a socket made without IPPROTO_TCP alone."""
    plain = socket.socket()
    plain.bind(("127.0.0.1", 0))
    plain.listen(8)
    assert _nodelay_of_accepted(plain) == 0

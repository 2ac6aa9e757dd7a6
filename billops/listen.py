"""A listening TCP socket for the servers billops runs itself (the webhook receiver).

Created with ``IPPROTO_TCP`` named explicitly: asyncio sets ``TCP_NODELAY`` on accepted
connections only for sockets it knows to be TCP (``proto == IPPROTO_TCP``), and a plain
``socket.socket()`` has ``proto`` 0. Without it every keep-alive answer waits ~40 ms for the
sender's delayed ACK (Nagle): most of a webhook's answer time (``bench/bench_webhooks.py``).
The sandbox binds its socket the same way.
"""

from __future__ import annotations

import socket


def tcp_listener(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A socket bound to ``host:port`` (0: a free port) and listening."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(backlog)
    return listener

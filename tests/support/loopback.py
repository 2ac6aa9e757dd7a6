"""What a command-line login listens with: a one-page HTTP server on a random loopback port."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class LoopbackReceiver:
    """Records the query of each redirect it receives (``code``, ``state`` or ``error``)."""

    def __init__(self, server: ThreadingHTTPServer) -> None:
        self._server = server
        self.received: list[dict[str, str]] = []
        self.arrived = threading.Event()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/callback"


@contextmanager
def loopback_receiver() -> Iterator[LoopbackReceiver]:
    holder: list[LoopbackReceiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            query = parse_qs(urlsplit(self.path).query)
            holder[0].received.append({key: values[0] for key, values in query.items()})
            holder[0].arrived.set()
            page = (
                b"<html><body><p id='done'>Signed in. You may close this window.</p></body></html>"
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:  # keep the test output clean
            """Keep the test output clean: no access log."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(LoopbackReceiver(server))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()

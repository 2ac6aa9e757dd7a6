"""The authorization-code login of ``billops auth login``: the login URL (``state`` + PKCE), a
one-shot loopback listener for the redirect, and reading a pasted redirect URL or code.

Nothing here prints: the CLI decides what a person sees (and never shows a secret).
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit, urlunsplit

_PAGE = (
    b"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>billops login</title>"
    b"</head><body><p>billops received the answer. You may close this window.</p></body></html>"
)


class LoginError(Exception):
    """The login did not complete; the message says why and what to do."""


@dataclass(frozen=True)
class LoginRequest:
    """One login attempt: where to send the person, and what to check when they come back."""

    authorize_url: str
    redirect_uri: str
    state: str
    code_verifier: str | None


def prepare_login(
    login_url: str, *, client_id: str, redirect_uri: str, pkce: bool = True
) -> LoginRequest:
    """A fresh ``state`` (and PKCE pair) and the authorize URL carrying them."""
    from billing_api import build_authorize_url, new_state, pkce_pair

    state = new_state()
    verifier, challenge = pkce_pair() if pkce else (None, None)
    url = build_authorize_url(
        login_url,
        client_id=client_id,
        redirect_uri=redirect_uri,
        state=state,
        code_challenge=challenge,
    )
    return LoginRequest(url, redirect_uri, state, verifier)


def is_loopback_uri(uri: str) -> bool:
    """True for ``http://127.0.0.1:PORT/...``, ``http://localhost...`` and ``http://[::1]...``."""
    parts = urlsplit(uri)
    if parts.scheme != "http" or not parts.hostname:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


def code_from_redirect(query: dict[str, str], expected_state: str | None) -> str:
    """The authorization code of a redirect's query, after checking ``state`` and ``error``.

    ``expected_state`` None means the person pasted a bare code, which carries no state.
    """
    if "error" in query:
        described = query.get("error_description")
        raise LoginError(
            f"the service refused the login: {query['error']}"
            + (f" ({described})" if described else "")
        )
    if expected_state is not None and query.get("state") != expected_state:
        raise LoginError(
            "the redirect's state does not match this login (a stale or forged redirect); "
            "start the login again"
        )
    code = query.get("code")
    if not code:
        raise LoginError("the redirect carries no authorization code")
    return code


def parse_pasted(text: str) -> tuple[dict[str, str], bool]:
    """What a person pasted: the redirect URL, its query string, or the bare code.

    Returns the query and whether it carried a ``state`` that can be checked.
    """
    text = text.strip()
    if not text:
        raise LoginError("nothing was pasted")
    query_text = urlsplit(text).query if "://" in text else text.lstrip("?")
    if "=" not in query_text:
        return {"code": text}, False
    query = {key: values[0] for key, values in parse_qs(query_text).items()}
    return query, "state" in query


class LoopbackListener:
    """A one-page HTTP server on a loopback redirect URI that waits for one redirect."""

    def __init__(self, server: ThreadingHTTPServer, path: str, redirect_uri: str) -> None:
        self._server = server
        self._path = path
        self.redirect_uri = redirect_uri
        self._arrived = threading.Event()
        self._query: dict[str, str] | None = None

    def _receive(self, path: str) -> bool:
        parts = urlsplit(path)
        if parts.path != self._path or self._arrived.is_set():
            return False
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        if "code" not in query and "error" not in query:
            return False
        self._query = query
        self._arrived.set()
        return True

    def wait(self, timeout: float) -> dict[str, str]:
        """The redirect's query; ``LoginError`` if none arrives within ``timeout`` seconds."""
        if not self._arrived.wait(timeout) or self._query is None:
            raise LoginError(
                f"no redirect arrived within {timeout:g} s; run the login again, or use --paste"
            )
        return self._query


@contextmanager
def loopback_listener(redirect_uri: str | None) -> Iterator[LoopbackListener]:
    """Listen on ``redirect_uri`` (a loopback URI; port 0 or None picks a free port on
    127.0.0.1 with path ``/callback``). The listener's ``redirect_uri`` has the real port."""
    uri = redirect_uri or "http://127.0.0.1:0/callback"
    if not is_loopback_uri(uri):
        raise LoginError(f"redirect URI {uri!r} is not a loopback http URI: use --paste")
    parts = urlsplit(uri)
    host = parts.hostname or "127.0.0.1"
    bind = "127.0.0.1" if host == "localhost" else host
    path = parts.path or "/"
    holder: list[LoopbackListener] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if not holder[0]._receive(self.path):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(_PAGE)))
            self.end_headers()
            self.wfile.write(_PAGE)

        def log_message(self, *args: object) -> None:
            """No access log: the request line carries the authorization code."""

    family_server = _server_class(bind)
    try:
        server = family_server((bind, parts.port or 0), Handler)
    except OSError as exc:
        raise LoginError(f"cannot listen on {uri}: {exc.strerror or exc}; use --paste") from None
    port = server.server_address[1]
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    actual = urlunsplit((parts.scheme, netloc, path, parts.query, ""))
    holder.append(LoopbackListener(server, path, actual))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()


def _server_class(host: str) -> type[ThreadingHTTPServer]:
    import socket

    if ":" not in host:
        return ThreadingHTTPServer

    class V6Server(ThreadingHTTPServer):
        address_family = socket.AF_INET6

    return V6Server

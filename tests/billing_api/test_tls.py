"""The service's clients share one TLS context per process (``billing_api/_tls.py``), and sharing
it verifies certificates as httpx's own default does: an HTTPS server on loopback with a
certificate of its own is refused until ``SSL_CERT_FILE`` names that certificate."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from billing_api import BillingClient, ClientCredentials, OAuthClient
from billing_api._tls import shared_ssl_context
from tests.support.tls import self_signed


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the handler's protocol
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - base signature
        """Quiet: the tests read the answers, not the server's access log."""


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(API root, certificate) of an HTTPS server on a free loopback port."""
    cert, key = self_signed(tmp_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/api", cert
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fresh_context() -> Iterator[None]:
    """The shared context built anew for this test, and again for the next one."""
    shared_ssl_context.cache_clear()
    yield
    shared_ssl_context.cache_clear()


def _context_of(http_client: object) -> ssl.SSLContext:
    return http_client._transport._pool._ssl_context  # type: ignore[attr-defined,no-any-return]


@pytest.mark.usefixtures("fresh_context")
def test_every_client_of_the_service_uses_the_one_context() -> None:
    credentials = ClientCredentials("id", "secret")
    with (
        BillingClient("https://service.invalid/api") as first,
        BillingClient("https://service.invalid/api") as second,
        OAuthClient("https://service.invalid/api", credentials) as oauth,
    ):
        shared = shared_ssl_context()
        assert _context_of(first._http) is shared
        assert _context_of(second._http) is shared
        assert _context_of(oauth._http) is shared
    assert shared.verify_mode == ssl.CERT_REQUIRED
    assert shared.check_hostname


@pytest.mark.usefixtures("fresh_context")
def test_the_shared_context_refuses_an_unknown_certificate(
    https_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = https_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with BillingClient(root, max_retries=0) as client, pytest.raises(Exception) as refused:
        client.request("biller.retrieve")
    chain, error = [], refused.value
    while error is not None:
        chain.append(f"{type(error).__name__}: {error}")
        error = error.__cause__ or error.__context__
    assert "CERTIFICATE_VERIFY_FAILED" in " | ".join(chain)


@pytest.mark.usefixtures("fresh_context")
def test_the_shared_context_trusts_what_ssl_cert_file_names(
    https_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cert = https_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with BillingClient(root, max_retries=0) as client:
        assert client.request("biller.retrieve").status_code == 200

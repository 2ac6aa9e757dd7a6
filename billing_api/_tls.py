"""One TLS context per process for every HTTP client billops opens to the service.

httpx builds a fresh ``ssl.SSLContext`` for each ``httpx.Client`` and loads the whole CA bundle
into it: about 35 ms of CPU each, measured here. A biller's night opens some ten clients (each
job's ``BillingClient`` and the ``OAuthClient`` behind it), so 0.36 s of a night's 3.5 s of CPU
went to reading the same certificates again.
A context is safe to share between clients and threads once it is configured, and httpx takes
one as ``verify``; the context is built the way httpx builds its default (certifi's bundle, or
``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set), once, at the first client.
"""

from __future__ import annotations

import functools
import ssl

import httpx

__all__ = ["shared_ssl_context"]


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The process's TLS context for the service's clients, built on first use.

    The CA environment (``SSL_CERT_FILE``, ``SSL_CERT_DIR``) is read then: a process that changes
    it later must call ``shared_ssl_context.cache_clear()`` for new clients to see it.
    """
    return httpx.create_ssl_context()

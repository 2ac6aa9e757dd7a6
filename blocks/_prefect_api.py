"""The Prefect API as the credential blocks' token store: one client per process, and errors that
name the block and the API instead of looking like the billing service's.

``Block.load`` and ``Block.save`` open a new API client on every call, and ``save`` registers the
block type and schema each time (a save measured 0.25–0.4 s here, most of a rotation's cost). The
refresh path needs only two calls, on one long-lived client: read the block's document, and
update its token fields in place.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any
from uuid import UUID

import httpx

from billing_api import TokenStoreError, scrub

if TYPE_CHECKING:
    from prefect.client.orchestration import SyncPrefectClient
    from prefect.client.schemas.objects import BlockDocument

_clients: dict[tuple[int, str], SyncPrefectClient] = {}
_clients_guard = threading.Lock()


def api_url() -> str:
    """The Prefect API this process talks to (``PREFECT_API_URL``; empty means ephemeral)."""
    from prefect.settings import PREFECT_API_URL

    return str(PREFECT_API_URL.value() or "(ephemeral Prefect API)")


def _client() -> SyncPrefectClient:
    from prefect.client.orchestration import get_client

    # Keyed by process too: a forked child must open its own connections.
    key = (os.getpid(), api_url())
    with _clients_guard:
        client = _clients.get(key)
        if client is None:
            client = get_client(sync_client=True)
            client.__enter__()
            _clients[key] = client
    return client


@atexit.register
def _close_clients() -> None:
    with _clients_guard:
        mine = [key for key in _clients if key[0] == os.getpid()]
        for key in mine:
            with contextlib.suppress(Exception):
                _clients.pop(key).__exit__(None, None, None)


@contextlib.contextmanager
def store_errors(block: str, doing: str, secrets: Iterable[str | None] = ()) -> Iterator[None]:
    """Turn what the Prefect client raises into :class:`TokenStoreError` naming ``block``."""
    from prefect.exceptions import ObjectNotFound, PrefectHTTPStatusError

    where = f"credential block {block!r} on the Prefect API at {api_url()}"
    try:
        yield
    except ObjectNotFound:
        raise TokenStoreError(
            block,
            f"{where}: the block does not exist ({doing}); create it with: "
            f"billops auth login --block {block}",
        ) from None
    except (httpx.HTTPError, PrefectHTTPStatusError, OSError, RuntimeError) as error:
        # A refused request may echo what was sent: never let a token through.
        detail = scrub(f"{type(error).__name__}: {error}", secrets)
        raise TokenStoreError(block, f"{where}: {doing} failed: {detail}") from None


def read_document(block: str, slug: str) -> BlockDocument:
    """The block's stored document, secrets included."""
    with store_errors(block, "reading the block"):
        return _client().read_block_document_by_name(block, slug, include_secrets=True)


def update_document(
    block: str, document_id: UUID, data: dict[str, Any], secrets: Iterable[str | None]
) -> None:
    """Replace the given fields of the block's stored document (the others are kept)."""
    from prefect.client.schemas.actions import BlockDocumentUpdate

    update = BlockDocumentUpdate(data=data, merge_existing_data=True)
    with store_errors(block, "saving the block", secrets):
        _client().update_block_document(document_id, update)

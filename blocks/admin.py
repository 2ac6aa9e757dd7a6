"""What ``billops auth`` does to a ``BillerCredentials`` block: save a login, restore a recovery
file, revoke. Every write happens under the block's refresh lock, so none can interleave with a
worker's refresh, and each moves the rotation counter on, so a worker still holding the old
token set is refused (``StaleTokenSet``) instead of overwriting the new one.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blocks._common import default_recovery_dir
from blocks._lock import ensure_limit
from blocks.credentials import BillerCredentials, _load_named, _save_named

if TYPE_CHECKING:
    from billing_api._tokens import TokenSet


class RecoveryError(Exception):
    """A recovery file is missing, unreadable, or older than what the block holds."""


def find_block(name: str) -> BillerCredentials | None:
    """The stored block ``name``, or None if there is none."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_block_document_by_name(
                name, BillerCredentials.get_block_type_slug(), include_secrets=False
            )
        except ObjectNotFound:
            return None
    return _load_named(BillerCredentials, name)


def save_login(name: str, settings: dict[str, Any], tokens: TokenSet) -> BillerCredentials:
    """Create block ``name`` from a login, or replace an existing block's app and tokens.

    ``settings`` are the block's non-token fields (environment, base_url, client_id, ...).
    """
    existing = find_block(name)
    if existing is None:
        block = BillerCredentials(**settings, refresh_token=tokens.refresh_token)
        block.set_tokens(tokens)
        _save_named(block, name, overwrite=False)
        ensure_limit(block.lock_name)
        return block
    with existing.lock():
        current = existing.read()
        fresh = BillerCredentials(**settings, refresh_token=tokens.refresh_token)
        fresh.set_tokens(replace(tokens, rotation=current.rotation + 1))
        _save_named(fresh, name, overwrite=True)
    return fresh


def recovery_path(name: str, recovery_dir: Path | None = None) -> Path:
    """Where the refresh procedure leaves a token set it could not save into block ``name``."""
    from billing_api._tokens import recovery_file_path

    return recovery_file_path(recovery_dir or default_recovery_dir(), name)


def read_recovery_file(path: Path) -> TokenSet:
    """The token set in a recovery file (written by ``billing_api._tokens``)."""
    from billing_api._tokens import read_recovery_file as read_tokens

    if not path.is_file():
        raise RecoveryError(f"no recovery file at {path}")
    try:
        return read_tokens(path)
    except OSError as exc:
        raise RecoveryError(f"{path}: cannot read the recovery file ({exc.strerror})") from None
    except ValueError as exc:  # the message names the file and the field, or line and column
        raise RecoveryError(str(exc)) from None


def restore_recovery(
    block: BillerCredentials, path: Path, *, force: bool = False
) -> tuple[int, Path]:
    """Write the recovery file's token set into ``block``; move the file aside.

    Returns the block's new rotation and where the file went. Refuses (``RecoveryError``) when
    the block has moved past the file's rotation, unless ``force``.
    """
    recovered = read_recovery_file(path)
    with block.lock():
        current = block.read()
        if current.rotation >= recovered.rotation and not force:
            raise RecoveryError(
                f"block {block.name!r} is at rotation {current.rotation} and the recovery file "
                f"holds rotation {recovered.rotation}: the block has moved on since (a later "
                "refresh or login). Restore anyway with --force"
            )
        rotation = max(recovered.rotation, current.rotation + 1)
        block.write(replace(recovered, rotation=rotation), expected_rotation=current.rotation)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.stem}.restored-{stamp}{path.suffix}")
    os.replace(path, aside)
    return rotation, aside


def forget_tokens(block: BillerCredentials) -> int:
    """After a revoke: drop the cached access token and move the rotation on. Returns it."""
    with block.lock():
        current = block.read()
        rotation = current.rotation + 1
        cleared = replace(
            current, access_token=None, access_token_expires_at=None, rotation=rotation
        )
        block.write(cleared, expected_rotation=current.rotation)
    return rotation

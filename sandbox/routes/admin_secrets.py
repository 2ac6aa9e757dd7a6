"""``/_sandbox/secrets``: every secret the sandbox issued, for the tests' secret scan.

Not part of the contract; no authentication, loopback clients only (like ``/_sandbox``).
``GET /_sandbox/secrets`` answers ``{"digests": [...], "clear": [...], "prefixes": [...]}``:
SHA-256 digests of client secrets, codes and tokens (the sandbox keeps nothing else of them) and
webhook signing secrets and target credentials as they are (``sandbox/oauth/issued.py``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from sandbox.core.deps import AdminGuard, SessionDep
from sandbox.oauth.issued import issued_secrets

router = APIRouter(prefix="/_sandbox", dependencies=[AdminGuard], include_in_schema=False)


@router.get("/secrets")
def read_secrets(session: SessionDep) -> dict[str, Any]:
    return issued_secrets(session)

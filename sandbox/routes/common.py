"""What the customer-area routes share: the caller's biller id and the sandbox's root URL."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Body, Depends, Request

from sandbox.deps import BillerDep
from sandbox.errors import forbidden


def _biller_id(principal: BillerDep) -> str:
    if principal.biller_id is None:  # a biller token always names its biller
        raise forbidden("this access token does not belong to a biller")
    return principal.biller_id


# The biller of a biller token (403 for platform tokens, and for read-only ones on writes).
BillerId = Annotated[str, Depends(_biller_id)]
JsonBody = Annotated[dict[str, Any], Body()]


def root_of(request: Request) -> str:
    """The sandbox's root URL as this request reached it (hosted pages live there)."""
    return str(request.base_url).rstrip("/")

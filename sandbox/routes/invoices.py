"""Routes of the contract's `invoices` operations (filled in by the sandbox-resources issue)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

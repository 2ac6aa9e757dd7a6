"""Routes of the contract's `invoices` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

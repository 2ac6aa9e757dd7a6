"""Routes of the contract's `payment_requests` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

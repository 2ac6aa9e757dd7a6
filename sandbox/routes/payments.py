"""Routes of the contract's `payments` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

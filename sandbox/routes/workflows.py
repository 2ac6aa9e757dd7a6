"""Routes of the contract's `workflows` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

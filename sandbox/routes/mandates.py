"""Routes of the contract's `mandates` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

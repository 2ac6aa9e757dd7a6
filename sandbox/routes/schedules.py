"""Routes of the contract's `schedules` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

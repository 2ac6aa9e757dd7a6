"""Routes of the contract's `schedules` operations (filled in by the sandbox-resources issue)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

"""Routes of the contract's `bulk_import` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

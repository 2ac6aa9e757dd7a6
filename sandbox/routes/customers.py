"""Routes of the contract's `customers` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

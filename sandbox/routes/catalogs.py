"""Routes of the contract's `catalogs` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

"""Routes of the contract's `admin_customers` operations.."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()

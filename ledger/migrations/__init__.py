"""Alembic migrations of the ledger (run through :mod:`ledger.migrate`, no alembic.ini)."""

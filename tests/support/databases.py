"""A throwaway PostgreSQL database per test session, on the server of BILLOPS_TEST_DATABASE_URL."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import make_url


def _libpq(url: str) -> str:
    """psycopg wants a plain libpq URL; accept SQLAlchemy's ``postgresql+psycopg://`` too."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def temporary_postgres_database(server_url: str) -> Iterator[str]:
    """Create ``billops_test_<random>`` next to ``server_url``'s database; drop it afterwards."""
    import psycopg

    name = f"billops_test_{secrets.token_hex(6)}"
    with psycopg.connect(_libpq(server_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(_libpq(server_url)).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq(server_url), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

"""Ledger URLs and engines: parse with clear errors, hide passwords, tune SQLite for workers.

SQLite runs in WAL mode (readers never wait for the writer) with a 30 s busy timeout, so
concurrent workers queue for the write lock instead of failing with "database is locked".
PostgreSQL gets a small pool with pre-ping (a restarted server does not break a long flow).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

from ledger.errors import LedgerConfigError

SQLITE_BUSY_TIMEOUT_SECONDS = 30.0
URL_EXAMPLES = "e.g. sqlite:////path/to/ledger.db or postgresql://user@host:5432/billops"
# psycopg 3 is the PostgreSQL driver billops installs; SQLAlchemy's default would be psycopg2.
_DRIVER_ALIASES = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg"}
# ``scheme://user:password@`` (spaces allowed: a malformed URL is still somebody's password),
# and ``user:password@host`` without a scheme.
_PASSWORD_AFTER_SCHEME = re.compile(r"(://[^:/@]*:)[^@]*@")
_PASSWORD_BARE = re.compile(r"([^\s:/@]+:)[^@\s/]+@")


def redact(text: str) -> str:
    """``text`` with anything that looks like the password of a URL replaced by ``***``."""
    return _PASSWORD_BARE.sub(r"\1***@", _PASSWORD_AFTER_SCHEME.sub(r"\1***@", text))


def parse_url(url: str | URL) -> URL:
    """The SQLAlchemy URL of a ledger, or :class:`LedgerConfigError` naming what is wrong."""
    if isinstance(url, URL):
        parsed = url
    else:
        if not isinstance(url, str) or not url.strip():
            raise LedgerConfigError(f"the ledger URL is empty ({URL_EXAMPLES})")
        try:
            parsed = make_url(url.strip())
        except (ArgumentError, ValueError):
            # SQLAlchemy's message repeats the whole URL, password included: never chain it.
            raise LedgerConfigError(
                f"the ledger URL {redact(url)!r} is not a database URL ({URL_EXAMPLES})"
            ) from None
    alias = _DRIVER_ALIASES.get(parsed.drivername)
    return parsed.set(drivername=alias) if alias else parsed


def safe_url(url: str | URL) -> str:
    """The URL as it may be shown to people and written to logs (password hidden)."""
    try:
        return parse_url(url).render_as_string(hide_password=True)
    except LedgerConfigError:
        return redact(str(url))


def make_engine(url: str | URL) -> Engine:
    """An engine for the ledger at ``url`` (see the module docstring for the tuning)."""
    parsed = parse_url(url)
    shown = parsed.render_as_string(hide_password=True)
    backend = parsed.get_backend_name()
    kwargs: dict[str, Any] = {"json_serializer": to_json}
    if backend == "sqlite":
        kwargs["connect_args"] = {
            "timeout": SQLITE_BUSY_TIMEOUT_SECONDS,
            "check_same_thread": False,
        }
        if _sqlite_in_memory(parsed):
            kwargs["poolclass"] = StaticPool
        else:
            _check_sqlite_folder(parsed, shown)
    elif backend == "postgresql":
        kwargs.update(pool_pre_ping=True, pool_size=5, max_overflow=5, pool_recycle=1800)
    try:
        engine = create_engine(parsed, **kwargs)
    except NoSuchModuleError:
        raise LedgerConfigError(
            f"the ledger URL {shown!r} names an unknown database or driver "
            f"{parsed.drivername!r} ({URL_EXAMPLES})"
        ) from None
    except (ArgumentError, ImportError, ValueError, TypeError) as exc:
        raise LedgerConfigError(
            f"cannot use the ledger URL {shown!r}: {redact(str(exc))}"
        ) from None
    if backend == "sqlite":
        event.listen(engine, "connect", _tune_sqlite)
    return engine


def to_json(value: Any) -> str:
    """JSON for the ledger's JSON columns: money (``Decimal``) as a string, dates as ISO 8601."""
    return json.dumps(value, default=_json_default, ensure_ascii=False, sort_keys=True)


def check_json(what: str, value: Any) -> None:
    """Refuse a value the JSON columns cannot hold, naming the field (before any SQL runs)."""
    try:
        to_json(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: {exc}") from None


def _json_default(value: Any) -> str:
    # A Decimal as a string keeps every digit; a float would not (``docs/conventions.md`` §1 Money).
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(
        f"the ledger stores JSON, and a {type(value).__name__} is not JSON "
        "(convert it to str, int, list or dict first)"
    )


def _sqlite_in_memory(url: URL) -> bool:
    return url.database in (None, "", ":memory:")


def _check_sqlite_folder(url: URL, shown: str) -> None:
    folder = Path(str(url.database)).expanduser().parent
    if not folder.is_dir():
        raise LedgerConfigError(
            f"the ledger URL {shown!r} points into {str(folder)!r}, which is not a folder "
            "(create it, or set BILLOPS_HOME / BILLOPS_LEDGER_URL)"
        )


def _tune_sqlite(dbapi_connection: Any, connection_record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_SECONDS * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()

"""A pytest plugin: no secret issued during the session may appear in any log of the session.

Tests (and the wrapped :class:`SandboxAdmin` helpers, automatically) register every secret they
obtain with :func:`register_secret`; tests that run subprocesses or servers register their output
with :func:`register_log`. At the end of the session the plugin scans

- pytest's captured output of every test phase (stdout, stderr, log records, failure texts),
- the Prefect server's stored logs (read just before the ``prefect`` fixture's harness stops),
- every registered log (a file path or a text),
- every file of a registered tree (:func:`register_tree`: a directory where billops keeps state,
  whose only places allowed to hold a token are named, such as the recovery journal),
- every column of every table of a registered database (:func:`register_database`: the ledger,
  but the columns named as holding a credential),

for every registered secret, and for every secret a sandbox issued (:func:`register_issued`: the
sandbox lists the digests of every client secret, code and token it handed out, so a token
rotated by a worker process the test never saw is found too, and its webhook signing secrets and
target credentials), and fails the session listing which logs leaked — never the secret.
Registered as ``pytest_plugins`` in ``tests/conftest.py``.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

# Shorter values (ids, short codes) would match by accident; real tokens are far longer.
MIN_SECRET_LENGTH = 12

_guard = threading.Lock()
_secrets: set[str] = set()
_texts: list[tuple[str, str]] = []
_paths: list[tuple[str, Path]] = []
_leaks: list[str] = []
_digests: set[str] = set()  # SHA-256 hex digests of issued secrets (the sandbox's own list)
_prefixes: set[str] = set()  # what those secrets start with (to find candidates in a text)

T = TypeVar("T")


def register_secret(value: str | None) -> None:
    """Remember a secret value issued in this session (ignored if short or empty)."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _guard:
            _secrets.add(value)


def register_log(source: str | Path, *, label: str | None = None) -> None:
    """Scan this log at the end of the session: a file (read then) or a text (kept now)."""
    with _guard:
        if isinstance(source, Path):
            _paths.append((label or str(source), source))
        else:
            _texts.append((label or "registered text", source))


def register_tree(root: Path, *, allowed: Iterable[Path] = (), label: str) -> None:
    """Scan every file under ``root`` now, except the files and directories in ``allowed`` (where
    tokens belong); each file is scanned under ``label: <relative path>``."""
    kept = [Path(path).resolve() for path in allowed]
    for path in sorted(Path(root).rglob("*")):
        resolved = path.resolve()
        if not path.is_file() or any(resolved == a or a in resolved.parents for a in kept):
            continue
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        register_log(text, label=f"{label}: {path.relative_to(root)}")


def register_issued(admin_http: Any) -> int:
    """Every secret the sandbox behind ``admin_http`` (an ``httpx.Client`` on its root, such as
    ``SandboxAdmin.http``) issued so far: digests of client secrets, codes and tokens, webhook
    credentials in clear. Call it while the sandbox runs, after the last token was rotated;
    returns how many secrets were registered."""
    answer = admin_http.get("/_sandbox/secrets")
    answer.raise_for_status()
    body = answer.json()
    with _guard:
        _digests.update(body["digests"])
        _prefixes.update(body["prefixes"])
    for value in body["clear"]:
        register_secret(value)
    return len(body["digests"]) + len(body["clear"])


def register_database(url: str, *, allowed: Iterable[str] = (), label: str) -> None:
    """Scan every column of every table of the database at ``url`` (read now), but the
    ``table.column`` names in ``allowed`` (:func:`database_texts`)."""
    for table, text in database_texts(url, allowed=allowed, label=label):
        register_log(text, label=table)


def database_texts(url: str, *, allowed: Iterable[str] = (), label: str) -> list[tuple[str, str]]:
    """``(label: <table>, every row's values)`` for every table of the database at ``url``
    (SQLAlchemy URL), but the ``table.column`` names in ``allowed``: columns meant to hold a
    credential, such as the ledger's sealed token journal."""
    from sqlalchemy import MetaData, create_engine, select
    from sqlalchemy.engine import make_url

    kept = set(allowed)
    parsed = make_url(url)
    if parsed.drivername == "postgresql":  # billops' URLs mean psycopg 3, as the ledger reads them
        parsed = parsed.set(drivername="postgresql+psycopg")
    engine = create_engine(parsed)
    found: list[tuple[str, str]] = []
    try:
        meta = MetaData()
        meta.reflect(engine)
        if not meta.tables:  # a scan that looked at nothing must not pass
            raise ValueError(f"{label}: no table to scan in {engine.url!r}")
        with engine.connect() as db:
            for name, table in sorted(meta.tables.items()):
                columns = [c for c in table.columns if f"{name}.{c.name}" not in kept]
                if columns:
                    rows = db.execute(select(*columns))
                    text = "\n".join("\t".join(_as_text(v) for v in row) for row in rows)
                    found.append((f"{label}: {name}", text))
    finally:
        engine.dispose()
    return found


def _as_text(value: Any) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", errors="replace")
    return "" if value is None else str(value)


def _candidates(prefixes: Iterable[str]) -> re.Pattern[str] | None:
    """Token-shaped pieces of a text: a known prefix, then the URL-safe alphabet."""
    ordered = sorted(set(prefixes), key=len, reverse=True)
    if not ordered:
        return None
    return re.compile("(?:" + "|".join(map(re.escape, ordered)) + ")[A-Za-z0-9_-]{8,}")


def find_leaks(
    secrets: Iterable[str],
    logs: Iterable[tuple[str, str]],
    *,
    digests: Iterable[str] = (),
    prefixes: Iterable[str] = (),
) -> list[str]:
    """The labels of the logs that contain any of ``secrets``, or a token-shaped piece (starting
    with one of ``prefixes``) whose SHA-256 hex digest is in ``digests`` (each label once)."""
    wanted = [s for s in secrets if s]
    hashed = set(digests)
    pattern = _candidates(prefixes) if hashed else None
    leaked: list[str] = []
    for label, text in logs:
        if label in leaked:
            continue
        if any(secret in text for secret in wanted) or (
            pattern is not None
            and any(
                hashlib.sha256(found.encode()).hexdigest() in hashed
                for found in pattern.findall(text)
            )
        ):
            leaked.append(label)
    return leaked


# --- automatic registration of what the sandbox helpers hand out -------------------------------
_SECRET_FIELDS = {"client_secret", "access_token", "refresh_token", "code"}


def _register_result(result: Any) -> None:
    if isinstance(result, str):
        register_secret(result)
    elif is_dataclass(result) and not isinstance(result, type):
        for item in fields(result):
            value = getattr(result, item.name)
            if item.name in _SECRET_FIELDS and isinstance(value, str):
                register_secret(value)
            elif is_dataclass(value):
                _register_result(value)


def _registering(method: Callable[..., T]) -> Callable[..., T]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        result = method(*args, **kwargs)
        _register_result(result)
        return result

    return wrapper


def _wrap_sandbox_admin() -> None:
    from tests.support.sandbox_admin import SandboxAdmin

    if getattr(SandboxAdmin, "_secret_scan_wrapped", False):
        return
    for name in ("create_app", "connect_biller", "platform_token", "authorization_code"):
        setattr(SandboxAdmin, name, _registering(getattr(SandboxAdmin, name)))
    original_token = SandboxAdmin.token

    @functools.wraps(original_token)
    def token(self: Any, *args: Any, **kwargs: Any) -> Any:
        response = original_token(self, *args, **kwargs)
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            register_secret(body.get("access_token"))
            register_secret(body.get("refresh_token"))
        return response

    SandboxAdmin.token = token  # type: ignore[method-assign]
    SandboxAdmin._secret_scan_wrapped = True  # type: ignore[attr-defined]


_wrap_sandbox_admin()


# --- collection ------------------------------------------------------------------------------
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    where = f"{report.nodeid} ({report.when})"
    with _guard:
        for title, content in report.sections:
            _texts.append((f"{where}: {title}", content))
        if report.longrepr is not None:
            _texts.append((f"{where}: failure report", report.longreprtext))


def _prefect_server_logs() -> str:
    """Every log record the Prefect API stored (flow and task run logs)."""
    from prefect.client.orchestration import get_client

    lines: list[str] = []
    with get_client(sync_client=True) as client:
        offset = 0
        while True:
            batch = client.read_logs(limit=200, offset=offset)
            lines.extend(f"{log.name} {log.level} {log.message}" for log in batch)
            if len(batch) < 200:
                return "\n".join(lines)
            offset += len(batch)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Any:
    result = yield
    if fixturedef.argname == "prefect":
        # Finalizers run last-in first-out: this one runs before the harness shuts down.
        def collect() -> None:
            try:
                register_log(_prefect_server_logs(), label="Prefect server logs (API)")
            except Exception as exc:  # the scan must say it could not look, not pass silently
                register_log(f"unreadable: {type(exc).__name__}", label="Prefect server logs")
                with _guard:
                    _leaks.append(f"Prefect server logs could not be read ({type(exc).__name__})")

        fixturedef.addfinalizer(collect)
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    with _guard:
        secrets, digests, prefixes = set(_secrets), set(_digests), set(_prefixes)
        logs = list(_texts)
        for label, path in _paths:
            try:
                logs.append((label, path.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                logs.append((label, ""))
    leaked = find_leaks(secrets, logs, digests=digests, prefixes=prefixes)
    with _guard:
        _leaks.extend(f"secret found in: {label}" for label in leaked)
        failed = bool(_leaks)
    if failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    with _guard:
        leaks = list(_leaks)
        count = len(_secrets) + len(_digests)
    if leaks:
        terminalreporter.section("secret scan", sep="=", red=True, bold=True)
        for line in leaks:
            terminalreporter.write_line(line)
        terminalreporter.write_line("(the secrets themselves are not shown)")
    elif count:
        terminalreporter.write_line(f"secret scan: {count} secrets, no leak in any log")

"""Bad ledger URLs: a clear error naming the URL, and never its password."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger import Ledger, LedgerConfigError, safe_url, upgrade_database

SECRET = "s3cr3t-pw"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "the ledger URL is empty"),
        ("ledger.db", "the ledger URL 'ledger.db' is not a database URL"),
        (f"nosuchdb://alice:{SECRET}@host/db", "names an unknown database or driver 'nosuchdb'"),
        (f"postgresql://alice:{SECRET}@127.0.0.1:1/billops", "cannot connect to the ledger at"),
        (f"postgresql://alice:{SECRET}@no-such-host.invalid/billops", "cannot connect"),
        (f"sqlite:///{'/nonexistent-dir'}/ledger.db", "'/nonexistent-dir', which is not a folder"),
        (f"not a url :// alice:{SECRET}@x", "is not a database URL"),
    ],
)
def test_bad_urls_are_named_without_their_password(url: str, message: str) -> None:
    with pytest.raises(LedgerConfigError) as caught:
        Ledger(url)
    text = str(caught.value)
    assert message in text
    assert SECRET not in text and SECRET not in repr(caught.value)
    assert caught.value.__cause__ is None or SECRET not in str(caught.value.__cause__)
    if "alice" in url and "://" in url.split()[0]:
        assert "alice:***@" in text


def test_upgrade_database_reports_the_same_way() -> None:
    with pytest.raises(LedgerConfigError, match=r"postgresql\+psycopg://bob:\*\*\*@127.0.0.1:1/x"):
        upgrade_database(f"postgresql://bob:{SECRET}@127.0.0.1:1/x")


def test_the_ledger_never_shows_a_password(tmp_path: Path) -> None:
    assert safe_url(f"postgresql://carol:{SECRET}@db:5432/billops") == (
        "postgresql+psycopg://carol:***@db:5432/billops"
    )
    with Ledger(f"sqlite:///{tmp_path / 'l.db'}") as opened:
        assert repr(opened) == f"Ledger('sqlite:///{tmp_path / 'l.db'}')"

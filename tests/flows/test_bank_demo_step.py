"""The demo's bank step against a sandbox whose clock runs ahead of the real one (as the demo's
does): the statement is read as of the sandbox's day, previewed, then recorded once."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from rich.console import Console

from billops.demo_bank import import_the_bank_statement
from tests.support.bank_statements import make_bank_biller
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox


@pytest.fixture(scope="module")
def ahead(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxAdmin]:
    database = tmp_path_factory.mktemp("ahead") / "sandbox.db"
    with running_sandbox(f"sqlite:///{database}", accessTokenTtl=400 * 86400) as admin:
        yield admin


def test_the_demo_step_reads_the_sandboxs_month_and_records_it(
    prefect: None, ahead: SandboxAdmin, ledger_home: Path, tmp_path: Path
) -> None:
    biller = make_bank_biller(ahead, seed=77, invoices=8, requests=2)
    ahead.advance_clock(days=30)
    today = date.fromisoformat(ahead.http.get("/_sandbox/clock").json()["now"][:10])
    assert today > date.today()  # the sandbox is ahead of billops' calendar
    before = biller.paid()
    out = io.StringIO()

    done = import_the_bank_statement(
        ahead.root, biller.biller_id, biller.block, tmp_path, Console(file=out, width=200)
    )

    assert done.outcome == "Completed", done.message
    recorded = sum((r.amount for r in done.recorded if r.sent_now), Decimal("0"))
    assert recorded > 0
    assert sum(biller.paid().values()) - sum(before.values()) == recorded
    assert "dry run:" in out.getvalue() and "approved as 'Demo Operator'" in out.getvalue()

"""The admin exports: ``/_sandbox/exports/payouts.csv`` and ``.../bank_statement.csv``.

The module's sandbox starts on Tuesday 1 December 2026; its biller sends 20 invoices, a few are
paid by card on the hosted page, and the clock moves to 15 January 2027 (payouts arrive).
"""

from __future__ import annotations

import csv
import io
import random
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from sandbox.core.db import make_engine, make_session_factory, session_scope
from sandbox.exports import files as exports
from sandbox.exports.layouts import LAYOUTS
from sandbox.models.payouts import Payout
from tests.sandbox.test_simulation_payouts import GOOD_CARD
from tests.support.billing import new_customer, sent_invoice
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox

START = date(2026, 12, 1)
END = date(2027, 1, 15)
PERIOD = {"from": START.isoformat(), "to": END.isoformat()}
MONEY = re.compile(r"^-?\d+\.\d{2}$")


@dataclass
class World:
    admin: SandboxAdmin
    tokens: BillerTokens
    url: str
    payouts: list[tuple[str, date, Decimal]]


def _pay(admin: SandboxAdmin, invoice: dict[str, Any]) -> None:
    url = invoice["paymentRequests"][0]["paymentLink"]["url"]
    assert admin.http.post(url, data=GOOD_CARD).status_code in (200, 303)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    url = f"sqlite:///{tmp_path_factory.mktemp('exports') / 'sandbox.db'}"
    with running_sandbox(url, clock_start=START, accessTokenTtl=366 * 86400) as admin:
        tokens = admin.connect_biller("Fenwick & Daughters Ltd")
        invoices = []
        for n in range(20):
            customer = new_customer(admin, tokens, name=f"Customer {n:02d} Trading Limited")
            item = {"description": "Work", "quantity": 1, "unitAmount": (4000 + n * 735) / 100}
            invoices.append(sent_invoice(admin, tokens, customer["id"], items=[item]))
        for invoice in invoices[:3]:
            _pay(admin, invoice)
        admin.advance_clock(until="2026-12-04")
        for invoice in invoices[3:6]:
            _pay(admin, invoice)
        admin.advance_clock(until=END.isoformat())
        engine = make_engine(url)
        with session_scope(make_session_factory(engine)) as session:
            rows = session.scalars(select(Payout).where(Payout.biller_id == tokens.biller_id))
            payouts = [(p.reference, p.arrival_date, p.amount) for p in rows]
        engine.dispose()
        yield World(admin, tokens, url, payouts)


def _get(admin: SandboxAdmin, name: str, **params: str) -> Any:
    return admin.http.get(f"/_sandbox/exports/{name}", params=params)


def _rows(world: World, name: str, **params: str) -> list[list[str]]:
    answer = _get(world.admin, name, billerId=world.tokens.biller_id, **PERIOD, **params)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(answer.text)))


def test_payouts_export_has_one_row_per_item_summing_to_the_payout(world: World) -> None:
    header, *rows = _rows(world, "payouts.csv")
    assert header == exports.PAYOUTS_HEADER
    assert len(world.payouts) == 2  # cards paid on 1 and 4 December
    by_payout: dict[str, Decimal] = {}
    for row in rows:
        assert MONEY.match(row[3]) and MONEY.match(row[9])
        assert row[4] == "PAYMENT" and row[5].startswith("INV-") and row[6].startswith("PR-")
        assert row[8].startswith("Customer ")
        by_payout[row[1]] = by_payout.get(row[1], Decimal("0")) + Decimal(row[9])
    assert len(rows) == 6
    assert by_payout == {reference: amount for reference, _day, amount in world.payouts}
    arrivals = sorted({row[2] for row in rows})
    assert arrivals == ["2026-12-03", "2026-12-08"]


def test_every_payout_credit_on_the_statement_matches_a_payout(world: World) -> None:
    header, *rows = _rows(world, "bank_statement.csv", layout="generic")
    assert header == ["Date", "Type", "Counterparty", "Reference", "Amount", "Balance"]
    credits = {
        (row[3], date.fromisoformat(row[0]), Decimal(row[4])) for row in rows if row[2] == "ADFIN"
    }
    assert credits == set(world.payouts)


def test_the_statement_has_transfers_spending_and_a_running_balance(world: World) -> None:
    _header, *rows = _rows(world, "bank_statement.csv", layout="generic")
    kinds = {row[1] for row in rows}
    assert {"FASTER_IN", "BACS_IN", "STANDING_ORDER", "CARD"} <= kinds
    transfers = [row for row in rows if row[1] == "FASTER_IN"]
    assert transfers and all(row[2].startswith("CUSTOMER ") for row in transfers)
    assert any("RENT" in row[3] for row in rows)
    for previous, row in zip(rows, rows[1:], strict=False):
        assert MONEY.match(row[4]) and MONEY.match(row[5])
        assert Decimal(previous[5]) + Decimal(row[4]) == Decimal(row[5])
    assert [row[0] for row in rows] == sorted(row[0] for row in rows)


@pytest.mark.parametrize(
    ("layout", "header"),
    [
        ("barclays", ["Number", "Date", "Account", "Amount", "Subcategory", "Memo"]),
        (
            "lloyds",
            [
                "Transaction Date",
                "Transaction Type",
                "Sort Code",
                "Account Number",
                "Transaction Description",
                "Debit Amount",
                "Credit Amount",
                "Balance",
            ],
        ),
        (
            "natwest",
            ["Date", "Type", "Description", "Value", "Balance", "Account Name", "Account Number"],
        ),
        (
            "starling",
            [
                "Date",
                "Counter Party",
                "Reference",
                "Type",
                "Amount (GBP)",
                "Balance (GBP)",
                "Spending Category",
                "Notes",
            ],
        ),
        ("monzo", LAYOUTS["monzo"].header),
    ],
)
def test_each_bank_layout_has_its_header_and_uk_dates(
    world: World, layout: str, header: list[str]
) -> None:
    first, *rows = _rows(world, "bank_statement.csv", layout=layout)
    assert first == header
    date_column = header.index("Date") if "Date" in header else 0
    assert rows and all(re.match(r"^\d{2}/\d{2}/\d{4}$", row[date_column]) for row in rows)
    assert all(len(row) == len(header) for row in rows)


def test_hsbc_has_no_header_and_a_signed_amount(world: World) -> None:
    rows = _rows(world, "bank_statement.csv", layout="hsbc")
    assert re.match(r"^\d{2}/\d{2}/\d{4}$", rows[0][0])
    assert all(len(row) == 3 and MONEY.match(row[2]) for row in rows)
    assert any(row[2].startswith("-") for row in rows)


def test_lloyds_splits_debits_and_credits(world: World) -> None:
    _header, *rows = _rows(world, "bank_statement.csv", layout="lloyds")
    for row in rows:
        assert (row[5] == "") != (row[6] == "")
        assert row[2].startswith("'") and row[2][1:3].isdigit()
    payouts = [row for row in rows if row[1] == "BGC"]
    assert sorted(Decimal(row[6]) for row in payouts) == sorted(a for _r, _d, a in world.payouts)


def test_the_same_data_gives_byte_identical_files(world: World, tmp_path: Path) -> None:
    """A copy of the database served by another sandbox started later gives the same bytes."""
    params = {"billerId": world.tokens.biller_id, **PERIOD}
    names = [("payouts.csv", {})] + [("bank_statement.csv", {"layout": n}) for n in LAYOUTS]
    first = [_get(world.admin, name, **params, **extra).content for name, extra in names]
    again = [_get(world.admin, name, **params, **extra).content for name, extra in names]
    assert first == again
    copy = tmp_path / "copy.db"
    with (
        sqlite3.connect(world.url.removeprefix("sqlite:///")) as source,
        sqlite3.connect(copy) as target,
    ):
        source.backup(target)
    with running_sandbox(f"sqlite:///{copy}") as other:
        served = [_get(other, name, **params, **extra).content for name, extra in names]
    assert served == first


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"layout": "santander"}, "layout"),
        ({"from": "2026-13-01"}, "from"),
        ({"from": "yesterday"}, "from"),
        ({"to": "15/01/2027"}, "to"),
        ({"from": "2027-01-10", "to": "2027-01-01"}, "from"),
        ({"billerId": ""}, "billerId"),
    ],
)
def test_bad_parameters_answer_400_naming_them(
    world: World, params: dict[str, str], field: str
) -> None:
    query = {"billerId": world.tokens.biller_id, **params}
    answer = _get(world.admin, "bank_statement.csv", **query)
    assert answer.status_code == 400, answer.text
    [error] = answer.json()["errors"]
    assert error["type"] == "BAD_REQUEST" and error["field"] == field
    if field == "layout":
        assert all(name in error["detail"] for name in LAYOUTS)


def test_payouts_export_checks_its_parameters_too(world: World) -> None:
    missing = _get(world.admin, "payouts.csv")
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "billerId"
    bad = _get(world.admin, "payouts.csv", billerId=world.tokens.biller_id, to="2027-02-30")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "to"
    unknown = _get(world.admin, "payouts.csv", billerId="no-such-biller")
    assert unknown.status_code == 404


# --- how customers quote numbers --------------------------------------------------------------

DOC = exports.Document("INV-1234", "Acme Widgets Limited", Decimal("150.00"), START)
PARTNER = exports.Document("INV-1240", "Acme Widgets Limited", Decimal("20.50"), START)


@pytest.mark.parametrize(
    ("style", "reference", "amount"),
    [
        ("exact", "INV-1234", "150.00"),
        ("lower", "inv-1234", "150.00"),
        ("no_hyphen", "INV1234", "150.00"),
        ("two_in_one", "INV-1234 INV-1240", "170.50"),
        ("no_reference", "", "150.00"),
        ("cut_at_18", "ACME WIDGETS LIMIT", "150.00"),
    ],
)
def test_references_as_people_type_them(style: str, reference: str, amount: str) -> None:
    quoted = exports._quote(random.Random(1), DOC, style, PARTNER)
    assert quoted == (reference, Decimal(amount))


def test_typos_partial_and_overpayments_stay_close_to_the_document() -> None:
    for seed in range(20):
        typo, _ = exports._quote(random.Random(seed), DOC, "typo", None)
        assert typo != "INV-1234" and sorted(typo) == sorted("INV-1234")
        _ref, partial = exports._quote(random.Random(seed), DOC, "partial", None)
        assert Decimal("0") < partial < DOC.amount and partial == partial.quantize(Decimal("0.01"))
        _ref, over = exports._quote(random.Random(seed), DOC, "overpaid", None)
        assert over > DOC.amount
        spaced, _ = exports._quote(random.Random(seed), DOC, "spaced", None)
        assert spaced in ("inv 1234", " INV-1234 ")

"""Suggestions for customer payments without a usable reference: names as banks write them,
nearest amounts, a confidence; never applied (no allocation), and bounded per line."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pyarrow as pa

from tasks.bank_payments._names import name_keys, name_matches
from tasks.bank_payments._owed import OpenItem, items_frame
from tasks.bank_payments._plan import plan_statement
from tasks.bank_payments._profiles import find_profile
from tasks.bank_payments._statement import SCHEMA, Statement


def _statement(rows: list[tuple[str, str, str]]) -> Statement:
    n = len(rows)
    table = pa.table(
        {
            "line": list(range(2, n + 2)),
            "account": ["a"] * n,
            "date": [date(2026, 11, 10)] * n,
            "amount": [int(Decimal(r[0]) * 100) for r in rows],
            "payer": [r[1] for r in rows],
            "reference": [r[2] for r in rows],
            "text": [""] * n,
            "type": [""] * n,
            "txn_id": [""] * n,
            "balance": [None] * n,
        },
        schema=SCHEMA,
    )
    return Statement("s.csv", "0" * 64, find_profile("generic"), "test", "utf-8", table)


def _item(number: str, customer: str, due: str) -> OpenItem:
    return OpenItem(
        "invoice", f"id-{number}", number, "", customer, int(Decimal(due) * 100), None, "UNPAID"
    )


def test_names_are_compared_as_banks_write_them() -> None:
    keys = name_keys(pa.array(["Acme Services Limited", "ACME SERVICES LTD.", "The Oak & Ash Co"]))
    assert keys == ["ACME", "ACME", "OAK ASH"]
    customers = pa.array(["Northwind Trading Partners Ltd", "Harbour Dental Practice", "Acme Ltd"])
    payers = pa.array(["NORTHWIND TRADING ", "HARBOR DENTAL PRACTICE", "ACME LIMITED", "ZED"])
    found = name_matches(payers, customers)
    best = found.sort_values("score", ascending=False).groupby("payer").head(1)
    by_payer = {int(r.payer): (int(r.customer), float(r.score)) for r in best.itertuples()}
    assert by_payer[0] == (0, 95.0)  # cut short by the bank: the start of the name
    assert by_payer[1][0] == 1 and 70 <= by_payer[1][1] < 100  # a spelling of its own
    assert by_payer[2] == (2, 100.0)  # LIMITED and Ltd are the same
    assert 3 not in by_payer


def test_nearest_amounts_of_the_payers_customer_are_suggested_and_never_applied() -> None:
    items = items_frame(
        [
            *(
                _item(f"INV-{n}", "Harbour Dental Practice", f"{100 + 10 * n}.00")
                for n in range(30)
            ),
            _item("INV-99", "Someone Else Ltd", "250.00"),
        ]
    )
    plan = plan_statement(
        _statement(
            [
                ("250.00", "HARBOUR DENTAL PRA", "JUNE"),  # no number: by name and amount
                ("250.00", "UNKNOWN PAYER", ""),  # only the amount: too weak to suggest
            ]
        ),
        items,
    )
    first, second = plan.lines
    assert first.outcome == "suggested" and not first.allocations
    assert [n for n, _c in first.suggestions] == ["INV-15", "INV-16", "INV-14"]
    assert abs(first.suggestions[0][1] - 0.825) < 0.01  # name cut short (95), exact amount
    assert second.outcome == "unmatched" and second.suggestions == []


def test_a_mistyped_number_of_the_same_customer_is_suggested_not_paid() -> None:
    items = items_frame(
        [_item("INV-12", "Acme Ltd", "120.00"), _item("INV-21", "Acme Ltd", "210.00")]
    )
    plan = plan_statement(_statement([("120.00", "ACME LTD", "INV-21")]), items)
    (line,) = plan.lines
    assert line.outcome == "suggested" and not line.allocations
    assert "mistyped" in line.note
    assert line.suggestions[0][0] == "INV-12"


def test_a_mistyped_number_naming_another_customers_invoice_pays_neither() -> None:
    # INV-10 typed as INV-01 by a customer sharing a word with the owner of INV-1.
    items = items_frame(
        [
            _item("INV-1", "Kingsmead Plumbing 0 Ltd", "500.00"),
            _item("INV-10", "Kingsmead Dental 1 Ltd", "144.29"),
        ]
    )
    plan = plan_statement(_statement([("144.29", "KINGSMEAD DENTAL 1", "INV-01")]), items)
    (line,) = plan.lines
    assert line.outcome == "suggested" and not line.allocations
    assert line.suggestions[0][0] == "INV-10"


def test_open_items_are_ordered_by_customer_then_due_then_number() -> None:
    from tasks.bank_payments._suggest import _Items

    rows = [
        ("Zed Ltd", "INV-9", "10.00"),
        ("Acme Ltd", "INV-3", "5.00"),
        ("Zed Ltd", "INV-1", "7.00"),
    ]
    rows += [
        ("Acme Ltd", "INV-2", "5.00"),
        ("Acme Ltd", "INV-10", "5.00"),
        ("Bee", "INV-4", "1.00"),
    ]
    for ties in (False, True):
        chosen = rows if ties else [rows[0], rows[1], rows[2], rows[5]]
        items = items_frame([_item(number, customer, due) for customer, number, due in chosen])
        expected = items.sort_values(["customer", "due", "number"], kind="stable")
        owed = _Items.of(items)
        assert owed.frame["number"].tolist() == expected["number"].tolist()
        assert owed.customers.to_pylist() == sorted({c for c, _n, _d in chosen})
        assert owed.due.tolist() == expected["due"].tolist()

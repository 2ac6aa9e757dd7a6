"""Derived externalIds are pinned byte for byte: a re-dropped file must name the payment requests
an earlier import created, so no speed-up of the derivation may change a single id.

The ids below were produced by the one-row derivation (``derive_external_id``) before the
column-wise path was optimised; both paths must keep giving them, through Arrow's CSV reader
(a plain file) and through the csv module (quotes, backslashes, a line break in a cell).
"""

from __future__ import annotations

import hashlib
import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from tasks.payment_requests import CustomerDirectory, derive_external_id, parse_payment_request_file
from tests.support.finance_files import BILLER, TODAY, write_csv

PAY_BY = "30/12/2026"
PLAIN = [
    (["Acme Ltd", "10", "Fees", "R1", PAY_BY, ""], "bo-28b60db0eb35e8bff64ae8e5"),
    (["Beta & Sons", "£1234.50", "Monthly fees", "", PAY_BY, "20"], "bo-0249e0f1268df950b4e3c263"),
    (["Café Crème", "0.07", "Café £ crème", "INV-9", "", ""], "bo-cf1bd1c470114c245064d144"),
    (["XERO-C-17", "12.3", "Fees", "", "2026-12-31", ""], "bo-249efc09da7a40cbcc42d65b"),
]
TRICKY = [
    (["Acme Ltd", "10", 'Say "hi"', "R1", PAY_BY, ""], "bo-70f7c2384b67b84a48cb85cc"),
    (["Acme Ltd", "10", "Back\\slash", "R\\2", PAY_BY, ""], "bo-4d4ef3fd7846ee3b19a0ad88"),
    (["Acme Ltd", "10", "two\nlines", "", PAY_BY, ""], "bo-bcdaae10b6f327a44f142ccd"),
    (["Café Crème", "99.99", "emoji 🎉 and ünïcode", 'Q"3', "", ""], "bo-897231cc8ae22d68b08195c2"),
]


@pytest.mark.parametrize("rows", [PLAIN, TRICKY], ids=["plain-arrow-path", "quoted-csv-path"])
def test_derived_ids_are_the_pinned_bytes(
    tmp_path: Path, customers: CustomerDirectory, rows: list[tuple[list[str], str]]
) -> None:
    path = write_csv(tmp_path / "f.csv", [cells for cells, _ in rows])
    assert ('"' in path.read_text(encoding="utf-8")) == (rows is TRICKY)  # which reader reads it

    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)

    assert not parsed.problems
    assert [row.external_id for row in parsed.rows] == [expected for _, expected in rows]
    assert all(row.external_id_derived for row in parsed.rows)


def test_a_biller_id_json_escapes_derives_as_the_one_row_derivation(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    biller = 'odd "biller" \\ id'
    path = write_csv(tmp_path / "f.csv", [cells for cells, _ in PLAIN])

    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=biller)

    assert [row.external_id for row in parsed.rows] == [
        derive_external_id(
            biller=biller,
            customer_id=row.customer_id or "",
            reference=row.reference,
            amount=row.amount,
            pay_by_date=row.pay_by_date,
            description=row.description,
        )
        for row in parsed.rows
    ]


def test_rows_with_their_own_external_id_keep_it_beside_derived_ones(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    header = ["Customer", "Amount", "Description", "Reference", "Pay by", "External ID"]
    rows = [[*cells[:5], ""] for cells, _ in PLAIN]
    rows[1][5] = "own-1"
    path = write_csv(tmp_path / "f.csv", rows, header=header)

    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)

    expected = [wanted for _, wanted in PLAIN]
    expected[1] = "own-1"
    assert [row.external_id for row in parsed.rows] == expected
    assert [row.external_id_derived for row in parsed.rows] == [True, False, True, True]


def test_the_one_row_derivation_is_the_documented_formula() -> None:
    fields = [BILLER, "cus_1", "R1", "10.00", "2026-12-30", "Fees"]
    payload = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    by_hand = "bo-" + hashlib.sha256(payload).hexdigest()[:24]

    derived = derive_external_id(
        biller=BILLER,
        customer_id="cus_1",
        reference="R1",
        amount=Decimal("10"),
        pay_by_date=date(2026, 12, 30),
        description="Fees",
    )
    next_round = derive_external_id(
        biller=BILLER,
        customer_id="cus_1",
        reference="R1",
        amount=Decimal("10"),
        pay_by_date=date(2026, 12, 30),
        description="Fees",
        round_=1,
    )

    assert derived == by_hand == "bo-28b60db0eb35e8bff64ae8e5"
    assert next_round == "bo-08804b5b22d7327ce6f62515"


def test_a_given_external_id_equal_to_another_rows_derived_one_fails_both(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    """Every reference differs, so derived ids cannot repeat among themselves (the check skips
    counting them), but a row's own External ID can still be another row's derived id."""
    header = ["Customer", "Amount", "Description", "Reference", "Pay by", "External ID"]
    rows = [[*cells[:3], f"R{n}", cells[4], ""] for n, (cells, _) in enumerate(PLAIN)]
    path = write_csv(tmp_path / "f.csv", rows, header=header)
    first = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)
    assert not first.problems
    rows[1][5] = first.rows[0].external_id  # the first row's derived id, given to the second

    path = write_csv(tmp_path / "f.csv", rows, header=header)
    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)

    assert [(p.line, p.column) for p in parsed.problems] == [
        (2, "externalId (derived)"),
        (3, "External ID"),
    ]
    assert [row.line for row in parsed.rows] == [4, 5]


@pytest.mark.parametrize("kind", ["string", "large_string", "string_view"])
def test_leading_digits_are_read_from_any_string_layout_polars_may_hand_over(kind: str) -> None:
    import pyarrow as pa

    from tasks.payment_requests.derive import _leading_digits

    digests = [hashlib.sha256(text).hexdigest() for text in (b"a", b"b", b"c")]
    hexes = pa.array(digests, getattr(pa, kind)()).slice(1)

    found = _leading_digits(hexes)

    assert [bytes(row).decode() for row in found] == [d[:24] for d in digests[1:]]


def test_a_digest_of_another_length_is_refused_not_misread() -> None:
    import pyarrow as pa

    from tasks.payment_requests.derive import _leading_digits

    with pytest.raises(ValueError, match="64 hex digits"):
        _leading_digits(pa.array(["ab" * 31 + "a", "ab" * 32 + "b"], pa.large_string()))

"""The service's bulk-import file and its chunks: contract layout, deterministic bytes, limits."""

from __future__ import annotations

import csv
import io
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from sandbox.bulk_import.csv_rows import check_row, read_rows
from tasks.payment_requests import (
    CustomerDirectory,
    CustomerRef,
    PaymentRequestRow,
    default_column_mapping,
    make_chunks,
    parse_payment_request_file,
    write_service_csv,
)
from tests.support.finance_files import BILLER, TODAY, write_csv


def pr_row(line: int, **changes: object) -> PaymentRequestRow:
    fields: dict[str, object] = {
        "line": line,
        "external_id": f"EXT-{line}",
        "customer_ref": CustomerRef("name", "Acme Ltd"),
        "customer_id": "cus_1",
        "amount": Decimal("120.50"),
        "description": "June fees, part 1",
        "reference": f"R{line}",
        "pay_by_date": date(2026, 12, 30),
        "tax_rate": Decimal("20"),
        "external_id_derived": False,
    }
    fields.update(changes)
    return PaymentRequestRow(**fields)  # type: ignore[arg-type]


def test_the_file_is_the_contracts_layout_byte_for_byte() -> None:
    rows = [
        pr_row(2),
        pr_row(
            3,
            customer_id=None,
            customer_ref=CustomerRef("external_id", "XERO-C-18"),
            amount=Decimal("99"),
            tax_rate=Decimal("17.50"),
            reference=None,
            pay_by_date=None,
        ),
    ]

    content = write_service_csv(rows)

    assert content == (
        b"externalId,customerId,customerExternalId,description,totalAmount,currencyCode,taxRate,"
        b"reference,payByDate\r\n"
        b'EXT-2,cus_1,,"June fees, part 1",120.50,GBP,20,R2,2026-12-30\r\n'
        b'EXT-3,,XERO-C-18,"June fees, part 1",99.00,GBP,17.5,,\r\n'
    )


def test_the_sandbox_reads_every_row_of_the_file_as_valid() -> None:
    rows = [pr_row(n, description=f'Quote "{n}", £ and\nnewline') for n in range(2, 12)]

    parsed = read_rows(write_service_csv(rows))

    checked = [check_row(row) for row in parsed]
    assert [errors for _, errors in checked] == [[]] * 10
    assert [data.total_amount for data, _ in checked if data] == [Decimal("120.50")] * 10
    assert checked[0][0] is not None and checked[0][0].description == 'Quote "2", £ and\nnewline'


def test_a_custom_column_mapping_renames_and_drops_columns() -> None:
    mapping = {
        "external_id": "Row Key",
        "customer_id": "Customer",
        "description": "Desc",
        "amount": "Amount",
        "pay_by_date": "Due",
    }

    content = write_service_csv([pr_row(2)], mapping=mapping).decode()

    assert content.splitlines() == [
        "Row Key,Customer,Desc,Amount,Due",
        'EXT-2,cus_1,"June fees, part 1",120.50,2026-12-30',
    ]
    assert default_column_mapping()["amount"] == "totalAmount"


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        (
            {"external_id": "a", "customer_id": "b", "description": "c"},
            "no service column for amount",
        ),
        (
            {"external_id": "a", "description": "c", "amount": "d"},
            "customer_id or customer_external_id",
        ),
        ({"external_id": "a", "customer_id": "b", "description": "c", "amount": "c"}, "used twice"),
        ({**default_column_mapping(), "colour": "x"}, "unknown field"),
    ],
)
def test_a_bad_mapping_is_refused(mapping: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        write_service_csv([pr_row(2)], mapping=mapping)


def test_a_customer_named_only_by_name_cannot_go_into_a_layout_without_ids() -> None:
    mapping = {k: v for k, v in default_column_mapping().items() if k != "customer_id"}
    with pytest.raises(ValueError, match="line 2: customer 'Acme Ltd' cannot be named"):
        write_service_csv([pr_row(2)], mapping=mapping)


def test_chunks_are_deterministic_ordered_and_digest_their_content() -> None:
    rows = [pr_row(n) for n in range(2, 1207)]

    chunks = make_chunks(rows)
    again = make_chunks(list(rows))

    assert [len(c.rows) for c in chunks] == [500, 500, 205]
    assert [c.index for c in chunks] == [0, 1, 2]
    assert [c.sha256 for c in chunks] == [c.sha256 for c in again]
    assert len({c.sha256 for c in chunks}) == 3
    assert chunks[1].rows[0].line == 502
    assert chunks[2].content == write_service_csv(rows[1000:])
    assert make_chunks([]) == []


@pytest.mark.parametrize("size", [0, -1, 10_001])
def test_a_chunk_size_outside_the_service_limit_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match="chunk size must be from 1 to 10,000"):
        make_chunks([pr_row(2)], size=size)


def test_a_chunk_over_five_mebibytes_is_refused() -> None:
    rows = [pr_row(n, description="x" * 4000) for n in range(2, 1500)]
    with pytest.raises(ValueError, match="chunk 0 .* over the service's 5 MiB limit"):
        make_chunks(rows, size=1500)


def test_amounts_tie_out_from_the_input_file_to_the_chunks(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    amounts = ["£1,234.50", "0.01", "99.99", "1000", "£12.3", "7.07"] * 50
    rows = [["Acme Ltd", a, f"row {n}", f"R{n}", "", ""] for n, a in enumerate(amounts)]
    path = write_csv(tmp_path / "money.csv", rows)

    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)
    chunks = make_chunks(parsed.rows, size=7)

    sent = [
        Decimal(record["totalAmount"])
        for chunk in chunks
        for record in csv.DictReader(io.StringIO(chunk.content.decode("utf-8")))
    ]
    assert len(sent) == 300
    assert sum(sent) == sum(row.amount for row in parsed.rows) == Decimal("117693.50")

"""Finance files for tests: real files written the way people's programs write them.

Files are written the way the programs finance uses write them: ``csv`` with a chosen encoding
and delimiter (Excel's "CSV UTF-8" adds a BOM, its Windows "CSV" is Windows-1252), XLSX through
openpyxl. ``TODAY`` pins "today in London" so pay-by checks do not depend on the calendar.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest
from openpyxl import Workbook  # type: ignore[import-untyped]

from tasks.payment_requests import CustomerDirectory

TODAY = date(2026, 11, 22)
BILLER = "biller-1"
HEADER = ["Customer", "Amount", "Description", "Reference", "Pay by", "Tax rate"]
# (id, externalId, name) as the service lists them.
CUSTOMERS = [
    ("cus_1", "XERO-C-17", "Acme Ltd"),
    ("cus_2", "XERO-C-18", "Beta & Sons"),
    ("cus_3", None, "Café Crème"),
    ("cus_4", "DUP-NAME-1", "Twin Trading"),
    ("cus_5", "DUP-NAME-2", "Twin Trading"),
]


def write_csv(
    path: Path,
    rows: Sequence[Sequence[str]],
    *,
    header: Sequence[str] | None = HEADER,
    encoding: str = "utf-8",
    delimiter: str = ",",
) -> Path:
    """A CSV file: ``header`` (unless None) then ``rows``, in ``encoding``."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n")
    if header is not None:
        writer.writerow(header)
    writer.writerows(rows)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def write_xlsx(
    path: Path,
    rows: Sequence[Sequence[object]],
    *,
    header: Sequence[str] = HEADER,
    sheet: str = "Payment requests",
    before: Sequence[str] = (),
    formats: dict[int, str] | None = None,
) -> Path:
    """A workbook: optional sheets ``before``, then ``sheet`` with the header and rows.

    ``formats`` maps a 0-based column to an Excel number format (``0%``, ``dd/mm/yyyy``).
    """
    workbook = Workbook()
    first = workbook.active
    assert first is not None
    first.title = before[0] if before else sheet
    for name in before[1:]:
        workbook.create_sheet(name)
    target = workbook.create_sheet(sheet) if before else first
    target.append(list(header))
    for row in rows:
        target.append(list(row))
    for column, number_format in (formats or {}).items():
        for cells in target.iter_rows(min_row=2, min_col=column + 1, max_col=column + 1):
            for cell in cells:
                cell.number_format = number_format
    workbook.save(path)
    return path


@pytest.fixture
def customers() -> CustomerDirectory:
    """The biller's customers, one name shared by two of them."""
    return CustomerDirectory.from_records(CUSTOMERS)

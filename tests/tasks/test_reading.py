"""Reading payment-request files as finance keeps them, and the clear errors for unusable ones."""

from __future__ import annotations

import codecs
from datetime import date, datetime
from pathlib import Path

import pytest

from tasks.payment_requests import InputFileError, InputRow, read_payment_request_file
from tests.support.finance_files import HEADER, write_csv, write_xlsx

ROW = ["Acme Ltd", "£1,234.50", "June fees", "JUNE-17", "30/12/2026", "20"]


def read_rows(path: Path, sheet: str | None = None) -> list[InputRow]:
    """The data rows of a payment-request file."""
    return read_payment_request_file(path, sheet=sheet).rows


def test_a_utf8_csv_reads_into_canonical_columns_with_lines_people_see(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "june.csv", [ROW, ["Beta & Sons", "99", "Fees", "R2", "", ""]])

    rows = read_rows(path)

    assert [row.line for row in rows] == [2, 3]
    assert rows[0].values == {
        "customer": "Acme Ltd",
        "amount": "£1,234.50",
        "description": "June fees",
        "reference": "JUNE-17",
        "pay_by_date": "30/12/2026",
        "tax_rate": "20",
    }
    assert rows[0].column_name("pay_by_date") == "Pay by"
    assert rows[0].header == tuple(HEADER)


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig"), ("cp1252", "cp1252"), ("utf-16", "utf-16")],
)
def test_encodings_excel_writes_all_read_the_pound_sign(
    tmp_path: Path, encoding: str, expected: str
) -> None:
    path = write_csv(
        tmp_path / "f.csv", [["Café Crème", "£12.00", "Crème", "R1", "", ""]], encoding=encoding
    )

    loaded = read_payment_request_file(path)

    assert loaded.encoding == expected
    assert loaded.rows[0].values["customer"] == "Café Crème"
    assert loaded.rows[0].values["amount"] == "£12.00"
    assert loaded.rows[0].header[0] == "Customer"  # no BOM left on the first header


def test_the_bom_file_is_really_different_bytes(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "bom.csv", [ROW], encoding="utf-8-sig")
    assert path.read_bytes().startswith(codecs.BOM_UTF8)


@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_semicolon_and_tab_files_are_sniffed(tmp_path: Path, delimiter: str) -> None:
    path = write_csv(tmp_path / "f.csv", [ROW], delimiter=delimiter)

    rows = read_rows(path)

    assert rows[0].values["amount"] == "£1,234.50"
    assert rows[0].values["tax_rate"] == "20"


def test_excels_sep_line_decides_the_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_text(
        "sep=;\r\n" + ";".join(HEADER) + "\r\n" + ";".join(ROW) + "\r\n", encoding="utf-8"
    )

    rows = read_rows(path)

    assert rows[0].values["amount"] == "£1,234.50" and rows[0].line == 3


def test_title_rows_and_blank_lines_are_skipped_but_line_numbers_are_kept(tmp_path: Path) -> None:
    text = "Payment requests, June\r\n\r\n" + ";".join(HEADER) + "\r\n"
    text += ";".join(ROW) + "\r\n\r\n" + ";".join(["Beta & Sons", "5", "x", "R2", "", ""]) + "\r\n"
    path = tmp_path / "f.csv"
    path.write_text(text, encoding="utf-8", newline="")

    rows = read_rows(path)

    assert [row.line for row in rows] == [4, 6]


def test_a_quoted_cell_over_two_lines_keeps_the_line_its_record_starts_on(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", [["Acme Ltd", "1", "two\nlines", "R1", "", ""], ROW])

    rows = read_rows(path)

    assert [row.line for row in rows] == [2, 4]
    assert rows[0].values["description"] == "two\nlines"


@pytest.mark.parametrize(
    ("header", "canonical"),
    [
        ("Customer ID", "customer_id"),
        ("customerExternalId", "customer_external_id"),
        ("Account code", "customer_external_id"),
        ("Client name", "customer_name"),
        ("Amount (£)", "amount"),
        ("Total", "amount"),
        ("totalAmount", "amount"),
        ("Due date", "pay_by_date"),
        ("PAY_BY", "pay_by_date"),
        ("VAT %", "tax_rate"),
        ("External ID", "external_id"),
        ("Invoice number", "reference"),
    ],
)
def test_header_aliases_finance_people_use(tmp_path: Path, header: str, canonical: str) -> None:
    if canonical.startswith("customer"):
        names = [header, "Amount", "Description"]
    elif canonical == "amount":
        names = ["Customer", header, "Description"]
    else:
        names = ["Customer", "Amount", "Description", header]
    path = write_csv(tmp_path / "f.csv", [["v"] * len(names)], header=names)

    rows = read_rows(path)

    assert canonical in rows[0].values
    assert rows[0].column_name(canonical) == header


def test_unknown_columns_are_ignored_but_kept_for_the_reports(tmp_path: Path) -> None:
    header = ["Notes", *HEADER, "Cost centre"]
    path = write_csv(tmp_path / "f.csv", [["call first", *ROW, "CC-9"]], header=header)

    row = read_rows(path)[0]

    assert "Notes" not in row.values and "notes" not in row.values
    assert row.cells == ("call first", *ROW, "CC-9")
    assert row.header == tuple(header)


def test_xlsx_first_sheet_with_native_dates_numbers_and_percent(tmp_path: Path) -> None:
    path = write_xlsx(
        tmp_path / "june.xlsx",
        [
            ["Acme Ltd", 1234.5, "June fees", "JUNE-17", datetime(2026, 12, 30), 0.2],
            ["Beta & Sons", 36.00000000000001, "Formula", 1001, date(2027, 1, 4), 0.05],
            ["Beta & Sons", 1.234, "Three places", "R3", None, None],
        ],
        formats={5: "0%"},
    )

    loaded = read_payment_request_file(path)

    assert loaded.encoding == "xlsx" and loaded.sheet == "Payment requests"
    values = [row.values for row in loaded.rows]
    assert [v["amount"] for v in values] == ["1234.5", "36", "1.234"]
    assert [v["pay_by_date"] for v in values] == ["2026-12-30", "2027-01-04", ""]
    assert [v["tax_rate"] for v in values] == ["20%", "5%", ""]
    assert values[1]["reference"] == "1001"
    assert [row.line for row in loaded.rows] == [2, 3, 4]


def test_xlsx_named_sheet(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "book.xlsx", [ROW], sheet="June", before=["Notes", "May"])

    assert read_rows(path, sheet="June")[0].values["reference"] == "JUNE-17"
    with pytest.raises(InputFileError, match=r"book\.xlsx, sheet 'Notes': is empty"):
        read_rows(path)  # the first sheet is the one read by default


# --- files that cannot be used as a whole -------------------------------------------------------


def test_unreadable_encoding_names_the_file_and_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "broken.csv"
    path.write_bytes(b"Customer,Amount,Description\r\nAcme \x81\x9d Ltd,1,x\r\n")

    with pytest.raises(InputFileError) as error:
        read_rows(path)

    message = str(error.value)
    assert str(path) in message and "unreadable encoding" in message and "0x81" in message


def test_a_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "photo.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(InputFileError, match="binary"):
        read_rows(path)


@pytest.mark.parametrize("content", [b"", b"\r\n\r\n  \r\n", b",,,\r\n"])
def test_an_empty_file_says_so(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(content)
    with pytest.raises(InputFileError, match=r"empty\.csv: is empty"):
        read_rows(path)


def test_a_header_without_data_rows_says_so(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "only-header.csv", [])
    with pytest.raises(InputFileError, match=r"header row \(line 1\) but no data rows"):
        read_rows(path)


def test_a_file_without_a_header_row_says_what_it_found(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "raw.csv", [ROW, ROW], header=None)

    with pytest.raises(InputFileError) as error:
        read_rows(path)

    message = str(error.value)
    assert "no header row" in message and "'Acme Ltd'" in message and "'Amount'" in message


def test_a_missing_required_column_is_named_with_the_headers_found(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "f.csv",
        [["Acme Ltd", "June", "R1"]],
        header=["Customer", "Description", "Reference"],
    )

    with pytest.raises(InputFileError) as error:
        read_rows(path)

    message = str(error.value)
    assert "f.csv, header row (line 1)" in message
    assert "required column missing: amount" in message
    assert "'Customer', 'Description', 'Reference'" in message


def test_a_missing_customer_column_is_named(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", [["1", "June"]], header=["Amount", "Description"])
    with pytest.raises(InputFileError, match="required column missing: customer"):
        read_rows(path)


def test_two_columns_meaning_the_same_are_refused(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "f.csv",
        [["Acme Ltd", "1", "2", "x"]],
        header=["Customer", "Amount", "Total", "Description"],
    )
    with pytest.raises(InputFileError, match="columns 'Amount' and 'Total' both mean amount"):
        read_rows(path)


def test_xlsx_without_the_sheet_lists_the_sheets_it_has(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "book.xlsx", [ROW], sheet="June")

    with pytest.raises(InputFileError) as error:
        read_rows(path, sheet="July")

    message = str(error.value)
    assert "book.xlsx" in message and "no sheet 'July'" in message and "'June'" in message


def test_a_sheet_for_a_csv_file_is_refused(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", [ROW])
    with pytest.raises(InputFileError, match="CSV file, which has no sheets"):
        read_rows(path, sheet="June")


def test_a_corrupt_xlsx_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.xlsx"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputFileError, match=r"bad\.xlsx: is not a readable \.xlsx workbook"):
        read_rows(path)


def test_an_old_xls_workbook_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "old.xls"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 32)
    with pytest.raises(InputFileError, match="save it as .xlsx or as CSV"):
        read_rows(path)


def test_a_workbook_saved_under_a_csv_name_is_read_as_a_workbook(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "renamed.xlsx", [ROW]).rename(tmp_path / "renamed.csv")
    assert read_payment_request_file(path).encoding == "xlsx"


def test_broken_csv_quoting_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "quotes.csv"
    path.write_text(",".join(HEADER) + '\r\nAcme Ltd,1,"June" fees,R1,,\r\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"quotes\.csv: line 2: not valid CSV"):
        read_rows(path)


def test_a_missing_file_is_an_input_file_error(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"nope\.csv: cannot be read"):
        read_rows(tmp_path / "nope.csv")

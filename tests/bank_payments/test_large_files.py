"""Statements large enough to be read without the CSV reader's per-cell UTF-8 check
(``_cells.valid_utf8``, past the head the reader decodes): they read exactly as their bytes do,
and a byte that is not UTF-8 past the start of the file still has the file decoded again (only
when a column that is read holds it)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tasks.bank_payments import StatementRefused, read_statement, read_statement_bytes
from tasks.bank_payments._text import HEAD_BYTES

TODAY = date(2026, 11, 24)
LARGE = 1 << 20  # bytes: well past the head (HEAD_BYTES) that is decoded as text
STARLING = "Date,Counter Party,Reference,Type,Amount (GBP),Balance (GBP),Spending Category,Notes\n"
LINE = "02/11/2026,Acme Services Ltd,INV-{n:04d},FASTER PAYMENT,12.50,{b}.00,INCOME,\n"


def _body(lines: int) -> bytes:
    text = "".join(LINE.format(n=n, b=n) for n in range(lines))
    return text.encode("utf-8")


def _big(last: bytes) -> bytes:
    """A Starling file of over a megabyte whose last line is ``last``."""
    data = STARLING.encode("utf-8") + _body(LARGE // 50) + last
    assert len(data) > max(LARGE, HEAD_BYTES)
    return data


def test_a_large_file_reads_as_its_bytes_do(tmp_path: Path) -> None:
    data = _big("03/11/2026,Café Ünïcode Ltd,INV-9,FASTER PAYMENT,1.00,2.00,,\n".encode())
    path = tmp_path / "large.csv"
    path.write_bytes(data)
    from_file = read_statement(path, today=TODAY)
    from_bytes = read_statement_bytes(data, where=str(path), today=TODAY)
    assert from_file.encoding == from_bytes.encoding == "utf-8"
    assert from_file.sha256 == from_bytes.sha256
    assert from_file.lines.equals(from_bytes.lines)
    assert from_file.lines.column("payer")[-1].as_py() == "Café Ünïcode Ltd"


def test_a_byte_not_utf8_late_in_a_read_column_recodes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "late.csv"
    path.write_bytes(
        _big("03/11/2026,Café Acme,INV-9,FASTER PAYMENT,1.00,2.00,,\n".encode("cp1252"))
    )
    statement = read_statement(path, today=TODAY)
    # decoded by the shared reader after Arrow's check found the byte (the é of Windows-1252)
    assert statement.lines.column("payer")[-1].as_py() == "Café Acme"
    assert statement.count == LARGE // 50 + 1
    assert statement.encoding == "cp1252"  # what it was read in, not what its start suggested


def test_a_byte_not_utf8_only_in_a_column_not_read_leaves_the_file_utf8(tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    path.write_bytes(
        _big("03/11/2026,Acme,INV-9,FASTER PAYMENT,1.00,2.00,,café\n".encode("cp1252"))
    )
    statement = read_statement(path, today=TODAY)
    assert statement.encoding == "utf-8"
    assert statement.lines.column("payer")[-1].as_py() == "Acme"
    assert statement.count == LARGE // 50 + 1


def test_a_large_file_with_windows_line_endings_reads_as_its_bytes_do(tmp_path: Path) -> None:
    data = _big(b"03/11/2026,Acme,INV-9,FASTER PAYMENT,1.00,2.00,,\n").replace(b"\n", b"\r\n")
    path = tmp_path / "crlf.csv"
    path.write_bytes(data)
    from_file = read_statement(path, today=TODAY)
    assert from_file.lines.equals(read_statement_bytes(data, where=str(path), today=TODAY).lines)
    assert from_file.count == LARGE // 50 + 1


def test_a_nul_byte_late_in_a_large_file_is_named_by_line(tmp_path: Path) -> None:
    path = tmp_path / "nul.csv"
    path.write_bytes(_big(b"03/11/2026,Ac\x00me,INV-9,FASTER PAYMENT,1.00,2.00,,\n"))
    with pytest.raises(StatementRefused) as caught:
        read_statement(path, today=TODAY)
    assert caught.value.line == LARGE // 50 + 2
    assert "NUL" in caught.value.reason

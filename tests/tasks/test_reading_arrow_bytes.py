"""Arrow reads a UTF-8 file's own bytes (past a byte-order mark, after title rows and the header),
and other encodings' text re-encoded: either way the rows, their lines and the encoding are what
the csv module reads, and Arrow really is the reader on every plain file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tasks.common.finance_files import table as table_module
from tasks.payment_requests import read_payment_request_file
from tests.support.finance_files import HEADER

ROWS = [
    ["Acme Ltd", "£1,234.50", "Café fees é£€", "R1", "30/12/2026", "20"],
    ["Beta & Sons", "10", "Ünïcode 🧾 receipt", "R2", "", ""],
    ["Gamma", "0.5", "plain", "R3", "30/12/2026", ""],
]
TITLE = "Payment requests, June £\r\n,,,\r\n"


def _text(newline: str, *, title: bool, final_newline: bool) -> str:
    lines = [";".join(HEADER), *(";".join(row) for row in ROWS)]
    text = (TITLE.replace("\r\n", newline) if title else "") + newline.join(lines)
    return text + newline if final_newline else text


def _read_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, list[bool]]:
    real = table_module._arrow_table
    used: list[bool] = []

    def recording(*args: Any) -> Any:
        result = real(*args)
        used.append(result is not None)
        return result

    monkeypatch.setattr(table_module, "_arrow_table", recording)
    fast = read_payment_request_file(path)
    monkeypatch.setattr(table_module, "_arrow_table", lambda *args: None)
    careful = read_payment_request_file(path)
    return fast, careful, used


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252", "utf-16"])
@pytest.mark.parametrize("newline", ["\r\n", "\n"], ids=["crlf", "lf"])
@pytest.mark.parametrize("title", [False, True], ids=["header-first", "title-rows"])
@pytest.mark.parametrize("final_newline", [True, False], ids=["ended", "unended"])
def test_arrow_on_the_files_bytes_reads_what_the_csv_module_reads(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    encoding: str,
    newline: str,
    title: bool,
    final_newline: bool,
) -> None:
    text = _text(newline, title=title, final_newline=final_newline)
    if encoding == "cp1252":  # what Windows-1252 can hold
        text = text.replace("🧾", "x").replace("Ü", "U").replace("ï", "i")
    path = tmp_path / "f.csv"
    path.write_bytes(text.encode(encoding))

    fast, careful, used = _read_both(path, monkeypatch)

    assert used == [True]
    assert fast.encoding == careful.encoding == encoding
    assert fast.rows == careful.rows
    assert [row.line for row in fast.rows] == [row.line for row in careful.rows]
    assert fast.rows[0].line == (4 if title else 2)
    assert [row.values["description"] for row in fast.rows] == [
        line.split(";")[2] for line in text.splitlines()[-3:]
    ]


@pytest.mark.parametrize(
    "body",
    [
        b"Acme Ltd;1;x;R1;;\rBeta;2;y;R2;;\r\n",  # a lone CR ends a line
        b'Acme Ltd;1;"x; y";R1;;\r\n',  # a quote
        b"Acme Ltd;1;x;R1;;\r\n \r\nBeta;2;y;R2;;\r\n",  # a line of one cell, not blank
    ],
    ids=["lone-cr", "quoted", "one-cell"],
)
def test_what_arrow_cannot_read_exactly_goes_row_by_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: bytes
) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"\xef\xbb\xbf" + ";".join(HEADER).encode() + b"\r\n" + body)

    fast, careful, used = _read_both(path, monkeypatch)

    assert True not in used  # declined, or (a quote in the head) not even tried
    assert fast.rows == careful.rows
    assert [row.line for row in fast.rows] == [row.line for row in careful.rows]


def _large(rows: int = 6_000) -> str:
    """A file well past the first 256 KB a large file's delimiter and header are found in."""
    lines = [";".join(HEADER)]
    lines += [f"Acme Ltd;{n}.50;Café fees é£€ {'x' * 40};R{n};30/12/2026;20" for n in range(rows)]
    return "\r\n".join(lines) + "\r\n"


@pytest.mark.parametrize(
    ("encoding", "tail", "decoded"),
    [
        ("utf-8", "", False),
        ("utf-8-sig", "", False),
        # Windows-1252 only past the head: Arrow's UTF-8 check fails, and the file is decoded
        # whole, which finds its encoding.
        ("cp1252", "Zoë Café;1;Zoë;RZ;;\r\n", True),
    ],
)
def test_a_large_utf8_file_is_read_from_its_bytes_without_decoding_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str, tail: str, decoded: bool
) -> None:
    text = _large() + tail
    if encoding == "cp1252":  # ASCII up to the tail, whose bytes are not UTF-8
        ascii_rows = _large().replace("é", "e").replace("£", "L").replace("€", "E")
        data = ascii_rows.encode("ascii") + tail.encode("cp1252")
        text = data.decode("cp1252")
    else:
        data = text.encode(encoding)
    path = tmp_path / "big.csv"
    path.write_bytes(data)
    real = table_module._decode
    calls: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(table_module, "_decode", counting)
    fast, careful, used = _read_both(path, monkeypatch)

    assert fast.encoding == careful.encoding == encoding
    assert fast.rows == careful.rows and len(fast.rows) == len(text.splitlines()) - 1
    # Arrow read the bytes; or declined the cp1252 ones, then read the text re-encoded.
    assert used == ([False, True] if decoded else [True])
    assert (len(calls) > 1) is decoded  # the careful read decodes; the fast one only if needed


@pytest.mark.parametrize(
    "tail", [b"Beta;2;y;R2;;\rGamma;3;z;R3;;\r\n", b"Beta;2;y;R2;;\r"], ids=["inside", "last-byte"]
)
def test_a_lone_carriage_return_past_the_head_goes_row_by_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes
) -> None:
    path = tmp_path / "big.csv"
    path.write_bytes(_large().encode("utf-8") + tail)

    fast, careful, used = _read_both(path, monkeypatch)

    assert used == [False]
    assert fast.rows == careful.rows


@pytest.mark.parametrize(
    "body",
    [
        b"Acme Ltd;1;x;R1;;\r\n\r\nBeta;2;y;R2;;\r\n",  # inside
        b"\r\nAcme Ltd;1;x;R1;;\r\nBeta;2;y;R2;;\r\n",  # right after the header
        b"Acme Ltd;1;x;R1;;\r\nBeta;2;y;R2;;\r\n\r\n\r\n",  # at the end
        b"Acme Ltd;1;x;R1;;\n\n\nBeta;2;y;R2;;",  # LF lines, several, the last unended
        b";;;;;\r\nAcme Ltd;1;x;R1;;\r\n",  # a row of empty cells
    ],
    ids=["inside", "after-header", "at-the-end", "lf-several", "empty-cells"],
)
def test_blank_lines_are_read_by_arrow_as_the_csv_module_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: bytes
) -> None:
    """Arrow keeps a blank line as a row of empty cells (no line count needed to find the lines
    it would skip), and the blank rows go as the csv module's empty records go: the same rows
    on the same lines."""
    path = tmp_path / "f.csv"
    path.write_bytes(";".join(HEADER).encode() + b"\r\n" + body)

    fast, careful, used = _read_both(path, monkeypatch)

    assert used == [True]
    assert fast.rows == careful.rows
    assert [row.line for row in fast.rows] == [row.line for row in careful.rows]
    assert fast.table.widths.to_pylist() == careful.table.widths.to_pylist()

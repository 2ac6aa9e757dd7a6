"""Reading a payment-request file as finance keeps it: CSV in the usual encodings, or XLSX.

CSV: UTF-8 (with or without BOM), UTF-16 with a BOM (Excel's "Unicode text"), else Windows-1252
(Excel's "CSV" on Windows, where ``£`` is byte 0xA3); the delimiter (comma, semicolon or tab) is
the one the header line uses most. XLSX: the first sheet, or the one named. A title row or two
above the header is tolerated: the header is the first non-blank row, among the first
``HEADER_SCAN_ROWS``, that names at least one known column. Blank rows are skipped; line numbers
stay those a person sees in the file.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tasks.payment_request_files._cells import cell_text
from tasks.payment_request_files._columns import HEADER_ALIASES, map_header, recognised
from tasks.payment_request_files._model import InputFileError, InputRow

HEADER_SCAN_ROWS = 10
XLSX_SUFFIXES = frozenset({".xlsx", ".xlsm"})
_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0"
_DELIMITERS = (",", ";", "\t")

Record = tuple[int, list[str]]  # (line a person sees, cells)


@dataclass(frozen=True)
class LoadedFile:
    """The rows of a file and how it was read (for the ledger and the report)."""

    rows: list[InputRow]
    sha256: str
    encoding: str
    sheet: str | None


def read_payment_request_file(path: Path, *, sheet: str | None = None) -> list[InputRow]:
    """The data rows of a CSV or XLSX file, or :class:`InputFileError` naming the file and why."""
    return load_file(path, sheet=sheet).rows


def load_file(path: Path, *, sheet: str | None = None) -> LoadedFile:
    """Read ``path`` whole: rows, content digest, encoding (``xlsx`` for workbooks), sheet used."""
    data = _read_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    where = str(path)
    if path.suffix.lower() in XLSX_SUFFIXES or data.startswith(_ZIP_MAGIC):
        if sheet is None and path.suffix.lower() not in XLSX_SUFFIXES:
            where = f"{path} (an Excel workbook, whatever its name says)"
        records, sheet_used = _xlsx_records(data, sheet=sheet, where=where)
        rows = _input_rows(records, where=f"{where}, sheet {sheet_used!r}")
        return LoadedFile(rows, digest, "xlsx", sheet_used)
    if sheet is not None:
        raise InputFileError(f"{path}: is a CSV file, which has no sheets (sheet {sheet!r} given)")
    if data.startswith(_OLE_MAGIC):
        raise InputFileError(
            f"{path}: is an old Excel .xls workbook; save it as .xlsx or as CSV and drop it again"
        )
    text, encoding = _decode(data, where=where)
    return LoadedFile(
        _input_rows(_csv_records(text, where=where), where=where), digest, encoding, None
    )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputFileError(f"{path}: cannot be read ({exc.strerror or exc})") from exc


def _decode(data: bytes, *, where: str) -> tuple[str, str]:
    """The text and the name of the encoding it was read with."""
    if data.startswith(codecs.BOM_UTF8):
        try:
            return data[len(codecs.BOM_UTF8) :].decode("utf-8"), "utf-8-sig"
        except UnicodeDecodeError as exc:
            raise InputFileError(
                f"{where}: starts with a UTF-8 byte-order mark but byte {exc.start + 3} "
                f"(0x{data[exc.start + 3]:02x}) is not UTF-8; save it again as 'CSV UTF-8'"
            ) from exc
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError as exc:
            raise InputFileError(f"{where}: is not valid UTF-16 (byte {exc.start})") from exc
    if b"\x00" in data:
        raise InputFileError(f"{where}: is binary (it contains NUL bytes), not a CSV text file")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as utf8_error:
        try:
            return data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError as exc:
            raise InputFileError(
                f"{where}: unreadable encoding: not UTF-8 (byte 0x{data[utf8_error.start]:02x} "
                f"at offset {utf8_error.start}) and not Windows-1252 (byte 0x{data[exc.start]:02x} "
                f"at offset {exc.start}); save it as 'CSV UTF-8' and drop it again"
            ) from exc


def _delimiter(text: str) -> str:
    """The delimiter used most on one line among the first non-blank lines (comma on a tie).

    Several lines, because a title line above the header may have no delimiter at all. Excel's
    ``sep=;`` first line, where present, decides (the line itself is skipped as a title row).
    """
    if text[:4].casefold() == "sep=" and len(text) > 4 and text[4] in _DELIMITERS:
        return text[4]
    lines = [line for line in text.splitlines()[: HEADER_SCAN_ROWS * 2] if line.strip()]
    best = {
        d: max((line.count(d) for line in lines[:HEADER_SCAN_ROWS]), default=0) for d in _DELIMITERS
    }
    chosen = max(_DELIMITERS, key=lambda d: best[d])
    return chosen if best[chosen] > 0 else ","


def _csv_records(text: str, *, where: str) -> Iterator[Record]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text), strict=True)
    previous = 0
    try:
        for cells in reader:
            yield previous + 1, cells
            previous = reader.line_num
    except csv.Error as exc:
        raise InputFileError(f"{where}: line {previous + 1}: not valid CSV ({exc})") from exc


def _xlsx_records(data: bytes, *, sheet: str | None, where: str) -> tuple[list[Record], str]:
    # Imported here: openpyxl costs a noticeable import time that CSV-only runs need not pay.
    from openpyxl import load_workbook  # type: ignore[import-untyped]
    from openpyxl.utils.exceptions import InvalidFileException  # type: ignore[import-untyped]

    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, ValueError, OSError) as exc:
        raise InputFileError(f"{where}: is not a readable .xlsx workbook ({exc})") from exc
    try:
        names = workbook.sheetnames
        if sheet is not None and sheet not in names:
            listed = ", ".join(repr(name) for name in names)
            raise InputFileError(f"{where}: has no sheet {sheet!r}; its sheets are: {listed}")
        worksheet = workbook[sheet] if sheet is not None else workbook.worksheets[0]
        if not hasattr(worksheet, "iter_rows"):
            raise InputFileError(f"{where}: sheet {worksheet.title!r} is a chart, not a table")
        worksheet.reset_dimensions()  # writers that record wrong dimensions would cut rows off
        records = [
            (number, [cell_text(cell.value, getattr(cell, "number_format", None)) for cell in row])
            for number, row in enumerate(worksheet.iter_rows(min_row=1), start=1)
        ]
        return records, str(worksheet.title)
    finally:
        workbook.close()


def _blank(cells: list[str]) -> bool:
    return not any(cell.strip() for cell in cells)


def _find_header(records: Iterator[Record], *, where: str) -> Record:
    scanned: list[Record] = []
    for record in records:
        if _blank(record[1]):
            continue
        if recognised(record[1]) > 0:
            return record
        scanned.append(record)
        if len(scanned) >= HEADER_SCAN_ROWS:
            break
    if not scanned:
        raise InputFileError(f"{where}: is empty (no header row and no data)")
    line, cells = scanned[0]
    examples = ", ".join(repr(aliases[0]) for aliases in HEADER_ALIASES.values())
    raise InputFileError(
        f"{where}: no header row: none of the first {len(scanned)} non-blank rows names a known "
        f"column (line {line} has {', '.join(repr(c.strip()) for c in cells if c.strip())}); "
        f"put a header row first, with columns such as {examples}"
    )


def _input_rows(records: Iterable[Record], *, where: str) -> list[InputRow]:
    iterator = iter(records)
    header_line, raw_header = _find_header(iterator, where=where)
    header = tuple(name.strip() for name in raw_header)
    positions = map_header(list(header), where=f"{where}, header row (line {header_line})")
    columns = {canonical: header[position] for canonical, position in positions.items()}
    picks = list(positions.items())
    rows: list[InputRow] = []
    for line, cells in iterator:
        if _blank(cells):
            continue
        width = len(cells)
        values = {
            canonical: cells[position].strip() if position < width else ""
            for canonical, position in picks
        }
        rows.append(InputRow(line, values, tuple(cells), header, columns))
    if not rows:
        raise InputFileError(f"{where}: has a header row (line {header_line}) but no data rows")
    return rows

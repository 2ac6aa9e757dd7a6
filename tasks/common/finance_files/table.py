"""Reading a finance file as people keep it: CSV in the usual encodings, or XLSX.

CSV: UTF-8 (with or without BOM), UTF-16 with a BOM (Excel's "Unicode text"), else Windows-1252
(Excel's "CSV" on Windows, where ``£`` is byte 0xA3); the delimiter (comma, semicolon or tab) is
the one the header line uses most. XLSX: the first sheet, or the one named. A title row or two
above the header is tolerated: the header is the first non-blank row, among the first
``HEADER_SCAN_ROWS``, that names at least one known column of the job's :class:`ColumnSpec`.
Blank rows are skipped; line numbers stay those a person sees in the file. Every job that reads
files people drop (payment requests, bank statements, payout exports) reads them here.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyarrow import csv as pa_csv

from tasks.common.finance_files.cells import cell_text
from tasks.common.finance_files.headers import ColumnSpec
from tasks.common.finance_files.raw import RawTable, table_from_records
from tasks.common.finance_files.rows import InputFileError, InputRow

HEADER_SCAN_ROWS = 10
HEAD_CHARS = 64 * 1024  # where the delimiter and the header are looked for
ARROW_BLOCK_BYTES = 16 * 1024 * 1024
# A file up to this size is parsed as one block, so each column arrives as one array and is not
# copied again to join the blocks' pieces; a larger one is read in blocks of ARROW_BLOCK_BYTES.
ARROW_ONE_BLOCK_BYTES = 256 * 1024 * 1024
# The bytes looked at by each step of the search for a lone CR (:func:`_lone_carriage_return`).
CR_STRETCH = 256 * 1024
XLSX_SUFFIXES = frozenset({".xlsx", ".xlsm"})
_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0"
_DELIMITERS = (",", ";", "\t")

Record = tuple[int, list[str]]  # (line a person sees, cells)


@dataclass(frozen=True)
class LoadedTable:
    """The rows of a file and how it was read (for the ledger and the report)."""

    table: RawTable
    sha256: str
    encoding: str
    sheet: str | None

    @property
    def rows(self) -> list[InputRow]:
        """Every row as an :class:`InputRow` (for small files; large ones stay columnar)."""
        return list(self.table.rows())


def load_table(path: Path, spec: ColumnSpec, *, sheet: str | None = None) -> LoadedTable:
    """Read ``path`` whole: rows, content digest, encoding (``xlsx`` for workbooks), sheet used.

    Raises :class:`InputFileError` naming the file and why when it cannot be used as a whole.
    """
    data = _read_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    where = str(path)
    if path.suffix.lower() in XLSX_SUFFIXES or data.startswith(_ZIP_MAGIC):
        if sheet is None and path.suffix.lower() not in XLSX_SUFFIXES:
            where = f"{path} (an Excel workbook, whatever its name says)"
        records, sheet_used = _xlsx_records(data, sheet=sheet, where=where)
        table = _table(iter(records), spec, where=f"{where}, sheet {sheet_used!r}")
        return LoadedTable(table, digest, "xlsx", sheet_used)
    if sheet is not None:
        raise InputFileError(f"{path}: is a CSV file, which has no sheets (sheet {sheet!r} given)")
    if data.startswith(_OLE_MAGIC):
        raise InputFileError(
            f"{path}: is an old Excel .xls workbook; save it as .xlsx or as CSV and drop it again"
        )
    read, tried = _utf8_without_decoding(data, spec, where=where)
    if read is not None:
        return LoadedTable(read[0], digest, read[1], None)
    text, encoding = _decode(data, where=where)
    # A UTF-8 file's own bytes are what Arrow reads, not its text encoded again (its byte-order
    # mark holds no line break, CR or quote, so it changes no position the reader looks for).
    utf8 = data if encoding in ("utf-8", "utf-8-sig") else None
    del data
    # Arrow declined these UTF-8 bytes already; another encoding's text is worth a try.
    arrow = not (tried and utf8 is not None)
    table = _csv_table(text, spec, where=where, utf8=utf8, arrow=arrow)
    return LoadedTable(table, digest, encoding, None)


def _utf8_without_decoding(
    data: bytes, spec: ColumnSpec, *, where: str
) -> tuple[tuple[RawTable, str] | None, bool]:
    """A large UTF-8 file read by Arrow straight from its bytes, with only its first lines
    decoded (for the delimiter and the header): the table and the encoding, or None to read
    it the usual way; and whether Arrow tried the bytes.

    Decoding the whole file only to learn that it is UTF-8 cost a copy of it and a pass over its
    bytes; Arrow checks every cell's UTF-8 as it reads (the bytes outside the cells are
    delimiters and line breaks, and the header lines are decoded here). A file that is not UTF-8
    further on fails that check and is read the usual way, which finds its encoding; so does any
    file the fast path does not take, which reports exactly what is wrong with it.
    """
    bom = data.startswith(codecs.BOM_UTF8)
    start = len(codecs.BOM_UTF8) if bom else 0
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\x00" in data:
        return None, False
    # Four bytes per character at most: the head holds at least the HEAD_CHARS characters the
    # whole text would have offered (a line break is one byte in UTF-8, never inside a character).
    end = data.find(b"\n", start + 4 * HEAD_CHARS)
    if end < 0:
        return None, False  # a small file: decoded whole, as it costs nothing
    try:
        head = data[start : end + 1].decode("utf-8")
    except UnicodeDecodeError:
        return None, False
    tried: list[bool] = []
    table = _arrow_fast_path(head, spec, where=where, utf8=data, tried=tried)
    if table is None:
        return None, bool(tried)
    return (table, "utf-8-sig" if bom else "utf-8"), True


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
    head = text[:HEAD_CHARS].splitlines()[: HEADER_SCAN_ROWS * 2]
    lines = [line for line in head if line.strip()]
    best = {
        d: max((line.count(d) for line in lines[:HEADER_SCAN_ROWS]), default=0) for d in _DELIMITERS
    }
    chosen = max(_DELIMITERS, key=lambda d: best[d])
    return chosen if best[chosen] > 0 else ","


def _csv_table(
    text: str, spec: ColumnSpec, *, where: str, utf8: bytes | None = None, arrow: bool = True
) -> RawTable:
    """``utf8``: the file's bytes when they are ``text`` in UTF-8 (with or without a BOM);
    ``arrow``: whether Arrow may read them (False: it declined them already)."""
    fast = _arrow_fast_path(text, spec, where=where, utf8=utf8) if arrow else None
    if fast is not None:
        return fast
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text), strict=True)
    records = _csv_records(reader, where=where)
    found = _find_header(records, spec, where=where)
    header, positions = _mapped_header(found[1], spec, where=where, line=found[0])
    table = table_from_records(records, header=header, columns=positions)
    return _with_data(table, where=where, header_line=found[0])


def _arrow_fast_path(
    text: str,
    spec: ColumnSpec,
    *,
    where: str,
    utf8: bytes | None,
    tried: list[bool] | None = None,
) -> RawTable | None:
    """The rows read by Arrow (:func:`_arrow_table`) once the header is found among the first
    lines of ``text`` (the file's text, or at least its first ``HEAD_CHARS`` characters and the
    rest of that line); None when the file is for the csv module to read row by row. ``tried``
    gets an entry when Arrow was given the bytes."""
    delimiter = _delimiter(text)
    head = text[: text.find("\n", HEAD_CHARS) + 1 or len(text)]
    if '"' in head:
        return None
    reader = csv.reader(io.StringIO(head, newline=""), delimiter=delimiter, strict=True)
    try:
        found = _find_header(_csv_records(reader, where=where), spec, where=where)
        header, positions = _mapped_header(found[1], spec, where=where, line=found[0])
    except InputFileError:
        return None  # the whole file is read row by row, and says exactly what is wrong
    data = utf8 if utf8 is not None else text.encode("utf-8")
    if tried is not None:
        tried.append(True)
    fast = _arrow_table(data, reader.line_num, delimiter, header, positions)
    return None if fast is None else _with_data(fast, where=where, header_line=found[0])


def _csv_records(reader: Any, *, where: str) -> Iterator[Record]:
    previous = 0
    try:
        for cells in reader:
            yield previous + 1, cells
            previous = reader.line_num
    except csv.Error as exc:
        raise InputFileError(f"{where}: line {previous + 1}: not valid CSV ({exc})") from exc


def _arrow_table(
    data: bytes, header_end: int, delimiter: str, header: tuple[str, ...], columns: dict[str, int]
) -> RawTable | None:
    """The rows after the header read by Arrow's CSV reader, when the file is plain enough that
    it reads them exactly as the csv module would: no quotes at all (so no field spans lines and
    no quoting can be malformed), one record per line (no line ended by a lone CR), every row
    as wide as the header or blank. Any other file returns None and is read row by row
    instead.

    Works on the UTF-8 bytes, where a line break, a CR and a quote are each one byte that no
    other character's encoding contains: every line found is the text's line."""
    offset = 0
    for _ in range(header_end):
        found = data.find(b"\n", offset)
        if found < 0:
            return None
        offset = found + 1
    if data.count(b"\r", 0, offset) != data.count(b"\r\n", 0, offset):
        return None  # lines ended by a lone CR: the csv module's line count is not ours
    if offset == len(data) or data.find(b'"', offset) >= 0:
        return None
    if _lone_carriage_return(data, offset):
        return None
    names = [f"c{position}" for position in range(len(header))]
    rest = len(data) - offset
    block = rest + 1 if rest < ARROW_ONE_BLOCK_BYTES else ARROW_BLOCK_BYTES
    try:
        read = pa_csv.read_csv(
            pa.BufferReader(pa.py_buffer(data)[offset:]),  # a view: the bytes are not copied
            # One thread: a file of one block is parsed by one anyway, and handing its columns'
            # conversion to the pool cost CPU for little time (bench_payouts' 20 MB report:
            # 27 ms of CPU in 21 ms with threads, 23 ms in 23 ms without).
            read_options=pa_csv.ReadOptions(
                column_names=names, block_size=block, use_threads=False
            ),
            # A blank line stays a row (of empty cells), so row n is line n after the header
            # without counting the lines: the blank rows are dropped below, as the csv module's
            # empty records are.
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, quote_char=False, ignore_empty_lines=False
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    first = header_end + 1
    return RawTable(
        header=header,
        columns=columns,
        lines=pa.array(np.arange(first, first + read.num_rows, dtype=np.int64)),
        cells=tuple(_one_array(read.column(name)) for name in names),
        widths=pa.repeat(pa.scalar(len(header), pa.int32()), read.num_rows),
    )


def _lone_carriage_return(data: bytes, start: int) -> bool:
    """True when a CR after ``start`` is not followed by a line feed. Numpy compares each byte
    and the byte after it, a stretch of :data:`CR_STRETCH` bytes at a time into two reused
    masks: counting the two-byte "\\r\\n" beside the CRs cost a million-line file three times as
    much, and one pass over the whole file allocated a mask as large as the file (bench_payouts'
    20 MB report of CRLF lines: 6 ms instead of 12 ms, and no 20 MB of fresh pages)."""
    if data.find(b"\r", start) < 0:
        return False  # no CR at all (a file of LF lines): one memchr, not a pass by numpy
    body = np.frombuffer(data, dtype=np.uint8)[start:]
    if body[-1] == ord("\r"):
        return True
    cr = np.empty(min(CR_STRETCH, len(body)), dtype=bool)
    other = np.empty_like(cr)
    for at in range(0, len(body) - 1, CR_STRETCH):
        size = min(CR_STRETCH, len(body) - 1 - at)
        here, after = cr[:size], other[:size]
        np.equal(body[at : at + size], ord("\r"), out=here)
        np.not_equal(body[at + 1 : at + 1 + size], ord("\n"), out=after)
        np.logical_and(here, after, out=here)
        if here.any():
            return True
    return False


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    """The column as one array (its only chunk as it is, not a copy)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


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


def _find_header(records: Iterator[Record], spec: ColumnSpec, *, where: str) -> Record:
    scanned: list[Record] = []
    for record in records:
        if _blank(record[1]):
            continue
        if spec.recognised(record[1]) > 0:
            return record
        scanned.append(record)
        if len(scanned) >= HEADER_SCAN_ROWS:
            break
    if not scanned:
        raise InputFileError(f"{where}: is empty (no header row and no data)")
    line, cells = scanned[0]
    examples = spec.examples()
    raise InputFileError(
        f"{where}: no header row: none of the first {len(scanned)} non-blank rows names a known "
        f"column (line {line} has {', '.join(repr(c.strip()) for c in cells if c.strip())}); "
        f"put a header row first, with columns such as {examples}"
    )


def _mapped_header(
    raw_header: list[str], spec: ColumnSpec, *, where: str, line: int
) -> tuple[tuple[str, ...], dict[str, int]]:
    header = tuple(name.strip() for name in raw_header)
    return header, spec.map_header(header, where=f"{where}, header row (line {line})")


def _table(records: Iterator[Record], spec: ColumnSpec, *, where: str) -> RawTable:
    header_line, raw_header = _find_header(records, spec, where=where)
    header, positions = _mapped_header(raw_header, spec, where=where, line=header_line)
    table = table_from_records(records, header=header, columns=positions)
    return _with_data(table, where=where, header_line=header_line)


def _with_data(table: RawTable, *, where: str, header_line: int) -> RawTable:
    """The table without blank rows, or :class:`InputFileError` when nothing is left."""
    table = table.without_blank_rows()
    if not len(table):
        raise InputFileError(f"{where}: has a header row (line {header_line}) but no data rows")
    return table

"""Cutting a statement into cells, keeping each row's physical line number.

CSV: Arrow's CSV reader (single-threaded, so a malformed row is reported with its line) reads
every cell as text straight from the file's UTF-8 bytes. Lines no CSV reader should see are
refused by line: an unterminated quote (looked for only in files that use quotes at all), a line
longer than any bank writes, a row with more or fewer cells than the header. Blank lines (NatWest
separates accounts with them) are dropped. Labelled records (Santander's TXT) are read line by
line: such files hold one account's month, never millions of lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._cells import read_cells, valid_utf8
from tasks.bank_payments._detect import Detection, split_line
from tasks.bank_payments._errors import BadLine, StatementRefused
from tasks.bank_payments._file_bytes import Buffer, find, view
from tasks.bank_payments._profiles import FIELDS, Profile, normalise_header
from tasks.bank_payments._text import StatementText

MAX_LINE_CHARS = 4_000
_NOT_UTF8 = "invalid UTF8"


@dataclass
class RawRows:
    """Cells by column (all text), the physical line of each row, and the lines refused."""

    columns: list[pa.Array | None]
    header: list[str]
    lines: np.ndarray
    bad: list[BadLine] = field(default_factory=list)
    # Set when the cells were read from a re-decoded file (a byte that is not UTF-8 past the
    # start the encoding was judged from): the encoding the file was read in after all.
    encoding: str | None = None

    def column(self, ref: str | int, strip: str = "") -> pa.Array | None:
        """A column by header name (compared as headers are) or 1-based position; None for a
        column the file does not have (or that no field of the profile reads)."""
        if isinstance(ref, int):
            return self.columns[ref - 1] if 0 < ref <= len(self.columns) else None
        position = _position(self.header, ref, strip)
        return None if position is None else self.columns[position]

    def read(self) -> list[pa.Array]:
        """The columns that were read."""
        return [c for c in self.columns if c is not None]

    def take(self, keep: np.ndarray) -> RawRows:
        """Only the rows where ``keep`` is true."""
        mask = pa.array(keep)
        return RawRows(
            [None if c is None else c.filter(mask) for c in self.columns],
            self.header,
            self.lines[keep],
            self.bad,
        )


def _position(header: list[str], ref: str, strip: str) -> int | None:
    wanted = normalise_header(ref, strip)
    for index, name in enumerate(header):
        if normalise_header(name, strip) == wanted:
            return index
    return None


def used_positions(profile: Profile, header: list[str], width: int) -> list[int]:
    """The 0-based positions of the cells some field of the profile reads."""
    found = set()
    for name in FIELDS:
        for ref in profile.column_names(name):
            position = (
                ref - 1 if isinstance(ref, int) else _position(header, ref, profile.header_strip)
            )
            if position is not None and 0 <= position < width:
                found.add(position)
    return sorted(found)


def read_rows(content: StatementText, detection: Detection, where: str) -> RawRows:
    """The rows after the header (or all rows of a headerless file)."""
    if detection.profile.format == "labelled":
        return _labelled(content.text(), detection.profile, where)
    try:
        return _csv(content, detection, where)
    except pa.ArrowInvalid as exc:
        if _NOT_UTF8 not in str(exc) or content.encoding != "utf-8":
            raise StatementRefused(where, None, f"is not readable as CSV ({exc})") from exc
    recoded = content.recoded()
    raw = _csv(recoded, detection, where)
    raw.encoding = recoded.encoding
    return raw


def _offset_after(data: Buffer, lines: int) -> int:
    offset = 0
    for _ in range(lines):
        found = find(data, b"\n", offset)
        if found < 0:
            return len(data)
        offset = found + 1
    return offset


def _quote_problems(body: bytes | memoryview, first_number: int) -> list[BadLine]:
    """Lines with an odd number of quote marks: a quoted cell never closed."""
    buffer = np.frombuffer(body, dtype=np.uint8)
    newlines = np.flatnonzero(buffer == ord("\n"))
    quotes = np.flatnonzero(buffer == ord('"'))
    per_line = np.bincount(np.searchsorted(newlines, quotes), minlength=len(newlines) + 1)
    bad = []
    for index in np.flatnonzero(per_line % 2 == 1):
        start = int(newlines[index - 1]) + 1 if index > 0 else 0
        end = int(newlines[index]) if index < len(newlines) else len(body)
        text = bytes(body[start:end]).decode("utf-8", errors="replace")
        bad.append(
            BadLine(
                first_number + int(index),
                "a quoted cell is never closed (unterminated quote)",
                text[:200],
            )
        )
    return bad


def _without_lines(
    body: bytes | memoryview, first_number: int, bad: list[BadLine]
) -> tuple[bytes, np.ndarray]:
    """The body with the refused lines taken out, and the physical number of each line kept."""
    lines = bytes(body).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    drop = {b.line - first_number for b in bad}
    kept = [i for i in range(len(lines)) if i not in drop]
    text = b"\n".join(lines[i] for i in kept) + b"\n"
    return text, np.array(kept, dtype=np.int64) + first_number


# An amount cut in two by an unquoted thousands comma: "1,250.00" read as the cells "1" and
# "250.00" (or "£1", "-1", "(1" and "250.00)").
_AMOUNT_HEAD = re.compile(r"^[-+(]?£?[-+]?\d{1,3}$")
_AMOUNT_TAIL = re.compile(r"^\d{3}(?:[.,]\d{3})*(?:\.\d{1,2})?\)?$")


def _looks_split(cells: list[str]) -> bool:
    """Whether two neighbouring cells look like one amount split by an unquoted comma."""
    stripped = [c.strip() for c in cells]
    return any(
        _AMOUNT_HEAD.match(a) and _AMOUNT_TAIL.match(b)
        for a, b in zip(stripped, stripped[1:], strict=False)
    )


def _width(profile: Profile, header: tuple[str, ...], sample: list[str]) -> int:
    """Cells per row: the header's, plus one when rows end with an empty trailing cell.

    Rows one cell wider than the header whose last cell is empty are NatWest's trailing comma,
    or an unquoted comma in an amount on a row whose last column is empty ("...,1,250.00,
    6250.00,INCOME,"). Taking the second for the first reads every row one cell to the left:
    the amount as £1.00. So the sample lines vote, and a line that looks like a split amount
    votes for the header's width (its row is then refused naming the extra cell).

    The mirror case, Lloyds' header ending in a comma ("...,Balance,") over rows without one
    (tests/data/bank/variants/SOURCES.md), is one cell less: the header's empty last cell
    names no column, so rows one cell shorter are read as they are when most sample rows are."""
    width = len(header) if header else (profile.shape.columns if profile.shape else 0)
    trailing = plain = short = 0
    unnamed_last = bool(header) and not header[-1].strip()
    for line in sample:
        if not line.strip():
            continue
        cells = split_line(line, profile.delimiter)
        if len(cells) == width + 1 and not cells[-1].strip():
            if _looks_split(cells):
                plain += 1
            else:
                trailing += 1
        elif len(cells) == width:
            plain += 1
        elif unnamed_last and len(cells) == width - 1:
            short += 1
    if short > plain + trailing:
        return width - 1
    return width + 1 if trailing > plain else width


def _csv(content: StatementText, detection: Detection, where: str) -> RawRows:
    profile = detection.profile
    data = content.data
    offset = _offset_after(data, detection.header_line)
    first_number = detection.header_line + 1
    body: bytes | memoryview = view(data)[offset:]
    quoted = content.quotes and find(data, b'"', offset) >= 0
    bad = _quote_problems(body, first_number) if quoted else []
    numbers: np.ndarray | None = None
    if bad:
        body, numbers = _without_lines(body, first_number, bad)
    sample = content.head().split("\n")[detection.header_line : detection.header_line + 5]
    width = _width(profile, detection.header, sample)
    if width < 2:
        raise StatementRefused(where, detection.header_line or None, "has fewer than two columns")
    if not bytes(body[:65536]).strip() and not bytes(body).strip():
        empty: list[pa.Array | None] = [pa.array([], pa.string()) for _ in range(width)]
        return RawRows(empty, list(detection.header), np.array([], dtype=np.int64), bad)
    used = used_positions(profile, list(detection.header), width)
    # With a trailing comma, the last cell is read too: it must be empty on every row.
    trailing = width == _width(profile, detection.header, []) + 1
    read = sorted({*used, width - 1}) if trailing else used
    table, invalid = read_cells(
        body, profile.delimiter, width, read, check_utf8=not valid_utf8(body), quoted=quoted
    )
    rows_seen = table.num_rows + len(invalid)
    if numbers is None:
        numbers = np.arange(first_number, first_number + rows_seen, dtype=np.int64)
    elif len(numbers) < rows_seen:  # pragma: no cover - the reader saw a line we did not
        numbers = np.append(numbers, np.arange(rows_seen - len(numbers)) + numbers[-1] + 1)
    valid = np.ones(rows_seen, dtype=bool)
    footer = [re.compile(p) for p in profile.footer_patterns]
    for number, row_text, expected, actual in invalid:
        valid[number - 1] = False
        if row_text.strip() and not any(p.search(row_text) for p in footer):
            bad.append(_cell_count_problem(int(numbers[number - 1]), row_text, expected, actual))
    columns: list[pa.Array | None] = [None] * width
    for position in used:
        columns[position] = _single(table.column(f"c{position}"))
    # (Every row valid, nearly always: the numbers as they are, not copied through the mask.)
    kept = numbers[:rows_seen][valid] if invalid else numbers[:rows_seen]
    raw = RawRows(columns, list(detection.header), kept, bad)
    if trailing:
        raw = _without_filled_trailing_cell(raw, _single(table.column(f"c{width - 1}")), width)
    return _tidy(raw)


def _without_filled_trailing_cell(raw: RawRows, last: pa.Array, width: int) -> RawRows:
    """In a file whose rows end with a trailing comma, refuse the rows whose last cell is not
    empty: such a row has a cell more than the header (an unquoted comma in a name or an amount
    without the trailing comma) and is read shifted, "1,250.00" as £1.00."""
    filled = np.asarray(
        pc.not_equal(pc.utf8_trim_whitespace(last), "").to_numpy(zero_copy_only=False), dtype=bool
    )
    if not filled.any():
        return raw
    columns = raw.read()
    for index in np.flatnonzero(filled):
        cells = [str(c[int(index)].as_py()) for c in columns] + [str(last[int(index)].as_py())]
        raw.bad.append(
            BadLine(
                int(raw.lines[index]),
                f"the line has {width} cells where the header has {width - 1} "
                "(an unquoted comma in a name or amount?)",
                ",".join(cells)[:200],
            )
        )
    return raw.take(~filled)


def _single(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _cell_count_problem(line: int, text: str, expected: int, actual: int) -> BadLine:
    if len(text) > MAX_LINE_CHARS:
        return BadLine(line, _too_long(len(text)))
    return BadLine(
        line,
        f"the line has {actual} cells where the header has {expected}"
        + (" (an unquoted comma in a name or amount?)" if actual > expected else ""),
        text[:200],
    )


def _too_long(length: int) -> str:
    return (
        f"the line is {length:,} characters long (a bank line is under {MAX_LINE_CHARS:,}): the "
        "file is damaged or not a statement"
    )


def _row_lengths(columns: list[pa.Array]) -> np.ndarray:
    """Each row's length in bytes over ``columns``, as unsigned numbers. For plain string
    columns (no nulls), from their offsets buffers: a row's bytes are the sum of its cells'
    ends less the sum of their starts, so the offsets are added up once (one pass each) and
    differenced once, where each column's differences took two passes and an array of their
    own. The sums are kept in 32 bits and may wrap: the differences come out right all the
    same (modulo 2**32, and no row is that long). Else by Arrow's ``binary_length``."""
    n = len(columns[0])
    if all(pa.types.is_string(c.type) and not c.null_count for c in columns):
        bounds = np.zeros(n + 1, dtype=np.uint32)
        for column in columns:
            start = column.offset
            offsets = np.frombuffer(column.buffers()[1], dtype=np.uint32)[start : start + n + 1]
            np.add(bounds, offsets, out=bounds)
        lengths: np.ndarray = np.diff(bounds)
        return lengths
    summed = np.zeros(n, dtype=np.uint64)
    for column in columns:
        summed += np.asarray(pc.fill_null(pc.binary_length(column), 0).to_numpy(), np.uint64)
    return summed


def _tidy(raw: RawRows) -> RawRows:
    """Refuse rows longer than any bank line; drop rows of empty cells only (``,,,,``)."""
    columns = raw.read()
    if not columns or len(raw.lines) == 0:
        return raw
    lengths = _row_lengths(columns)
    separators = len(raw.columns) - 1
    short, long = 2 * len(columns), MAX_LINE_CHARS - separators
    # Both questions at once: rows too long, and rows short enough to be only spaces. Counted
    # from one past the short ones, those wrap round to the largest numbers (unsigned).
    number = lengths.dtype.type
    unusual = np.flatnonzero((lengths - number(short + 1)) >= number(long - short))
    if len(unusual) == 0:
        return raw
    drop = np.zeros(len(raw.lines), dtype=bool)
    for index in unusual:
        total = int(lengths[index]) + separators
        if total > MAX_LINE_CHARS:
            raw.bad.append(BadLine(int(raw.lines[index]), _too_long(total)))
            drop[index] = True
        else:
            drop[index] = all(not str(c[int(index)].as_py()).strip() for c in columns)
    return raw.take(~drop) if drop.any() else raw


_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:[\s\u00a0]*(.*?)[\s\u00a0]*$")


def _labelled(text: str, profile: Profile, where: str) -> RawRows:
    """Records of ``Label: value`` lines separated by blank lines (see the module docstring)."""
    labels = {label.casefold(): label for label in profile.labels}
    order = list(profile.labels)
    first_label = order[0].casefold()
    records: list[dict[str, str]] = []
    numbers: list[int] = []
    bad: list[BadLine] = []
    current: dict[str, str] | None = None
    headless = False  # inside a record that lost its first line (already named, once)
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        found = _LABEL.match(line)
        if found is None:
            bad.append(BadLine(number, "not a 'Label: value' line of a record", line[:200]))
            continue
        label, value = found.group(1).strip().casefold(), found.group(2)
        if label not in labels:
            continue  # preamble lines (From:, Account:) and labels billops does not use
        if label == first_label:
            current = {}
            headless = False
            records.append(current)
            numbers.append(number)
        elif current is not None and labels[label] in current:
            # A label the record has already: a new record began without its first line.
            # Taking it into the record before would overwrite that record's amount and
            # description with this one's (one payment lost, the other misdated).
            bad.append(
                BadLine(
                    number,
                    f"a record without its {order[0]!r} line: {found.group(1)!r} comes again "
                    "before the next record's "
                    f"{order[0]!r} (a damaged or edited download)",
                    line[:200],
                )
            )
            current, headless = None, True
            continue
        if current is None:
            if not headless:
                bad.append(
                    BadLine(number, f"{found.group(1)!r} before the first record's {order[0]!r}")
                )
            continue
        current[labels[label]] = value
    columns: list[pa.Array | None] = [
        pa.array([r.get(label, "") for r in records], pa.string()) for label in order
    ]
    return RawRows(columns, order, np.array(numbers, dtype=np.int64), bad)

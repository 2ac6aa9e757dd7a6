"""Which profile a statement file is: from its header row, preamble or shape, never its name.

A header profile matches when every cell of its signature is in one of the first lines (within
its allowed preamble); the most specific match wins (the longest signature). A headerless
profile matches by shape: every one of the first lines has its width, a date where it keeps
the date and an amount where it keeps the amount. A labelled profile matches its preamble
patterns and labels. When nothing matches, the closest profiles are named and a starter profile
guessed from the file's first line is offered (``template``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import yaml

from tasks.bank_payments._errors import StatementRefused, UnknownLayout
from tasks.bank_payments._profiles import Profile, normalise_header

SCAN_LINES = 40
DELIMITERS = (",", ";", "\t", "|")
_AMOUNT = re.compile(r"^[-+(]?\s*£?\s*-?[\d,]*\.?\d+\)?\s*(CR|DR)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Detection:
    """The profile that matches, the header's physical line (0 without a header) and why."""

    profile: Profile
    header_line: int
    header: tuple[str, ...]
    reason: str


def split_line(line: str, delimiter: str) -> list[str]:
    """One line's cells (quotes honoured; a broken quote yields what csv makes of it)."""
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:
        return line.split(delimiter)


def _head(text: str) -> list[tuple[int, str]]:
    lines = text.split("\n", SCAN_LINES + 1)[:SCAN_LINES]
    return [(number, line) for number, line in enumerate(lines, start=1)]


def _header_match(profile: Profile, head: list[tuple[int, str]]) -> Detection | None:
    wanted = {normalise_header(s, profile.header_strip) for s in profile.signature}
    nonblank = [(n, line) for n, line in head if line.strip()]
    for n, line in nonblank[: profile.preamble_lines + 1]:
        cells = [
            normalise_header(c, profile.header_strip) for c in split_line(line, profile.delimiter)
        ]
        present = set(cells)
        if not wanted <= present:
            continue
        if not all(
            any(normalise_header(a) in present for a in group) for group in profile.signature_any
        ):
            continue
        named = [c for c in cells if c]
        if profile.exact_header and set(named) != wanted:
            continue
        why = f"line {n} is its header ({', '.join(sorted(wanted))})"
        if n > 1:
            why += f" after {n - 1} line(s) of preamble"
        return Detection(profile, n, tuple(split_line(line, profile.delimiter)), why)
    return None


def _looks_like_date(cell: str, formats: Sequence[str]) -> bool:
    for fmt in formats:
        try:
            datetime.strptime(cell.strip().strip("'"), fmt)
        except ValueError:
            continue
        return True
    return False


def _shape_match(profile: Profile, head: list[tuple[int, str]]) -> Detection | None:
    shape = profile.shape
    assert shape is not None
    lines = [(n, line) for n, line in head if line.strip()][:10]
    if not lines:
        return None
    for _n, line in lines:
        cells = split_line(line, profile.delimiter)
        while len(cells) > shape.columns and not cells[-1].strip():
            cells.pop()
        if len(cells) != shape.columns:
            return None
        if not _looks_like_date(cells[shape.date_column - 1], profile.date_formats):
            return None
        if not _AMOUNT.match(cells[shape.amount_column - 1].strip()):
            return None
    return Detection(
        profile,
        0,
        (),
        f"no header row; its first {len(lines)} line(s) have {shape.columns} cells with a date "
        f"in column {shape.date_column} and an amount in column {shape.amount_column}",
    )


def _labelled_match(profile: Profile, head: list[tuple[int, str]]) -> Detection | None:
    nonblank = [line for _n, line in head if line.strip()]
    patterns = [re.compile(p) for p in profile.preamble_patterns]
    if patterns and not all(any(p.search(line) for line in nonblank[:6]) for p in patterns):
        return None
    labels = {label.casefold() for label in profile.labels}
    seen = {line.split(":", 1)[0].strip().casefold() for line in nonblank if ":" in line}
    if not labels <= seen:
        return None
    return Detection(profile, 0, (), f"labelled records ({', '.join(profile.labels)})")


def detect(text: str, profiles: Sequence[Profile], where: str) -> Detection:
    """The best-matching profile, or :class:`UnknownLayout` naming the closest ones."""
    head = _head(text)
    found: list[tuple[int, Detection]] = []
    for profile in profiles:
        if profile.format == "labelled":
            hit = _labelled_match(profile, head)
            weight = 100 + len(profile.labels)
        elif profile.header:
            hit = _header_match(profile, head)
            weight = 10 * len(profile.signature) + len(profile.signature_any)
        else:
            hit = _shape_match(profile, head)
            weight = 1
        if hit is not None:
            found.append((weight, hit))
    if found:
        found.sort(key=lambda pair: (-pair[0], pair[1].profile.name))
        detection = found[0][1]
        _check_header(detection, where)
        return detection
    raise _unknown(text, head, profiles, where)


def _check_header(detection: Detection, where: str) -> None:
    names = [normalise_header(c) for c in detection.header if c.strip()]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise StatementRefused(
            where,
            detection.header_line,
            f"the header names column(s) {', '.join(repr(r) for r in repeated)} more than once; "
            "which one holds the value is ambiguous",
        )


def _first_content(head: list[tuple[int, str]]) -> tuple[int, str] | None:
    return next(((n, line) for n, line in head if line.strip()), None)


def _unknown(
    text: str, head: list[tuple[int, str]], profiles: Sequence[Profile], where: str
) -> UnknownLayout:
    first = _first_content(head)
    if first is None:
        return UnknownLayout(where, None, "has no lines: it is empty or blank", [], None)
    number, line = first
    delimiter = max(DELIMITERS, key=line.count)
    cells = {normalise_header(c) for c in split_line(line, delimiter) if c.strip()}
    scored = []
    for profile in profiles:
        known = profile.known_headers()
        score = len(cells & known) / max(len(cells | known), 1)
        scored.append((score, profile.name))
    scored.sort(reverse=True)
    closest = [name for score, name in scored[:3] if score > 0] or [n for _s, n in scored[:3]]
    wrong_delimiter = _wrong_delimiter(head, profiles)
    reason = (
        wrong_delimiter
        or f"no bank profile matches this file (line {number}: {line.strip()[:120]!r}); the "
        f"closest are {', '.join(closest)}"
    )
    return UnknownLayout(where, number, reason, closest, starter_profile(line, delimiter))


def _wrong_delimiter(head: list[tuple[int, str]], profiles: Sequence[Profile]) -> str | None:
    """A known header written with another delimiter (a spreadsheet's regional setting)."""
    for profile in profiles:
        if not profile.header or profile.format != "csv":
            continue
        for other in DELIMITERS:
            if other == profile.delimiter:
                continue
            trial = profile.model_copy(update={"delimiter": other})
            hit = _header_match(trial, head)
            if hit is not None:
                return (
                    f"line {hit.header_line} is a {profile.bank} header separated by "
                    f"{other!r}, but that export uses {profile.delimiter!r}: the file was re-saved "
                    "with another delimiter; export it from the bank again, or use a profile "
                    f"with delimiter {other!r}"
                )
    return None


_GUESSES = (
    ("date", ("date", "posted", "booking", "transaction date", "value date")),
    ("amount", ("amount", "value", "sum")),
    ("credit", ("credit", "paid in", "money in", "in")),
    ("debit", ("debit", "paid out", "money out", "out")),
    ("payer", ("payee", "payer", "name", "counterparty", "counter party")),
    ("reference", ("reference", "ref", "memo")),
    ("text", ("description", "details", "narrative", "transaction description")),
    ("balance", ("balance", "running balance")),
    ("type", ("type", "transaction type")),
    ("id", ("id", "transaction id")),
)


def starter_profile(line: str, delimiter: str) -> str:
    """A ready-to-edit profile for a layout billops does not know, guessed from its header."""
    cells = [c.strip() for c in split_line(line, delimiter) if c.strip()]
    columns: dict[str, str] = {}
    for field, words in _GUESSES:
        for cell in cells:
            if normalise_header(cell) in words and cell not in columns.values():
                columns[field] = cell
                break
    sign = "in_out" if "credit" in columns and "amount" not in columns else "signed"
    if sign == "signed":
        columns.pop("credit", None)
        columns.pop("debit", None)
    columns.setdefault("date", cells[0] if cells else "Date")
    if sign == "signed":
        columns.setdefault("amount", cells[-1] if cells else "Amount")
    document = {
        "name": "my_bank",
        "bank": "My bank (edit me)",
        "description": "Written by billops from an unknown file's first line; check every entry.",
        "source": "the file itself",
        "delimiter": delimiter,
        "header": True,
        "preamble_lines": 0,
        "signature": cells,
        "columns": columns,
        "date_formats": ["%d/%m/%Y"],
        "decimal": ".",
        "thousands": ",",
        "sign": sign,
        "currency": "GBP",
        "footer_lines": 0,
    }
    out = io.StringIO()
    yaml.safe_dump(document, out, sort_keys=False, allow_unicode=True)
    return out.getvalue()

"""From raw cells to statement lines: fields picked by the profile, dates and money parsed by whole
columns, and every line that cannot be used named with its reason.

Text fields (payer, reference, description, type, account) stay dictionary-encoded: a
statement repeats the same names and references many times, and everything done to them later
(classifying, finding references, hashing line keys) is done once per distinct value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._errors import BadLine, StatementRefused
from tasks.bank_payments._kernels import (
    MAX_PENNIES,
    amount_problem,
    clean_text,
    encoded,
    mask,
    parse_dates,
    parse_money,
    per_value,
)
from tasks.bank_payments._lines import Lines
from tasks.bank_payments._memo import empty_text, payer_reference
from tasks.bank_payments._profiles import Profile, normalise_header
from tasks.bank_payments._raw import RawRows
from tasks.bank_payments._statement import SCHEMA, SkippedLine

_FOOTER_WORDS = re.compile(r"(?i)total|balance|closing|opening|end of|count|number of")
# Day, month (digits or a name), then a year of two digits, perhaps with a time: "02/11/99".
_TWO_DIGIT_YEAR = re.compile(r"^\d{1,2}([-/. ])(?:\d{1,2}|[A-Za-z]{3,9})\1\d{2}(?:[ T]\d.*)?$")


def _required(lines: Lines, name: str, where: str, *, in_runs: bool = False) -> pa.Array:
    column = lines.field(name, in_runs=in_runs)
    if column is None:
        raise _no_column(lines, name, where)
    return column


def _no_column(lines: Lines, name: str, where: str) -> StatementRefused:
    wanted = " or ".join(repr(r) for r in lines.profile.column_names(name))
    return StatementRefused(
        where,
        None,
        f"has no {name} column ({wanted}) although its header looks like "
        f"{lines.profile.bank}'s export",
    )


def _raw_money(lines: Lines, name: str, where: str) -> pa.Array:
    """A money column's cells as the file has them (plain strings: amounts rarely repeat)."""
    column = lines.cells(name)
    if column is None:
        raise _no_column(lines, name, where)
    return column


def _money(lines: Lines, column: pa.Array, label: str) -> tuple[np.ndarray, np.ndarray]:
    profile = lines.profile
    money = parse_money(column, decimal=profile.decimal, thousands=profile.thousands)
    unreadable = ~money.readable & ~money.empty
    if unreadable.any():

        def why(index: int) -> str:
            problem = amount_problem(str(column[index].as_py()), profile.decimal, profile.thousands)
            return problem if label == "amount" else f"{label}: {problem}"

        lines.refuse(unreadable, why)
    lines.refuse(
        money.negative_zero, f"{label} is -0.00: a minus sign on nothing, not a real amount"
    )
    absurd = np.abs(money.pennies) > MAX_PENNIES
    lines.refuse(absurd, f"{label} is over £{MAX_PENNIES // 100:,}: not a believable bank line")
    return money.pennies, money.empty


def _amounts(lines: Lines, where: str) -> np.ndarray:
    profile = lines.profile
    if profile.sign == "in_out":
        credit_cells = _raw_money(lines, "credit", where)
        credit, no_credit = _money(lines, credit_cells, "money in")
        debit, no_debit = _money(lines, _raw_money(lines, "debit", where), "money out")
        # Money out is often written with a minus (Monzo's "Money Out" is "-26.50"), so its
        # sign says nothing; money in with a minus or in brackets is a credit taken back (a
        # reversal, a returned payment), never money received: read as its size it could pay
        # an invoice with money that did not arrive.
        lines.refuse(
            ~no_credit & (credit < 0),
            lambda i: (
                f"money in {str(credit_cells[i].as_py()).strip()!r} is negative: a money-in "
                "column holds what was received; a reversed or returned credit belongs in "
                "money out"
            ),
        )
        both = ~no_credit & ~no_debit & (credit != 0) & (debit != 0)
        lines.refuse(both, "both money in and money out are filled in")
        lines.refuse(no_credit & no_debit, "neither money in nor money out is filled in")
        return np.where(no_credit, 0, np.abs(credit)) - np.where(no_debit, 0, np.abs(debit))
    if profile.sign == "direction":
        return _directed(lines, where)
    column = _raw_money(lines, "amount", where)
    amount, empty = _money(lines, column, "amount")
    lines.refuse(empty, "the amount is empty")
    return -amount if profile.sign == "inverted" else amount


def _directed(lines: Lines, where: str) -> np.ndarray:
    """Unsigned amounts signed by the line's direction (Wise's transaction history: IN takes
    the money received, OUT the money sent); a line of another direction is refused."""
    profile = lines.profile
    direction = per_value(
        lines.text("direction"), lambda v: pc.utf8_upper(pc.utf8_trim_whitespace(v))
    )

    def among(words: list[str]) -> np.ndarray:
        wanted = pa.array([word.upper() for word in words], pa.string())
        return mask(per_value(direction, lambda v: pc.is_in(v, wanted)))

    is_in, is_out = among(profile.credit_directions), among(profile.debit_directions)
    credit, no_credit = _money(lines, _raw_money(lines, "credit", where), "money in")
    debit, no_debit = _money(lines, _raw_money(lines, "debit", where), "money out")
    ins, outs = ", ".join(profile.credit_directions), ", ".join(profile.debit_directions)
    lines.refuse(
        ~is_in & ~is_out,
        lambda i: (
            f"direction {direction[i].as_py()!r} is neither money in ({ins}) nor money out ({outs})"
        ),
    )
    lines.refuse(is_in & no_credit | is_out & no_debit, "the amount is empty")
    lines.refuse(
        is_in & (credit < 0) | is_out & (debit < 0),
        "the amount has a sign where the direction gives it",
    )
    return np.where(is_in, credit, 0) - np.where(is_out, debit, 0)


def _dates(lines: Lines, today: date, where: str) -> pa.Array:
    column = encoded(_required(lines, "date", where, in_runs=True))  # files are in date order
    profile = lines.profile
    parsed, used_by_value = parse_dates(column.dictionary, profile.date_formats, profile.date_zone)
    dates = pc.take(parsed, column.indices)
    by_value = np.asarray(used_by_value.to_numpy(zero_copy_only=False))
    if len(by_value) and (by_value == by_value[0]).all() and by_value[0] >= 0:
        # Every date read, all in one format (nearly every file): nothing to refuse by line, so
        # the format of each line (a gather over every line) is not needed.
        used_np = None
    else:
        used_np = by_value[np.asarray(column.indices.to_numpy(zero_copy_only=False))]
    _refuse_dates(lines, column, used_np)
    # Compared once per distinct date; only a file with a future date looks at its lines.
    future_by_value = pc.greater(parsed, pa.scalar(today, pa.date32()))
    if pc.any(future_by_value).as_py():
        future = mask(pc.take(future_by_value, column.indices))
        lines.refuse(future, f"the date is after today ({today.isoformat()}): a future-dated line")
    return dates


def _refuse_dates(lines: Lines, column: pa.DictionaryArray, used_np: np.ndarray | None) -> None:
    """Refuse the lines whose date was not read, is unsure, or is in another format than most
    (``used_np``: each line's format as :func:`parse_dates` gives it; None when all are read in
    one format)."""
    if used_np is None:
        return
    profile = lines.profile
    missing = used_np == -1
    header_name = normalise_header(str(profile.column_names("date")[0]))
    if missing.any():
        formats = " or ".join(profile.date_formats)

        def why(index: int) -> str:
            value = str(column[index].as_py())
            if normalise_header(value) == header_name:
                return "the header row is repeated here (two exports pasted together?)"
            if _FOOTER_WORDS.search(value) or _FOOTER_WORDS.search(lines.row_text(index)):
                return (
                    f"looks like a footer or total row, not a transaction ({value!r}); a "
                    "profile with footer_lines skips such rows"
                )
            if not value:
                return "the date is empty"
            if _TWO_DIGIT_YEAR.match(value):
                # docs/conventions.md §3: a two-digit year is refused, never given a century.
                return (
                    f"date {value!r} has a two-digit year: billops does not guess the century; "
                    f"export the statement with four-digit years ({formats})"
                )
            return f"date {value!r} is not a valid date ({formats})"

        lines.refuse(missing, why)
    unsure = used_np == -2
    if unsure.any():
        lines.refuse(
            unsure,
            lambda i: (
                f"date {column[i].as_py()!r} happens twice or not at all in "
                f"{profile.date_zone} (the clocks changed that night): its London date is a guess"
            ),
        )
    if len(profile.date_formats) > 1:
        known = used_np >= 0
        found = used_np[known]
        if len(found):
            main = int(np.bincount(found).argmax())
            mixed = known & (used_np != main)
            fmt = profile.date_formats[main]
            lines.refuse(
                mixed, f"the date is written differently from the rest of the file ({fmt})"
            )


def _currency(lines: Lines, account: pa.Array, where: str) -> None:
    profile = lines.profile
    wanted = profile.currency.upper()
    column = lines.field("currency")
    if column is None and profile.account_currency_suffix:
        column = per_value(
            account,
            lambda v: pc.utf8_trim_whitespace(
                pc.replace_substring_regex(v, pattern=r"^.*?([A-Za-z]{3})$", replacement=r"\1")
            ),
        )
    if column is None:
        return
    upper = per_value(column, pc.utf8_upper)
    other = mask(per_value(upper, lambda v: pc.and_(pc.not_equal(v, wanted), pc.not_equal(v, ""))))
    if other.any() and other.all():
        first = str(upper[0].as_py())
        raise StatementRefused(
            where,
            int(lines.raw.lines[0]),
            f"the statement is in {first}, not {wanted}: billops records {wanted} payments only",
        )
    lines.refuse(other, lambda i: f"the line is in {upper[i].as_py()}, not {wanted}")


def _skips(lines: Lines) -> None:
    profile = lines.profile
    state = lines.field("state")
    if profile.booked_states and state is not None:
        booked = pa.array([s.upper() for s in profile.booked_states])
        pending = ~mask(per_value(state, lambda v: pc.is_in(pc.utf8_upper(v), booked)))
        lines.skip(pending, lambda i: f"not booked ({state[i].as_py() or 'no state'})")
    for name, pattern in profile.skip_rows_where.items():
        column = lines.field(name)
        if column is None:
            continue
        hit = mask(per_value(column, _matching(pattern)))
        lines.skip(hit, _balance_row(column))


def _matching(pattern: str) -> Callable[[pa.Array], pa.Array]:
    return lambda values: pc.match_substring_regex(values, pattern)


def _balance_row(column: pa.Array) -> Callable[[int], str]:
    return lambda index: f"a balance row, not a transaction ({column[index].as_py()})"


def _account(lines: Lines) -> pa.Array:
    refs = lines.profile.column_names("account")
    strip = lines.profile.header_strip
    parts = [c for c in (lines.raw.column(r, strip) for r in refs) if c is not None]
    if not parts:
        return empty_text(lines.n)
    if len(parts) == 1:
        return per_value(parts[0], clean_text)
    joined = pc.binary_join_element_wise(*(clean_text(p) for p in parts), " ")
    return encoded(joined)


def _balance(lines: Lines) -> pa.Array:
    column = None
    for ref in lines.profile.column_names("balance"):
        column = lines.raw.column(ref, lines.profile.header_strip)
        if column is not None:
            break
    if column is None:
        return pa.nulls(lines.n, pa.int64())
    profile = lines.profile
    money = parse_money(column, decimal=profile.decimal, thousands=profile.thousands)
    missing = ~money.readable | money.empty
    return pa.array(money.pennies, pa.int64(), mask=missing if missing.any() else None)


def checked(raw: RawRows, profile: Profile, *, today: date, where: str) -> Lines:
    """Every line's checks (skipped rows, currency, date, amount), with the account, dates and
    amounts read on the way: all that decides whether a line is usable, and why not. The other
    text fields decide nothing, so a reader that needs them for a few lines only (the payout
    job's ``_payouts``) takes them from here."""
    if profile.footer_lines and len(raw.lines):
        keep = np.arange(len(raw.lines)) < len(raw.lines) - profile.footer_lines
        raw = raw.take(keep)
    lines = Lines(raw, profile)
    if lines.n == 0:
        return lines
    _skips(lines)
    lines.account = _account(lines)
    _currency(lines, lines.account, where)
    lines.dates = _dates(lines, today, where)
    lines.amount = _amounts(lines, where)
    return lines


def outcome(lines: Lines) -> tuple[list[BadLine], list[SkippedLine]]:
    """The bad lines (the reader's with the checks', by line) and the skipped ones."""
    raw = lines.raw
    if lines.n == 0:  # the reader's, in the order it found them (a refusal names the first)
        return list(raw.bad), []
    bad = list(raw.bad)
    for index, reason in lines.reasons.items():
        bad.append(BadLine(int(raw.lines[index]), reason, lines.row_text(index)[:200]))
    skipped = [
        SkippedLine(int(raw.lines[index]), why)
        for index, why in sorted(lines.skips.items())
        if not lines.refused[index]
    ]
    bad.sort(key=lambda b: b.line)
    return bad, skipped


def normalise(
    raw: RawRows, profile: Profile, *, today: date, where: str
) -> tuple[pa.Table, list[BadLine], list[SkippedLine]]:
    """The statement table, the bad lines (with the reader's) and the skipped ones."""
    lines = checked(raw, profile, today=today, where=where)
    bad, skipped = outcome(lines)
    if lines.n == 0:
        return SCHEMA.empty_table(), bad, skipped
    description = lines.field("text")
    payer, reference = payer_reference(lines, description)
    txn = lines.field("id")
    table = pa.table(
        {
            "line": pa.array(lines.raw.lines, pa.int64()),
            "account": lines.account,
            "date": lines.dates,
            "amount": pa.array(lines.amount, pa.int64()),
            "payer": payer,
            "reference": reference,
            "text": description if description is not None else empty_text(lines.n),
            "type": lines.text("type"),
            "txn_id": txn if txn is not None else empty_text(lines.n),
            "balance": _balance(lines),
        },
        schema=SCHEMA,
    )
    usable = lines.open()
    return (table if usable.all() else table.filter(pa.array(usable))), bad, skipped

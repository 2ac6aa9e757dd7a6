"""Reading a bank statement file: decode, detect the layout, cut cells, normalise, check balances.

``on_bad_lines="reject_file"`` (the default) refuses the whole file when any line cannot be used,
naming the first such line; ``"skip"`` keeps the good lines and lists exactly which were skipped.
A running balance that does not add up is reported (``Statement.balance_issues``), not refused:
the bank's own arithmetic is not the payer's fault, but a person should look.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow.compute as pc

from tasks.bank_payments._detect import Detection, detect
from tasks.bank_payments._errors import BadLine, StatementRefused
from tasks.bank_payments._file_bytes import Buffer, read_file, view
from tasks.bank_payments._kernels import encoded
from tasks.bank_payments._normalise import normalise
from tasks.bank_payments._profiles import Profile, available_profiles
from tasks.bank_payments._raw import read_rows
from tasks.bank_payments._statement import Statement, pounds
from tasks.bank_payments._text import StatementText, statement_text
from tasks.common.working_days import london_today

OnBadLines = Literal["reject_file", "skip"]


def read_statement(
    path: Path,
    *,
    profile: Profile | None = None,
    profiles: Sequence[Profile] | None = None,
    on_bad_lines: OnBadLines = "reject_file",
    today: date | None = None,
) -> Statement:
    """Read ``path`` (see the module docstring); :class:`StatementRefused` when it is refused."""
    where = str(path)
    return read_statement_bytes(
        file_bytes(path),
        where=where,
        profile=profile,
        profiles=profiles,
        on_bad_lines=on_bad_lines,
        today=today,
    )


def file_bytes(path: Path) -> Buffer:
    """The file's bytes; :class:`StatementRefused` when it cannot be read."""
    try:
        return read_file(path)
    except OSError as exc:
        raise StatementRefused(str(path), None, f"cannot be read ({exc.strerror or exc})") from exc


def detect_layout(
    data: Buffer, *, where: str, profiles: Sequence[Profile] | None = None
) -> tuple[Detection, str, str]:
    """Which profile matches the file's bytes, with the start of its text and its encoding."""
    content = statement_text(data, where)
    detection = detect_content(content, profiles)
    return detection, content.head(), content.encoding


def detect_content(content: StatementText, profiles: Sequence[Profile] | None) -> Detection:
    """The profile of a statement's content, among ``profiles`` (None: every one available)."""
    known = profiles if profiles is not None else available_profiles()
    return detect(content.head(), known, content.where)


def read_statement_bytes(
    data: Buffer,
    *,
    where: str,
    profile: Profile | None = None,
    profiles: Sequence[Profile] | None = None,
    on_bad_lines: OnBadLines = "reject_file",
    today: date | None = None,
) -> Statement:
    """:func:`read_statement` on bytes already in memory (``bytes``, or a numpy buffer of them:
    ``_file_bytes``)."""
    content = statement_text(data, where)
    detection = detect_content(content, [profile] if profile is not None else profiles)
    raw = read_rows(content, detection, where)
    table, bad, skipped = normalise(
        raw, detection.profile, today=today or london_today(), where=where
    )
    refuse_unusable(table.num_rows, bad, on_bad_lines, detection, where)
    statement = Statement(
        file=where,
        sha256=hashlib.sha256(view(data)).hexdigest(),
        profile=detection.profile,
        detection=detection.reason,
        encoding=raw.encoding or content.encoding,
        lines=table,
        bad_lines=bad,
        skipped=skipped,
    )
    if detection.profile.balance_check:
        statement.balance_issues = balance_issues(statement)
    return statement


def refuse_unusable(
    usable: int, bad: list[BadLine], on_bad_lines: OnBadLines, detection: Detection, where: str
) -> None:
    """:class:`StatementRefused` for a file with no usable line, or with a bad line when bad
    lines refuse the file (``usable``: how many lines are)."""
    if usable == 0 and not bad:
        line = detection.header_line or None
        raise StatementRefused(where, line, "has a header but no statement lines")
    if bad and on_bad_lines == "reject_file":
        first = bad[0]
        more = (
            f" ({len(bad) - 1} more bad line(s); on_bad_lines=skip reads the rest)"
            if len(bad) > 1
            else ""
        )
        raise StatementRefused(where, first.line, first.reason + more)
    if usable == 0:
        raise StatementRefused(where, bad[0].line, f"no usable line: {bad[0].reason}")


def balance_issues(statement: Statement) -> list[BadLine]:
    """Lines where the running balance does not follow from the previous line and the amount.

    Files run oldest first or newest first; both are tried per account and the order with fewer
    mismatches is the file's. Accounts are checked separately (NatWest puts several in a file).
    """
    table = statement.lines
    if table.num_rows < 2 or table.column("balance").null_count == table.num_rows:
        return []
    balance_col = table.column("balance")
    balance = np.asarray(pc.fill_null(balance_col, 0).to_numpy(), dtype=np.int64)
    amount = np.asarray(table.column("amount").to_numpy(), dtype=np.int64)
    lines = np.asarray(table.column("line").to_numpy(), dtype=np.int64)
    # Neighbours compared: in the same account (every line, in a file of one account) and both
    # with a balance (every line, in a file that gives them all).
    same: np.ndarray | None = None  # None: every neighbour
    account = encoded(table.column("account"))
    if len(account.dictionary) > 1 or account.indices.null_count:
        accounts = np.asarray(account.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        same = accounts[1:] == accounts[:-1]
    if balance_col.null_count:
        known = np.asarray(pc.is_valid(balance_col).to_numpy(zero_copy_only=False), dtype=bool)
        both = known[1:] & known[:-1]
        same = both if same is None else same & both
    step = balance[1:] - balance[:-1]  # what each balance moved by, read either way
    ascending = step != amount[1:]
    if same is not None:
        ascending &= same
    if not ascending.any():  # oldest first, every balance adding up: no other order has fewer
        return []
    descending = step != -amount[:-1]
    if same is not None:
        descending &= same
    wrong, oldest_first = (
        (ascending, True) if ascending.sum() <= descending.sum() else (descending, False)
    )
    issues = []
    for index in np.flatnonzero(wrong):
        at = index + 1 if oldest_first else index
        before = balance[index] if oldest_first else balance[index + 1]
        after = balance[index + 1] if oldest_first else balance[index]
        issues.append(
            BadLine(
                int(lines[at]),
                f"running balance does not add up: {pounds(before)} + {pounds(amount[at])} "
                f"is not {pounds(after)}",
            )
        )
    return issues

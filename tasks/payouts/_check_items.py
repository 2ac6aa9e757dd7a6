"""Check 3: each payout item against the service's record of what it paid.

- A **payment** line: its document exists at the service and shows at least that much paid
  (``PAID`` or ``SETTLED``, or partly paid by as much). One whose payment failed afterwards is
  shown with the deduction that took it back (``docs/service.md`` §13.2 Late failures): fine,
  and said so. A payment paid out by two payouts is wrong.
- A **deduction** line: it takes back a payment an earlier payout paid out — the same payment
  (by id when the report gives ids, else the same document and amount) — and is shown with it.
  A deduction billops cannot tie to a payment it has seen paid out is wrong: the report of the
  payout that paid it out is missing, or the deduction is.

Vectorised over the items (a year of a platform's items at once); notes are written only for
the lines that need one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.arrow_text import mask
from tasks.common.working_days import working_days_between
from tasks.payouts._items import as_date
from tasks.payouts._profiles import DEDUCTION, PAYMENT
from tasks.payouts._records import records, values_at
from tasks.payouts._runs import first_rows, row_ranges, rows_in
from tasks.payouts._service import document_numbers, document_rows, pennies_at, texts_at
from tasks.payouts._text import is_in

PAID_STATUSES = ("PAID", "SETTLED")
# The item columns that pairing a deduction with its payment reads.
PAIRED = ("payout_id", "position", "reference", "arrival_date", "payment_id", "amount")
# Working days a payment that failed after it was paid out may wait for its deduction: the
# service deducts it from the next payout whose payments cover it (docs/service.md §6 Payouts).
DEDUCTION_GRACE = 10


def _money(pennies: int) -> str:
    return f"£{abs(int(pennies)) // 100:,}.{abs(int(pennies)) % 100:02d}"


def pair_deductions(history: pd.DataFrame, repeated: np.ndarray | None = None) -> pd.DataFrame:
    """Each deduction of ``history`` (items of every payout known, with ``reference`` and
    ``arrival_date``) with the payment it takes back: ``payout_id``, ``position`` of the
    deduction, then ``paid_payout``, ``paid_reference``, ``paid_date``, ``paid_position``,
    ``paid_payment`` and ``paid_amount`` of the payment line (empty where none is found), and
    ``again_reference`` and ``again_date``: the payout that had already taken that payment back
    (empty unless the same payment is deducted twice).

    Deductions are paired in arrival order, whatever order ``history`` is in (the scope's
    payouts come first, then the ledger's). A deduction naming its payment takes back that
    payment only (or a line of its document and amount that names no payment, from a layout
    without payment ids). One naming none takes back the latest payment of its document and
    amount that an earlier payout paid out and no deduction took back yet: a late failure is
    deducted from the next payout (``docs/service.md`` §6 Payouts), before a retry of the same
    invoice can be paid out again. ``repeated``: the lines naming a payment id another line
    names too, when known (:class:`~tasks.payouts._reconcile.Scope`)."""
    _, numbers = document_numbers(history)
    kind = history["kind"]
    payment = (kind == PAYMENT).to_numpy(dtype=bool)
    # Only the lines pairing reads, as plain dicts in arrival order: a few hundred deductions
    # and the payments they can name, out of a year of items.
    deductions = _lines(history, np.flatnonzero((kind == DEDUCTION).to_numpy(dtype=bool)), numbers)
    named = {str(d["payment_id"]) for d in deductions} - {""}
    by_name = payment & _naming(history["payment_id"], named, repeated)
    found_names = set(history["payment_id"].iloc[np.flatnonzero(by_name)].tolist())
    # A payment of the deduction's document is looked for only where the deduction names no
    # payment, or one not among the payments; only those documents' payments are chosen.
    docs = {
        str(d["doc"])
        for d in deductions
        if not d["payment_id"] or str(d["payment_id"]) not in found_names
    } - {""}
    wanted = by_name | (payment & is_in(numbers, docs))
    payments = _lines(history, np.flatnonzero(wanted), numbers)
    paired: list[dict[str, object]] = []
    # Each payment taken back: the reference and day of the payout whose deduction took it.
    used: dict[tuple[str, int], tuple[str, date]] = {}
    by_payment: dict[str, dict[str, object]] = {}
    for line in payments:
        if line["payment_id"] in named:
            by_payment.setdefault(str(line["payment_id"]), line)
    for row in deductions:
        match: dict[str, object] | None = None
        again: tuple[str, date] | None = None
        day = as_date(row["arrival_date"])
        named_payment = by_payment.get(str(row["payment_id"])) if row["payment_id"] else None
        if named_payment is not None:
            key = (str(named_payment["payout_id"]), int(named_payment["position"]))  # type: ignore[call-overload]
            if key in used:
                again = used[key]  # the same payment deducted twice
            else:
                match = named_payment
        elif row["doc"]:
            same = [
                p
                for p in payments
                if p["doc"] == row["doc"]
                and p["amount"] == -row["amount"]  # type: ignore[operator]
                and p["payout_id"] != row["payout_id"]
            ]
            if row["payment_id"]:  # named, but not among the payments: one that names no payment
                same = [p for p in same if p["payment_id"] == ""]
            for candidate in reversed(same):
                key = (str(candidate["payout_id"]), int(candidate["position"]))  # type: ignore[call-overload]
                if key not in used and as_date(candidate["arrival_date"]) <= day:
                    match = candidate
                    break
        entry: dict[str, object] = {
            "payout_id": row["payout_id"],
            "position": int(row["position"]),  # type: ignore[call-overload]
        }
        if match is not None:
            key = (str(match["payout_id"]), int(match["position"]))  # type: ignore[call-overload]
            used[key] = (str(row["reference"]), day)
            entry.update(
                paid_payout=str(match["payout_id"]),
                paid_reference=str(match["reference"]),
                paid_date=as_date(match["arrival_date"]),
                paid_position=int(match["position"]),  # type: ignore[call-overload]
                paid_payment=str(match["payment_id"]),
                paid_amount=int(match["amount"]),  # type: ignore[call-overload]
            )
        if again is not None:
            entry.update(again_reference=again[0], again_date=again[1])
        paired.append(entry)
    return pd.DataFrame(
        paired,
        columns=[
            "payout_id",
            "position",
            "paid_payout",
            "paid_reference",
            "paid_date",
            "paid_position",
            "paid_payment",
            "paid_amount",
            "again_reference",
            "again_date",
        ],
    )


def _naming(ids: pd.Series, named: set[str], repeated: np.ndarray | None) -> np.ndarray:
    """Which lines name one of the payments ``named`` (``is_in``). A deduction names its
    payment on its own line too, so the payment's line is among the ``repeated`` ones, when
    known: a few hundred ids looked at, not a hash of each of a year's (about 5 ms)."""
    if repeated is None:
        return is_in(ids, named)
    found = np.zeros(len(ids), dtype=bool)
    if named and len(repeated):
        found[repeated[[i in named for i in values_at(ids, repeated)]]] = True
    return found


def _lines(history: pd.DataFrame, rows: np.ndarray, numbers: pd.Series) -> list[dict[str, object]]:
    """``history``'s lines at ``rows`` as dicts of the columns pairing reads (``PAIRED``) and
    ``doc`` (its document's number), in arrival order (a stable sort by arrival date, payout and
    position, as ``sort_values``' stable sort of the same lines)."""
    if not len(rows):
        return []
    columns = {name: values_at(history[name], rows) for name in PAIRED}
    columns["doc"] = values_at(numbers, rows)
    lines = [
        dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)
    ]
    lines.sort(key=_arrival_order)
    return lines


def _arrival_order(line: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    return line["arrival_date"], line["payout_id"], line["position"]


def check_items(
    items: pd.DataFrame,
    documents: pd.DataFrame,
    deductions: pd.DataFrame,
    history: pd.DataFrame,
    twice: Mapping[str, Sequence[str]],
    *,
    as_of: date,
    grace: int = DEDUCTION_GRACE,
) -> pd.DataFrame:
    """``items`` with ``ok`` (the line agrees with the service) and ``note`` (why not, or what
    a person should know: the deduction that took a payment back, the payment a deduction
    takes back). ``deductions`` is :func:`pair_deductions` of ``history``."""
    requests, numbers = document_numbers(items)
    at = document_rows(documents, requests, numbers)
    found = at >= 0
    statuses = texts_at(documents["status"], at)
    status = pd.Series(pd.array(statuses, dtype="str"))
    total, paid = (pennies_at(documents[name], at, found) for name in ("total", "paid"))
    paid = _paid_in_full(statuses, total, paid)
    amount = items["amount"].to_numpy(dtype=np.int64)
    payment = (items["kind"] == PAYMENT).to_numpy(dtype=bool)
    ok = payment & found & (amount <= paid)
    notes: dict[int, str] = {}  # by line; the few lines with a note
    taken_back = _taken_back(items, deductions, history)
    # The lines looked at one by one read their texts from lists (``iat`` on Arrow text costs
    # a look-up per cell).
    checked = [
        i for i in sorted({*np.flatnonzero(payment & ~ok).tolist(), *taken_back}) if payment[i]
    ]
    for i, text, cell in zip(checked, _at(numbers, checked), _at(status, checked), strict=True):
        number, state = str(text or "(no number)"), str(cell)
        back = taken_back.get(i, "")
        ok[i], notes[i] = _payment_verdict(number, int(amount[i]), found[i], state, paid[i], back)
        if not ok[i] and found[i] and not back and state not in PAID_STATUSES:
            updated = documents["updated"].iat[int(at[i])]
            ok[i], notes[i] = _awaiting_deduction(number, state, updated, as_of, grace)
    if twice:
        again = payment & items["payment_id"].isin(list(twice)).to_numpy(dtype=bool)
        for i in map(int, np.flatnonzero(again)):
            ok[i] = False
            payment_id = str(items["payment_id"].iat[i])
            refs = ", ".join(twice[payment_id])
            notes[i] = f"payment {payment_id} is paid out by several payouts ({refs})"
    pairs = {(str(r["payout_id"]), int(r["position"])): r for r in records(deductions)}
    positions = items["position"].to_numpy(dtype=np.int64)
    lines = np.flatnonzero(~payment).tolist()
    for i, payout_id, text, cell in zip(
        lines, _at(items["payout_id"], lines), _at(numbers, lines), _at(status, lines), strict=True
    ):
        key = (str(payout_id), int(positions[i]))
        number = str(text or "(no number)")
        ok[i], notes[i] = _deduction_verdict(
            number, -int(amount[i]), pairs.get(key), found[i], str(cell)
        )
    note = _text_column(len(items), notes)
    return items.assign(ok=ok, note=note, doc=numbers.array, doc_status=status.array)


def _paid_in_full(statuses: pa.Array, total: np.ndarray, paid: np.ndarray) -> np.ndarray:
    """``paid``, but the total where a document shows nothing paid and a paid status. Only the
    statuses of those documents are compared (usually none of a year's): pandas' ``isin`` of
    every status hashed 200,000 texts, and comparing each of them costs 3 ms."""
    unpaid = np.flatnonzero(paid == 0)
    if not len(unpaid):
        return paid
    chosen = statuses.take(pa.array(unpaid))
    settled = unpaid[np.logical_or.reduce([mask(pc.equal(chosen, s)) for s in PAID_STATUSES])]
    paid = paid.copy()
    paid[settled] = total[settled]
    return paid


def _text_column(count: int, texts: Mapping[int, str]) -> pd.api.extensions.ExtensionArray:
    """A text column of ``count`` lines, ``texts`` on the lines it names and "" elsewhere, built
    as Arrow's buffers (an object array of a year of mostly empty notes costs a conversion per
    line; a dictionary cast, a first use of its kernel in each run)."""
    rows = sorted(texts)
    encoded = [str(texts[row]).encode("utf-8") for row in rows]
    lengths = np.zeros(count, dtype=np.int64)
    lengths[np.array(rows, dtype=np.int64)] = [len(text) for text in encoded]
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    column = pa.LargeStringArray.from_buffers(
        count, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))
    )
    return pd.array(column, dtype="str")


def _at(column: pd.Series, rows: list[int]) -> list[object]:
    """``column``'s values at the positions ``rows``, as Python objects."""
    return values_at(column, rows) if rows else []


def _taken_back(
    items: pd.DataFrame, deductions: pd.DataFrame, history: pd.DataFrame
) -> dict[int, str]:
    """The items (by position) whose payment a deduction took back, with the note naming it."""
    hits = deductions.dropna(subset=["paid_payout"])
    if hits.empty:
        return {}
    # The deducting payouts' reference and day, by payout id: a few hundred look-ups in a dict,
    # not a duplicated() over every item and a frame look-up per deduction.
    # Any line of a payout will do: its lines agree on reference and arrival date (the report
    # reader refuses a line that differs from its payout's first, and the ledger keeps them
    # per payout). Each payout's first line, and below each payout's lines, are found by the
    # payout ids' runs (``_runs``), not by a hash of every item's payout id.
    wanted = sorted(set(hits["payout_id"].astype(str)))
    first = first_rows(history["payout_id"])
    at = [first[payout_id] for payout_id in wanted]  # one take of each column, not a look-up
    references = values_at(history["reference"], at)
    days = values_at(history["arrival_date"], at)
    heads = {
        payout_id: (str(reference), day)
        for payout_id, reference, day in zip(wanted, references, days, strict=True)
    }
    rows = row_ranges(items["payout_id"])  # payout: the ranges of its items' positions in items
    positions = items["position"].to_numpy(dtype=np.int64)
    found: dict[int, str] = {}
    seen: set[tuple[str, int]] = set()
    for paid_payout, paid_position, by in zip(
        hits["paid_payout"].astype(str),
        hits["paid_position"].astype("int64"),
        hits["payout_id"],
        strict=True,
    ):
        key = (paid_payout, int(paid_position))
        if key in seen:
            continue  # a payment taken back twice: the first deduction names it
        seen.add(key)
        ranges = rows.get(paid_payout)
        if ranges is None:
            continue
        mine = rows_in(ranges)
        for i in mine[positions[mine] == key[1]].tolist():
            reference, day = heads[str(by)]
            found[int(i)] = (
                f"its payment failed after it was paid out: deducted in payout "
                f"{reference} on {as_date(day)}"
            )
    return found


def _payment_verdict(
    number: str, amount: int, found: bool, status: str, paid: int, taken_back: str
) -> tuple[bool, str]:
    if not found:
        return False, f"{number} is not found at the service"
    if taken_back:
        return True, f"{taken_back} ({number} is {status} now)"
    if status not in PAID_STATUSES and paid < amount:
        return False, (
            f"{number} is {status} at the service (not paid) and no payout deducts this "
            "payment yet: expect a deduction in the next payout"
        )
    return False, f"{_money(amount)} paid out, but {number} shows {_money(paid)} paid"


def _awaiting_deduction(
    number: str, status: str, updated: date | None, as_of: date, grace: int
) -> tuple[bool, str]:
    """A payment paid out whose document is unpaid again and that no payout has deducted yet:
    fine while its failure is recent (the next payout deducts it, ``docs/service.md`` §13.2),
    wrong once ``grace`` working days have passed."""
    if updated is not None and working_days_between(updated, as_of) <= grace:
        return True, (
            f"its payment failed after it was paid out ({number} is {status} since {updated}): "
            "the next payout should deduct it"
        )
    since = f" since {updated}" if updated is not None else ""
    return False, (
        f"{number} is {status} at the service{since} (not paid) and no payout has deducted "
        f"this payment in {grace} working days"
    )


def _deduction_verdict(
    number: str, amount: int, row: Mapping[str, object] | None, found: bool, status: str
) -> tuple[bool, str]:
    if row is not None and not pd.isna(row["again_reference"]):
        # The service took the same failed payment back twice: the biller gave it back once.
        return False, (
            f"takes back {_money(amount)} of {number}, a payment already taken back in payout "
            f"{row['again_reference']} on {row['again_date']}: deducted twice"
        )
    if row is None or pd.isna(row["paid_payout"]):
        return False, (
            f"takes back {_money(amount)} of {number}, a payment billops has not seen paid out: "
            "load the report of the payout that paid it out"
        )
    now = f"; {number} is {status} now" if found else f"; {number} is not found at the service"
    paid = int(row["paid_amount"])  # type: ignore[call-overload]
    text = (
        f"takes back payment {row['paid_payment'] or '(no id)'} of {number} "
        f"({_money(paid)}) paid out in payout {row['paid_reference']} on "
        f"{row['paid_date']}{now}"
    )
    if paid != amount:
        return False, f"{text}; but it deducts {_money(amount)}"
    return found, text

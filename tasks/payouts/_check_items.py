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

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.working_days import working_days_between
from tasks.payouts._items import as_date
from tasks.payouts._profiles import DEDUCTION, PAYMENT
from tasks.payouts._service import INVOICE, PAYMENT_REQUEST, document_keys

PAID_STATUSES = ("PAID", "SETTLED")
# The item columns that pairing a deduction with its payment reads.
PAIRED = ("payout_id", "position", "reference", "arrival_date", "payment_id", "amount")
# Working days a payment that failed after it was paid out may wait for its deduction: the
# service deducts it from the next payout whose payments cover it (docs/service.md §6 Payouts).
DEDUCTION_GRACE = 10


def _money(pennies: int) -> str:
    return f"£{abs(int(pennies)) // 100:,}.{abs(int(pennies)) % 100:02d}"


def pair_deductions(history: pd.DataFrame) -> pd.DataFrame:
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
    invoice can be paid out again."""
    _, numbers = document_keys(history)
    kind = history["kind"]
    is_deduction = (kind == DEDUCTION).to_numpy(dtype=bool)
    # Only the columns pairing reads are copied and boxed (rows are read one by one below).
    paired_columns = history[list(PAIRED)]
    deductions = (
        paired_columns[is_deduction]
        .assign(doc=numbers[is_deduction].to_numpy(dtype=object))
        .sort_values(["arrival_date", "payout_id", "position"], kind="stable")
    )
    named = set(deductions["payment_id"]) - {""}
    # Only the payments a deduction can name (its payment id, or its document): sorting and
    # copying a year of payments to pair a few hundred deductions is most of the work.
    wanted = (kind == PAYMENT).to_numpy(dtype=bool) & (
        history["payment_id"].isin(list(named)).to_numpy(dtype=bool)
        | numbers.isin(list(set(deductions["doc"]) - {""})).to_numpy(dtype=bool)
    )
    payments = (
        paired_columns[wanted]
        .assign(doc=numbers[wanted].to_numpy(dtype=object))
        .sort_values(["arrival_date", "payout_id", "position"], kind="stable")
    )
    paired: list[dict[str, object]] = []
    # Each payment taken back: the reference and day of the payout whose deduction took it.
    used: dict[tuple[str, int], tuple[str, date]] = {}
    by_payment = {
        str(r["payment_id"]): r
        for r in payments[payments["payment_id"].isin(list(named))]
        .drop_duplicates("payment_id")
        .to_dict("records")
    }
    for row in deductions.itertuples(index=False):
        match: dict[str, object] | None = None
        again: tuple[str, date] | None = None
        day = as_date(row.arrival_date)
        named_payment = by_payment.get(str(row.payment_id)) if row.payment_id else None
        if named_payment is not None:
            key = (str(named_payment["payout_id"]), int(named_payment["position"]))
            if key in used:
                again = used[key]  # the same payment deducted twice
            else:
                match = named_payment
        elif row.doc:
            same = payments[
                (payments["doc"] == row.doc)
                & (payments["amount"] == -row.amount)
                & (payments["payout_id"] != row.payout_id)
            ]
            if row.payment_id:  # named, but not among the payments: one that names no payment
                same = same[same["payment_id"] == ""]
            for candidate in reversed(list(same.itertuples(index=False))):
                key = (str(candidate.payout_id), int(candidate.position))
                if key not in used and as_date(candidate.arrival_date) <= day:
                    match = candidate._asdict()
                    break
        entry: dict[str, object] = {"payout_id": row.payout_id, "position": int(row.position)}
        if match is not None:
            key = (str(match["payout_id"]), int(match["position"]))  # type: ignore[call-overload]
            used[key] = (str(row.reference), day)
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
    kinds, numbers = document_keys(items)
    at = _look_up(documents, kinds, numbers)
    found = at >= 0
    status = _take_text(documents["status"], at)
    total, paid = (_take_pennies(documents[name], at) for name in ("total", "paid"))
    paid_status = status.isin(list(PAID_STATUSES)).to_numpy(dtype=bool)
    paid = np.where((paid == 0) & paid_status, total, paid)
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
    pairs = {(str(r["payout_id"]), int(r["position"])): r for r in deductions.to_dict("records")}
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


def _text_column(count: int, texts: Mapping[int, str]) -> pd.api.extensions.ExtensionArray:
    """A text column of ``count`` lines, ``texts`` on the lines it names and "" elsewhere, built
    by Arrow (an object array of a year of mostly empty notes costs a conversion per line)."""
    indices = np.zeros(count, dtype=np.int32)
    indices[np.fromiter(texts, dtype=np.int64, count=len(texts))] = np.arange(1, len(texts) + 1)
    values = pa.array(["", *map(str, texts.values())], pa.large_string())
    column = pa.DictionaryArray.from_arrays(pa.array(indices), values).cast(pa.large_string())
    return pd.array(column, dtype="str")


def _at(column: pd.Series, rows: list[int]) -> list[object]:
    """``column``'s values at the positions ``rows``, as Python objects."""
    return column.iloc[rows].tolist() if rows else []


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
    # per payout).
    wanted = sorted(set(hits["payout_id"].astype(str)))
    first = pc.index_in(
        pa.array(wanted, pa.string()), value_set=pa.array(history["payout_id"], pa.string())
    ).to_numpy(zero_copy_only=False)
    references, days = history["reference"], history["arrival_date"]
    heads = {
        payout_id: (str(references.iat[int(row)]), days.iat[int(row)])
        for payout_id, row in zip(wanted, first, strict=True)
    }
    rows = items.groupby("payout_id", sort=False).indices  # payout: its items' positions in items
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
        mine = rows.get(paid_payout)
        if mine is None:
            continue
        for i in mine[positions[mine] == key[1]].tolist():
            reference, day = heads[str(by)]
            found[int(i)] = (
                f"its payment failed after it was paid out: deducted in payout "
                f"{reference} on {as_date(day)}"
            )
    return found


def _look_up(documents: pd.DataFrame, kinds: np.ndarray, numbers: pd.Series) -> np.ndarray:
    """Each item's row in ``documents`` (-1: the service does not hold it), by Arrow's hashed
    look-up per kind, not a merge of the frames."""
    at = np.full(len(numbers), -1, dtype=np.int64)
    for kind in (INVOICE, PAYMENT_REQUEST):
        mine = np.flatnonzero((documents["kind"] == kind).to_numpy(dtype=bool))
        chosen = np.flatnonzero(kinds == kind)
        if len(mine) and len(chosen):
            wanted = pa.array(numbers.iloc[chosen], pa.string())
            known = pa.array(documents["number"].iloc[mine], pa.string())
            hits = pc.fill_null(pc.index_in(wanted, value_set=known), -1).to_numpy()
            at[chosen[hits >= 0]] = mine[hits[hits >= 0]]
    return at


def _take_text(column: pd.Series, at: np.ndarray) -> pd.Series:
    """``column``'s values at ``at`` as text ("" where ``at`` is -1)."""
    values = pa.array(column.astype(str), pa.string())
    taken = pc.fill_null(values.take(pa.array(at, mask=at < 0)), "")
    return pd.Series(taken.to_pandas(), dtype="str").reset_index(drop=True)


def _take_pennies(column: pd.Series, at: np.ndarray) -> np.ndarray:
    """``column``'s pennies at ``at`` (0 where ``at`` is -1)."""
    values = column.to_numpy(dtype=np.int64)
    return np.where(at >= 0, values[np.where(at >= 0, at, 0)] if len(values) else 0, 0)


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

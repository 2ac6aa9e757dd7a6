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
# Working days a payment that failed after it was paid out may wait for its deduction: the
# service deducts it from the next payout whose payments cover it (docs/service.md §6 Payouts).
DEDUCTION_GRACE = 10


def _money(pennies: int) -> str:
    return f"£{abs(int(pennies)) // 100:,}.{abs(int(pennies)) % 100:02d}"


def pair_deductions(history: pd.DataFrame) -> pd.DataFrame:
    """Each deduction of ``history`` (items of every payout known, with ``reference`` and
    ``arrival_date``) with the payment it takes back: ``payout_id``, ``position`` of the
    deduction, then ``paid_payout``, ``paid_reference``, ``paid_date``, ``paid_position``,
    ``paid_payment`` and ``paid_amount`` of the payment line (empty where none is found)."""
    kinds, numbers = document_keys(history)
    kind = history["kind"].to_numpy(dtype=object)
    is_deduction = kind == DEDUCTION
    deductions = history[is_deduction].assign(doc=numbers[is_deduction])
    named = set(deductions["payment_id"]) - {""}
    # Only the payments a deduction can name (its payment id, or its document): sorting and
    # copying a year of payments to pair a few hundred deductions is most of the work.
    wanted = (kind == PAYMENT) & (
        history["payment_id"].isin(list(named)).to_numpy(dtype=bool)
        | pd.Series(numbers).isin(list(set(deductions["doc"]) - {""})).to_numpy(dtype=bool)
    )
    payments = (
        history[wanted]
        .assign(doc=numbers[wanted])
        .sort_values(["arrival_date", "payout_id", "position"])
    )
    paired: list[dict[str, object]] = []
    used: set[tuple[str, int]] = set()
    by_payment = {
        str(r["payment_id"]): r
        for r in payments[payments["payment_id"].isin(list(named))]
        .drop_duplicates("payment_id")
        .to_dict("records")
    }
    for row in deductions.itertuples(index=False):
        match = None
        if row.payment_id and str(row.payment_id) in by_payment:
            match = by_payment[str(row.payment_id)]
            key = (str(match["payout_id"]), int(match["position"]))
        if match is None and row.doc:
            same = payments[(payments["doc"] == row.doc) & (payments["amount"] == -row.amount)]
            for candidate in same.itertuples(index=False):
                key = (str(candidate.payout_id), int(candidate.position))
                if key not in used and as_date(candidate.arrival_date) <= as_date(row.arrival_date):
                    match = candidate._asdict()
                    break
        entry: dict[str, object] = {"payout_id": row.payout_id, "position": int(row.position)}
        if match is not None:
            used.add(key)
            entry.update(
                paid_payout=str(match["payout_id"]),
                paid_reference=str(match["reference"]),
                paid_date=as_date(match["arrival_date"]),
                paid_position=int(match["position"]),
                paid_payment=str(match["payment_id"]),
                paid_amount=int(match["amount"]),
            )
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
    work = items
    found, status, total, paid, updated = _look_up(documents, kinds, numbers)
    paid = np.where((paid == 0) & np.isin(status, PAID_STATUSES), total, paid)
    amount = work["amount"].to_numpy(dtype=np.int64)
    payment = (work["kind"] == PAYMENT).to_numpy()
    ok = payment & found & (amount <= paid)
    notes = np.full(len(work), "", dtype=object)
    taken_back = _taken_back(work, deductions, history)
    for i in np.flatnonzero(payment & ~ok | payment & taken_back.astype(bool)):
        number = str(numbers[i] or "(no number)")
        ok[i], notes[i] = _payment_verdict(
            number, int(amount[i]), found[i], status[i], paid[i], taken_back[i]
        )
        if not ok[i] and found[i] and not taken_back[i] and status[i] not in PAID_STATUSES:
            ok[i], notes[i] = _awaiting_deduction(number, status[i], updated[i], as_of, grace)
    for i in np.flatnonzero(payment & (work["payment_id"].isin(list(twice)).to_numpy())):
        ok[i] = False
        refs = ", ".join(twice[str(work["payment_id"].iat[i])])
        notes[i] = f"payment {work['payment_id'].iat[i]} is paid out by several payouts ({refs})"
    pairs = {(str(r["payout_id"]), int(r["position"])): r for r in deductions.to_dict("records")}
    for i in np.flatnonzero(~payment):
        key = (str(work["payout_id"].iat[i]), int(work["position"].iat[i]))
        number = str(numbers[i] or "(no number)")
        ok[i], notes[i] = _deduction_verdict(
            number, -int(amount[i]), pairs.get(key), found[i], status[i]
        )
    return items.assign(ok=ok, note=notes, doc=numbers, doc_status=status)


def _taken_back(work: pd.DataFrame, deductions: pd.DataFrame, history: pd.DataFrame) -> np.ndarray:
    """For each item, the note naming the deduction that took its payment back ("" if none)."""
    found = np.full(len(work), "", dtype=object)
    hits = deductions.dropna(subset=["paid_payout"])
    if hits.empty:
        return found
    heads = history.drop_duplicates("payout_id").set_index("payout_id")
    back = pd.DataFrame(
        {
            "payout_id": hits["paid_payout"].astype(str).to_numpy(),
            "position": hits["paid_position"].astype("int64").to_numpy(),
            "by": hits["payout_id"].astype(str).to_numpy(),
        }
    ).drop_duplicates(["payout_id", "position"])
    keys = work[["payout_id", "position"]].astype({"payout_id": str, "position": "int64"})
    joined = keys.merge(back, on=["payout_id", "position"], how="left")
    for i in np.flatnonzero(joined["by"].notna().to_numpy()):
        head = heads.loc[joined["by"].iat[i]]
        found[i] = (
            f"its payment failed after it was paid out: deducted in payout "
            f"{head['reference']} on {as_date(head['arrival_date'])}"
        )
    return found


def _look_up(
    documents: pd.DataFrame, kinds: np.ndarray, numbers: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each item's document as the service holds it: found, status, total and paid (pennies),
    the day it last changed. By Arrow's hashed look-up per kind, not a merge of the frames."""
    at = np.full(len(numbers), -1, dtype=np.int64)
    doc_kinds = documents["kind"].to_numpy(dtype=object)
    doc_numbers = documents["number"].to_numpy(dtype=object)
    for kind in (INVOICE, PAYMENT_REQUEST):
        mine, chosen = np.flatnonzero(doc_kinds == kind), np.flatnonzero(kinds == kind)
        if len(mine) and len(chosen):
            wanted = pa.array(numbers[chosen], pa.string())
            known = pa.array(doc_numbers[mine], pa.string())
            hits = pc.fill_null(pc.index_in(wanted, value_set=known), -1).to_numpy()
            at[chosen[hits >= 0]] = mine[hits[hits >= 0]]
    found = at >= 0

    def take(name: str, empty: object) -> np.ndarray:
        out = np.full(len(numbers), empty, dtype=object)
        out[found] = documents[name].to_numpy(dtype=object)[at[found]]
        return out

    total, paid = take("total", 0).astype(np.int64), take("paid", 0).astype(np.int64)
    return found, take("status", ""), total, paid, take("updated", None)


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

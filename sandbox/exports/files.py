"""What a finance team downloads: the payout export and the business bank account's statement.

``payouts_csv``: the console's payout export, one row per payout item, payouts by arrival date.

``bank_statement_csv``: the biller's business bank account, from the day the biller was created
(the account's opening) to ``to``, shown from ``from``, in one of :data:`bank_layouts.LAYOUTS`:

- every ``PAID`` payout as a Bacs credit from ADFIN carrying its bank reference;
- direct customer transfers: each sent invoice or standalone payment request that is not collected
  by direct debit has a fate drawn from (biller, document number): about 45 % are paid by bank
  transfer 2-35 days after they were sent, quoting the number the way people type it (exactly,
  lower case, with spaces, without the hyphen, with a typo, two invoices in one payment, a partial
  payment, an overpayment, no reference, or a longer reference cut at 18 characters as Faster
  Payments does);
- ordinary spending: rent, software, utilities, bank charges, fuel and supplies.

Everything is drawn with ``random.Random`` seeded from a SHA-256 of (biller id, date or document
number), and depends only on stored data and the sandbox's dates: the same data gives
byte-identical files whatever the day the export runs. A transfer is drawn from what does not
change once a document is sent (its number, amount, customer, send date), so importing those
payments afterwards does not rewrite past statements.
"""

from __future__ import annotations

import csv
import io
import random
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.exports import layouts as bl
from sandbox.exports.drafts import Draft, pounds_of, seeded_random
from sandbox.exports.layouts import Account, Txn
from sandbox.exports.spending import spending
from sandbox.models import Biller
from sandbox.models.billing import Customer, Invoice, PaymentRequest
from sandbox.models.payouts import Payout, PayoutItem

LONDON = ZoneInfo("Europe/London")
CENT = Decimal("0.01")
PAYOUTS_HEADER = [
    "Payout ID",
    "Bank reference",
    "Arrival date",
    "Payout amount",
    "Item type",
    "Invoice number",
    "Payment request number",
    "Payment ID",
    "Customer name",
    "Item amount",
]
FASTER_PAYMENTS_REFERENCE = 18
TRANSFER_SHARE = 0.45
STYLES = (
    "exact",
    "lower",
    "spaced",
    "no_hyphen",
    "typo",
    "two_in_one",
    "partial",
    "overpaid",
    "no_reference",
    "cut_at_18",
)


def _csv(rows: Iterator[list[str]], header: list[str] | None) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    if header is not None:
        writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


# --- payouts ----------------------------------------------------------------------------------


def payouts_csv(session: Session, biller_id: str, start: date, end: date) -> str:
    payouts = session.scalars(
        select(Payout)
        .where(
            Payout.biller_id == biller_id,
            Payout.arrival_date >= start,
            Payout.arrival_date <= end,
        )
        .order_by(Payout.arrival_date, Payout.reference)
    ).all()
    return _csv(
        (row for payout in payouts for row in _payout_rows(session, payout)), PAYOUTS_HEADER
    )


def _payout_rows(session: Session, payout: Payout) -> Iterator[list[str]]:
    items = session.scalars(
        select(PayoutItem).where(PayoutItem.payout_id == payout.id).order_by(PayoutItem.position)
    )
    for item in items:
        invoice = session.get(Invoice, item.invoice_id) if item.invoice_id else None
        pr = (
            session.get(PaymentRequest, item.payment_request_id)
            if item.payment_request_id
            else None
        )
        customer_id = pr.customer_id if pr else invoice.customer_id if invoice else None
        customer = session.get(Customer, customer_id) if customer_id else None
        yield [
            payout.id,
            payout.reference,
            payout.arrival_date.isoformat(),
            bl.money(payout.amount),
            item.type,
            invoice.invoice_no if invoice else "",
            pr.payment_request_no if pr else "",
            item.payment_id or "",
            customer.name if customer else "",
            bl.money(item.amount),
        ]


# --- bank statement ---------------------------------------------------------------------------


def bank_statement_csv(
    session: Session, biller: Biller, start: date, end: date, layout: bl.Layout
) -> str:
    account = account_of(biller)
    rows = statement(session, biller, start, end)
    return _csv((layout.render(txn, account) for txn in rows), layout.header)


def account_of(biller: Biller) -> Account:
    """The payout account the biller's details name (sort code, last 4), the rest drawn."""
    document = biller.document or {}
    accounts: list[dict[str, Any]] = document.get("bankAccounts") or []
    payout: dict[str, Any] = next((a for a in accounts if a.get("isPayoutAccount")), {})
    rng = seeded_random(biller.id, "account")
    sort_code = payout.get("sortCode") or "-".join(f"{rng.randint(0, 99):02d}" for _ in range(3))
    if re.fullmatch(r"\d{6}", sort_code):
        sort_code = f"{sort_code[:2]}-{sort_code[2:4]}-{sort_code[4:]}"
    last4 = payout.get("accountNumberLast4") or f"{rng.randint(0, 9999):04d}"
    number = f"{rng.randint(0, 9999):04d}{last4}"
    return Account(str(document.get("name") or "Business account"), sort_code, number)


def opened(biller: Biller) -> date:
    """The account's first day: the biller's creation date (London)."""
    return biller.created_at.astimezone(LONDON).date()


def statement(session: Session, biller: Biller, start: date, end: date) -> list[Txn]:
    """The lines from ``start`` to ``end`` with the running balance since the account opened."""
    first = opened(biller)
    payouts = _payouts_by_day(session, biller.id, end)
    transfers = _transfers_by_day(session, biller.id, end)
    balance = pounds_of(seeded_random(biller.id, "opening").randint(500_000, 2_500_000))
    lines: list[Txn] = []
    day = first
    while day <= end:
        drafts = payouts.get(day, []) + transfers.get(day, []) + spending(biller.id, day)
        for seq, draft in enumerate(drafts):
            balance += draft.amount
            if day >= start:
                lines.append(draft.line(biller.id, day, seq, balance))
        day += timedelta(days=1)
    return lines


def _payouts_by_day(session: Session, biller_id: str, end: date) -> dict[date, list[Draft]]:
    found: defaultdict[date, list[Draft]] = defaultdict(list)
    rows = session.scalars(
        select(Payout)
        .where(Payout.biller_id == biller_id, Payout.status == "PAID", Payout.arrival_date <= end)
        .order_by(Payout.arrival_date, Payout.reference)
    )
    for payout in rows:
        found[payout.arrival_date].append(
            Draft(bl.BACS_IN, "ADFIN", payout.reference, payout.amount, "PAYOUT", time(6, 0))
        )
    return found


# --- customer transfers -----------------------------------------------------------------------


@dataclass(frozen=True)
class Document:
    """A sent invoice or standalone payment request a customer may pay by bank transfer."""

    number: str
    customer: str
    amount: Decimal
    sent: date


def _natural(number: str) -> tuple[str, int]:
    found = re.match(r"^(.*?)(\d+)$", number)
    return (found.group(1), int(found.group(2))) if found else (number, -1)


def _documents(session: Session, biller_id: str) -> list[Document]:
    names: dict[str, str] = {
        str(customer_id): str(name)
        for customer_id, name in session.execute(
            select(Customer.id, Customer.name).where(Customer.biller_id == biller_id)
        ).all()
    }
    docs: list[Document] = []
    for invoice in session.scalars(select(Invoice).where(Invoice.biller_id == biller_id)):
        activation = (invoice.document or {}).get("activation") or {}
        sent = activation.get("activationTime")
        if sent and activation.get("collectionMethod") != "DIRECT_DEBIT_PAYMENT":
            day = datetime.fromisoformat(sent).astimezone(LONDON).date()
            docs.append(
                Document(invoice.invoice_no, names[invoice.customer_id], invoice.total_amount, day)
            )
    standalone = select(PaymentRequest).where(
        PaymentRequest.biller_id == biller_id, PaymentRequest.invoice_id.is_(None)
    )
    for pr in session.scalars(standalone):
        method = (pr.distribution or {}).get("collectionMethod")
        if pr.distribution_time is not None and method != "AUTO_COLLECT":
            day = pr.distribution_time.astimezone(LONDON).date()
            docs.append(
                Document(pr.payment_request_no, names[pr.customer_id], pr.total_amount, day)
            )
    docs.sort(key=lambda doc: _natural(doc.number))
    return [doc for doc in docs if doc.amount > 0]


def _transfers_by_day(session: Session, biller_id: str, end: date) -> dict[date, list[Draft]]:
    found: defaultdict[date, list[Draft]] = defaultdict(list)
    docs = _documents(session, biller_id)
    paired: set[str] = set()
    for index, doc in enumerate(docs):
        if doc.number in paired:
            continue
        rng = seeded_random(biller_id, "transfer", doc.number)
        if rng.random() >= TRANSFER_SHARE:
            continue
        day = doc.sent + timedelta(days=rng.randint(2, 35))
        style = rng.choice(STYLES)
        partner = _partner(docs, index, paired) if style == "two_in_one" else None
        if style == "two_in_one" and partner is None:
            style = "exact"
        if partner is not None:
            paired.add(partner.number)
        reference, amount = _quote(rng, doc, style, partner)
        at = time(rng.randint(7, 21), rng.randint(0, 59), rng.randint(0, 59))
        if day <= end:
            payer = doc.customer.upper()[:FASTER_PAYMENTS_REFERENCE]
            found[day].append(Draft(bl.FASTER_IN, payer, reference, amount, "INCOME", at))
    for drafts in found.values():
        drafts.sort(key=lambda draft: draft.at)
    return found


def _partner(docs: list[Document], index: int, paired: set[str]) -> Document | None:
    """The customer's next document, paid together with this one."""
    doc = docs[index]
    for other in docs[index + 1 :]:
        same_kind = _natural(other.number)[0] == _natural(doc.number)[0]
        if other.customer == doc.customer and same_kind and other.number not in paired:
            return other
    return None


def _typo(rng: random.Random, number: str) -> str:
    prefix, value = _natural(number)
    digits = str(value) if value >= 0 else ""
    if len(digits) >= 2:
        position = rng.randrange(len(digits) - 1)
        swapped = list(digits)
        swapped[position], swapped[position + 1] = swapped[position + 1], swapped[position]
        if swapped != list(digits):
            return prefix + "".join(swapped)
    letters = prefix.rstrip("-")
    return (letters[1] + letters[0] + letters[2:] if len(letters) >= 2 else letters) + number[
        len(letters) :
    ]


def _quote(
    rng: random.Random, doc: Document, style: str, partner: Document | None
) -> tuple[str, Decimal]:
    """The reference and amount a customer sends for ``doc`` in ``style``."""
    number, amount = doc.number, doc.amount
    if style == "lower":
        return number.lower(), amount
    if style == "spaced":
        return number.replace("-", " ").lower() if rng.random() < 0.5 else f" {number} ", amount
    if style == "no_hyphen":
        return number.replace("-", ""), amount
    if style == "typo":
        return _typo(rng, number), amount
    if style == "two_in_one" and partner is not None:
        return f"{number} {partner.number}", amount + partner.amount
    if style == "partial":
        pennies = int(amount * 100) * rng.randint(30, 70) // 100
        return number, pounds_of(max(pennies, 1))
    if style == "overpaid":
        return number, amount + pounds_of(rng.choice([50, 100, 500, 1000, 2000]))
    if style == "no_reference":
        return "", amount
    if style == "cut_at_18":
        return f"{doc.customer} {number}".upper()[:FASTER_PAYMENTS_REFERENCE], amount
    return number, amount

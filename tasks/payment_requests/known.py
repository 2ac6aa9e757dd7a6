"""What the biller's payment requests at the service look like, without listing them all each time.

The ledger keeps every payment request of the biller as the service last showed it (externalId,
reference, customer, description, amount, pay-by date, status, source). :func:`sync_known` brings
it up to date with one targeted query: the payment requests changed since the newest change seen
last time (``lastUpdatedStartTime``, a filter of the contract), less a small overlap so a write
committed a moment late is not missed. The first sync for a biller lists everything once; after
that, a sync costs what changed since the last one — an import syncs again when it has settled,
so the next import pays only for what others changed meanwhile. A small file therefore costs the
same on day 1 and day 1,000.

A file is then checked against these rows (:class:`KnownPaymentRequests`): references in use,
externalIds that exist (and their status), payment requests a full sync would delete.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from billing_api import BillingClient
from ledger import Ledger, PaymentRequestSeen
from tasks.payment_requests.jobs import LIST_PAGE_SIZE

STREAM = "payment_requests"
# A write stamped just before the newest change seen may commit just after the listing.
OVERLAP = timedelta(seconds=2)
BATCH = 1000
BULK_IMPORT_SOURCE = "BULK_IMPORT"
# What a full sync keeps (contract, bulk import: submitted or (partly) paid requests stay).
NOT_DELETABLE = frozenset({"SUBMITTED", "PAID", "SETTLED"})


def _pennies(amount: Decimal | None) -> int:
    return int((amount or Decimal(0)) * 100)


def seen_from(biller_id: str, request: object) -> PaymentRequestSeen:
    """One payment request of the client's answer, as the ledger keeps it."""
    customer = getattr(request, "customer", None)
    return PaymentRequestSeen(
        biller=biller_id,
        payment_request_id=str(getattr(request, "id")),  # noqa: B009 - any client model
        number=getattr(request, "payment_request_no", None),
        external_id=getattr(request, "external_id", None),
        reference=getattr(request, "reference", None),
        customer_id=getattr(customer, "id", None),
        description=getattr(request, "description", None),
        amount_pennies=_pennies(getattr(request, "total_amount", None)),
        paid_pennies=_pennies(getattr(request, "paid_amount", None)),
        pay_by_date=getattr(request, "pay_by_date", None),
        status=str(getattr(request, "status", "")),
        source=getattr(request, "source", None),
        last_updated=getattr(request, "last_updated_time", None)
        or getattr(request, "creation_time", None),
    )


def sync_known(client: BillingClient, ledger: Ledger, biller_id: str) -> int:
    """Bring the ledger's copy of the biller's payment requests up to date; returns how many
    payment requests the service listed."""
    mark = ledger.sync_mark(biller_id, STREAM)
    since = mark - OVERLAP if mark is not None else None
    newest = mark
    batch: list[PaymentRequestSeen] = []
    listed = 0
    for request in client.payment_requests.list(
        last_updated_start_time=since, page_size=LIST_PAGE_SIZE
    ):
        seen = seen_from(biller_id, request)
        batch.append(seen)
        listed += 1
        if seen.last_updated is not None and (newest is None or seen.last_updated > newest):
            newest = seen.last_updated
        if len(batch) >= BATCH:
            ledger.record_payment_requests(batch)
            batch = []
    ledger.record_payment_requests(batch)
    if newest is not None:
        ledger.set_sync_mark(biller_id, STREAM, newest)
    return listed


@dataclass
class KnownPaymentRequests:
    """The biller's payment requests the ledger knows, looked up by what a file's rows carry.

    Backed by the ledger (``ledger`` and ``biller``), or by a list (``listed``, for tests). A
    lookup of more keys than the ledger holds rows reads the biller's rows once instead.
    """

    ledger: Ledger | None = None
    biller: str = ""
    listed: Sequence[PaymentRequestSeen] = ()
    _all: list[PaymentRequestSeen] | None = field(default=None, init=False, repr=False)
    _count: int | None = field(default=None, init=False, repr=False)

    def _size(self) -> int:
        if self.ledger is None:
            return len(self.listed)
        if self._count is None:
            self._count = self.ledger.count_payment_requests_seen(self.biller)
        return self._count

    def _rows(self, column: str, wanted: Iterable[str]) -> list[PaymentRequestSeen]:
        if not self._size():  # a new biller: nothing to look up, however many keys
            return []
        keys = set(wanted)
        if not keys:
            return []
        if self.ledger is None:
            return [s for s in self.listed if getattr(s, column) in keys]
        if self._all is None and len(keys) > self._size():
            self._all = self.ledger.payment_requests_seen(self.biller)
        if self._all is not None:
            return [s for s in self._all if getattr(s, column) in keys]
        wanted = sorted(keys)
        if column == "external_id":
            return self.ledger.payment_requests_seen(self.biller, external_ids=wanted)
        if column == "reference":
            return self.ledger.payment_requests_seen(self.biller, references=wanted)
        return self.ledger.payment_requests_seen(self.biller, customer_ids=wanted)

    def by_external_id(self, external_ids: Iterable[str]) -> dict[str, PaymentRequestSeen]:
        """The payment request each of these externalIds names, where one does."""
        rows = self._rows("external_id", external_ids)
        return {s.external_id: s for s in rows if s.external_id}

    def by_reference(self, references: Iterable[str]) -> dict[str, list[PaymentRequestSeen]]:
        """The payment requests carrying each of these references."""
        found: dict[str, list[PaymentRequestSeen]] = {}
        for seen in self._rows("reference", references):
            if seen.reference:
                found.setdefault(seen.reference, []).append(seen)
        return found

    def imported_for(self, customer_ids: Iterable[str]) -> list[PaymentRequestSeen]:
        """The payment requests earlier imports made for these customers."""
        return [
            s
            for s in self._rows("customer_id", set(customer_ids))
            if s.source == BULK_IMPORT_SOURCE
        ]


def would_delete(
    ledger: Ledger, biller_id: str, listed_external_ids: Sequence[str]
) -> tuple[list[PaymentRequestSeen], list[PaymentRequestSeen]]:
    """What a full sync of a file listing these externalIds would delete, and what it would
    keep although missing (submitted or paid): the payment requests earlier imports made."""
    listed = set(listed_external_ids)
    deleted: list[PaymentRequestSeen] = []
    kept: list[PaymentRequestSeen] = []
    for seen in ledger.payment_requests_seen(biller_id, source=BULK_IMPORT_SOURCE):
        if not seen.external_id or seen.external_id in listed:
            continue
        keep = seen.status in NOT_DELETABLE or seen.paid_pennies > 0
        (kept if keep else deleted).append(seen)
    return deleted, kept

"""The ledger's webhook tables on SQLite and PostgreSQL: each event stored once, deliveries
counted, the outbox of events to emit, and the biller -> block directory."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest

from ledger import Ledger
from ledger.webhooks import NewWebhookEvent
from tests.support.ledger_db import FakeClock, clock, ledger_url  # noqa: F401 - fixtures


@pytest.fixture
def events_ledger(ledger_url: str, clock: FakeClock) -> Iterator[Ledger]:  # noqa: F811
    opened = Ledger(ledger_url, clock=clock)
    yield opened
    opened.close()


def event(key: str | None = None, biller: str = "b-1", **payload: object) -> NewWebhookEvent:
    event_id = key or str(uuid.uuid4())
    return NewWebhookEvent(
        dedup_key=f"event:{event_id}",
        event_id=event_id,
        biller_id=biller,
        kind="invoice",
        type="INVOICE_CREATED",
        payload={"eventId": event_id, "billerId": biller, "invoiceId": "i-1", **payload},
    )


def test_an_event_is_stored_once_and_its_deliveries_counted(
    events_ledger: Ledger,
    clock: FakeClock,  # noqa: F811
) -> None:
    first = events_ledger.store_webhook_event(event("e-1"))
    clock.advance(seconds=30)
    again = events_ledger.store_webhook_event(event("e-1"))
    assert (first.first, again.first) == (True, False)
    assert again.event.deliveries == 2
    assert again.event.received_at == first.event.received_at
    assert (again.event.last_delivery_at - first.event.received_at).total_seconds() == 30
    assert len(events_ledger.webhook_events()) == 1


def test_a_batch_stores_new_events_and_counts_repeats_in_and_across_batches(
    events_ledger: Ledger,
) -> None:
    old = event("old")
    events_ledger.store_webhook_events([old])
    new = event("new")
    stored = events_ledger.store_webhook_events([new, old, new, event("other"), old])
    assert [s.first for s in stored] == [True, False, False, True, False]
    by_key = {e.dedup_key: e.deliveries for e in events_ledger.webhook_events()}
    assert by_key == {"event:old": 3, "event:new": 2, "event:other": 1}
    assert events_ledger.store_webhook_events([]) == []


def test_the_outbox_hands_out_unemitted_events_oldest_first(
    events_ledger: Ledger,
    clock: FakeClock,  # noqa: F811
) -> None:
    keys = []
    for n in range(3):
        keys.append(events_ledger.store_webhook_event(event(f"o-{n}")).event.id)
        clock.advance(minutes=1)
    pending = events_ledger.webhook_events_to_emit(limit=2)
    assert [p.event_id for p in pending] == ["o-0", "o-1"]
    events_ledger.mark_webhook_events_emitted([p.id for p in pending])
    assert [p.event_id for p in events_ledger.webhook_events_to_emit()] == ["o-2"]
    events_ledger.mark_webhook_events_emitted([keys[0]])  # a replay emits it once more
    emitted = {e.event_id: e.emissions for e in events_ledger.webhook_events()}
    assert emitted == {"o-0": 2, "o-1": 1, "o-2": 0}
    since = events_ledger.webhook_events(since=clock.now - timedelta(minutes=1))
    assert [e.event_id for e in since] == ["o-2"]
    assert events_ledger.webhook_events(biller_id="nobody") == []
    events_ledger.mark_webhook_events_emitted([])


def test_bad_events_are_refused_before_anything_is_written(events_ledger: Ledger) -> None:
    with pytest.raises(ValueError, match="dedup_key must be 1-300 characters"):
        events_ledger.store_webhook_event(
            NewWebhookEvent("", None, "b", "invoice", "INVOICE_CREATED", {})
        )
    with pytest.raises(ValueError, match="webhook payload"):
        events_ledger.store_webhook_events([event("ok"), event("bad", amount=object())])
    assert events_ledger.webhook_events() == []


def test_two_writers_storing_one_event_store_it_once(ledger_url: str) -> None:  # noqa: F811
    ledgers = [Ledger(ledger_url) for _ in range(2)]
    results: list[bool] = []
    start = threading.Barrier(2)

    def store(ledger: Ledger) -> None:
        start.wait()
        for n in range(20):
            results.append(ledger.store_webhook_event(event(f"race-{n}")).first)

    threads = [threading.Thread(target=store, args=(ledger,)) for ledger in ledgers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = ledgers[0].webhook_events()
    for ledger in ledgers:
        ledger.close()
    assert len(stored) == 20 and all(e.deliveries == 2 for e in stored)
    assert results.count(True) == 20 and results.count(False) == 20


def test_the_biller_directory_is_upserted(events_ledger: Ledger) -> None:
    events_ledger.set_biller_block("b-1", "acme")
    events_ledger.set_biller_block("b-2", "beta")
    events_ledger.set_biller_block("b-1", "acme-ltd")
    assert events_ledger.biller_blocks() == {"b-1": "acme-ltd", "b-2": "beta"}
    with pytest.raises(ValueError, match="block must be a non-empty string"):
        events_ledger.set_biller_block("b-3", " ")

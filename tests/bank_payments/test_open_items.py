"""What is owed, fetched from the sandbox whole, then refreshed by what changed since: an invoice
paid meanwhile drops out, one sent meanwhile comes in, the rest is carried over."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from blocks import BillerCredentials
from tasks.bank_payments._owed import fetch_open_items, refresh_open_items
from tests.support.bank_statements import make_bank_biller
from tests.support.sandbox_admin import SandboxAdmin


def test_a_refresh_sees_what_was_paid_and_sent_since(prefect: None, admin: SandboxAdmin) -> None:
    biller = make_bank_biller(admin, seed=51, invoices=3, requests=1, customers=2)
    client = BillerCredentials.load_named(biller.block).get_client()
    try:
        asked = datetime.now(UTC) - timedelta(minutes=1)
        before = fetch_open_items(client)
        assert sorted(i.number for i in before) == sorted(biller.documents)
        paid = biller.documents["INV-2"]
        client.payments.import_payment(
            invoice_id=paid["id"], amount=Decimal(str(paid["dueAmount"])), reference="T-1"
        )
        part = biller.documents["INV-3"]
        client.payments.import_payment(
            invoice_id=part["id"], amount=Decimal("1.00"), reference="T-2"
        )
        item = {"description": "More", "quantity": 1, "unitAmount": 42, "taxRate": 0}
        made = client.invoices.create(customer=paid["customer"]["id"], items=[item])
        client.invoices.activate(str(made.id), collection_method="ONE_TIME_PAYMENT")

        after = refresh_open_items(client, before, asked)
    finally:
        client.close()

    by_number = {i.number: i for i in after}
    assert set(by_number) == set(biller.documents) - {"INV-2"} | {made.invoice_no}
    assert by_number["INV-3"].paid == 100 and by_number[made.invoice_no].due == 4200
    assert by_number["INV-1"] == next(i for i in before if i.number == "INV-1")

"""The open-items refresh (the flow a payment or invoice event starts) against the sandbox: it
keeps what the biller is owed in the ledger, and a second run sees an invoice paid meanwhile
drop out and one sent meanwhile come in."""

from __future__ import annotations

import httpx

from flows.open_items import refresh_open_items
from ledger import Ledger
from ledger.settings import BillopsSettings
from tests.support.bank_statements import make_bank_biller
from tests.support.sandbox_admin import SandboxAdmin

CARD = {
    "cardholder_name": "Jane Doe",
    "card_number": "4000 0566 5566 5556",
    "expiry": "03/30",
    "cvc": "737",
}


def snapshot_numbers(biller_id: str) -> set[str]:
    with Ledger(BillopsSettings().ledger_database_url, create=False) as ledger:
        latest = ledger.latest_open_items(biller_id)
    assert latest is not None, "no open-items snapshot was kept"
    return {item.number for item in latest.items}


def test_the_refresh_keeps_what_is_owed_and_follows_payments_and_new_invoices(
    prefect: None, admin: SandboxAdmin, ledger_home: object
) -> None:
    biller = make_bank_biller(admin, seed=18, invoices=3, requests=2, customers=2)
    try:
        state = refresh_open_items(biller.block, return_state=True)
        assert state.name == "Completed", state.message
        assert state.result() == 5
        assert "3 invoices, 2 payment requests" in str(state.message)
        assert snapshot_numbers(biller.biller_id) == set(biller.documents)

        # A customer pays one invoice by card; the biller sends another invoice.
        paid_number, paid = next((n, d) for n, d in biller.documents.items() if "invoiceNo" in d)
        link = paid["paymentRequests"][0]["paymentLink"]["url"]
        answer = httpx.post(link, data=CARD)
        assert answer.status_code in (200, 303), answer.text
        item = {"description": "More", "quantity": 1, "unitAmount": 80.0, "taxRate": 0}
        customer = paid["customer"]["id"]
        created = biller.api.post("/invoices", json={"customer": {"id": customer}, "items": [item]})
        assert created.status_code == 201, created.text
        sent = biller.api.put(
            f"/invoices/{created.json()['id']}:activate",
            json={"collectionMethod": "ONE_TIME_PAYMENT"},
        )
        assert sent.status_code == 200, sent.text

        again = refresh_open_items(biller.block, return_state=True)
        assert again.name == "Completed", again.message
        expected = set(biller.documents) - {paid_number} | {sent.json()["invoiceNo"]}
        assert snapshot_numbers(biller.biller_id) == expected
    finally:
        biller.api.close()

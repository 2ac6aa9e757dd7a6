"""Each resource group against the real sandbox through the client (``fixtures_resources.py``)."""

from __future__ import annotations

import time
from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from billing_api import types as t
from billing_api._auth import StaticTokenAuth
from billing_api._exceptions import NotFound
from tests.billing_api import fixtures_resources
from tests.billing_api.fixtures_resources import (
    Connected,
    add_card,
    drive,
    force_mandate,
    unique,
)
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_secret

biller = fixtures_resources.biller
WIDGET = {"description": "Widget", "quantity": 3, "unitAmount": Decimal("19.99"), "taxRate": 20}


def new_customer(client: Any, **fields: Any) -> t.Customer:
    people = [{"firstName": "Pat", "email": "pat@example.com"}]
    return client.customers.create(name=unique("Customer"), people=people, **fields)


def test_biller(sandbox: str, biller: Connected) -> None:
    def scenario(client: Any) -> None:
        me = client.biller.retrieve()
        website = f"https://{unique('site').replace(' ', '-')}.example.com"
        patch = [{"op": "replace", "path": "/website", "value": website}]
        changed = client.biller.update(patch)

        assert isinstance(me, t.Biller) and me.id == biller.biller_id
        assert changed.website == website

    drive(sandbox, biller.auth, scenario)


def test_customers_and_settings(sandbox: str, biller: Connected) -> None:
    def scenario(client: Any) -> None:
        created = new_customer(client, external_id=unique("EXT"))
        found = client.customers.retrieve(created.id, include_customer_financial_details=True)
        renamed = client.customers.update_by_id(created.id, name=unique("Renamed"))
        again = client.customers.update(created.id, name=renamed.name + " 2")
        listed = list(client.customers.list(search_text=again.name, page_size=5))
        payment = client.customers.upsert_payment_settings(
            created.id, paused_collection_methods=["ON_DEMAND"]
        )
        payment_read = client.customers.retrieve_payment_settings(created.id)
        workflow = client.customers.upsert_workflow_settings(created.id, reminders_enabled=False)
        workflow_read = client.customers.retrieve_workflow_settings(created.id)

        assert found.id == created.id and found.financial_details is not None
        assert again.name.endswith(" 2")
        assert [c.id for c in listed] == [created.id]
        assert payment.paused_collection_methods == [t.CollectionMethod.ON_DEMAND]
        assert payment_read.paused_collection_methods == ["ON_DEMAND"]
        assert workflow.reminders_enabled is False and workflow_read.customer_id == created.id

    drive(sandbox, biller.auth, scenario)


def test_autopilot_cards_and_mandates(sandbox: str, admin: SandboxAdmin, biller: Connected) -> None:
    def scenario(client: Any) -> None:
        customer = new_customer(client)
        settings = client.customer_autopilot_settings
        upserted = settings.upsert(customer.id, guidance="Be gentle.")
        read = settings.retrieve(customer.id)
        settings.delete(customer.id)

        card = add_card(admin, customer.id)
        cards = list(client.cards_on_file.list(customer.id))
        removed = client.cards_on_file.remove(customer.id, card["id"])
        asked = client.cards_on_file.request(customer.id, redirect_url="https://example.com/done")

        mandate = client.mandates.create(customer.id)
        same = client.mandates.retrieve(mandate.id)
        for_customer = list(client.mandates.list_for_customer(customer.id))
        searched = list(client.mandates.list(customer_id=customer.id))
        force_mandate(admin, customer.id, "ACTIVE")
        cancelled = client.mandates.cancel(mandate.id)
        reinstated = client.mandates.reinstate(mandate.id)

        assert upserted.settings.guidance == read.settings.guidance == "Be gentle."
        assert [c.id for c in cards] == [card["id"]] and cards[0].status == "ACTIVE"
        assert removed.status == t.CardOnFileStatus.REMOVED
        assert asked.customer_id == customer.id and asked.url
        assert same.id == mandate.id and isinstance(same.status, t.MandateStatus)
        assert [m.id for m in for_customer] == [m.id for m in searched] == [mandate.id]
        assert cancelled.status == "CANCELLED" and reinstated.status == "PENDING"

    drive(sandbox, biller.auth, scenario)


def test_invoices(sandbox: str, biller: Connected) -> None:
    def scenario(client: Any) -> None:
        customer = new_customer(client)
        invoice = client.invoices.create(
            customer=customer.id, items=[WIDGET], due_date=date(2030, 1, 31)
        )
        updated = client.invoices.update(invoice.id, items=[WIDGET, WIDGET], description="Two")
        preview = client.invoices.preview_instalments(
            invoice.id,
            cadence={
                "type": "INTERVAL",
                "timeUnit": "WEEK",
                "frequency": 2,
                "startDate": date(2031, 1, 1),
                "endDate": date(2031, 2, 26),
            },
        )
        pdf = client.invoices.retrieve_file(invoice.id)
        sent = client.invoices.activate(invoice.id, collection_method="ONE_TIME_PAYMENT")
        client.invoices.pause_collection(invoice.id, methods=["ON_DEMAND"])
        paused = client.invoices.retrieve(invoice.id)
        client.invoices.resume_collection(invoice.id, methods=["ON_DEMAND"])
        paid = client.invoices.mark_as_paid(invoice.id)
        other = client.invoices.create(customer=customer.id, items=[WIDGET])
        voided = client.invoices.void(other.id, reason="duplicate")
        listed = list(client.invoices.list(customer_id=customer.id, sort="invoiceNo,asc"))

        # 3 x 19.99 = 59.97 plus 20% tax 11.99 = 71.96, read from money strings.
        assert invoice.total_amount == Decimal("71.96") and invoice.status == t.InvoiceStatus.DRAFT
        assert updated.total_amount == Decimal("143.92") and updated.description == "Two"
        assert sum(i.amount for i in preview.instalments) == preview.amount == Decimal("143.92")
        assert pdf.startswith(b"%PDF")
        assert sent.status == "UNPAID" and paused.collection is not None
        assert paused.collection.is_paused(t.CollectionMethod.ON_DEMAND)
        assert paid.status == t.InvoiceStatus.PAID and voided.status == t.InvoiceStatus.VOID
        assert {i.id for i in listed} == {invoice.id, other.id}

    drive(sandbox, biller.auth, scenario)


def test_payment_requests_and_payments(
    sandbox: str, admin: SandboxAdmin, biller: Connected
) -> None:
    def scenario(client: Any) -> None:
        customer = new_customer(client)
        prs = client.payment_requests
        created = prs.create(customer=customer.id, description="Consulting", total_amount="100.50")
        updated = prs.update(created.id, description="Consulting+", total_amount=Decimal("120.25"))
        sent = prs.activate(created.id, collection_method="ONE_TIME_PAYMENT")
        prs.pause_collection(created.id, methods=["ON_DEMAND"])
        paused = prs.retrieve(created.id)
        prs.resume_collection(created.id, methods=["ON_DEMAND"])
        distributed = prs.update_distribution(
            payment_request_ids=[created.id], distribution={"customMessage": "Thanks"}
        )
        force_mandate(admin, customer.id, "ACTIVE")
        debit = prs.create(customer=customer.id, description="DD", total_amount=7)
        scheduled = prs.activate(debit.id, collection_method="DIRECT_DEBIT_PAYMENT")
        on_failure = prs.cancel_collection_on_failure(debit.id)
        paid = prs.mark_as_paid(created.id)
        second = prs.create(customer=customer.id, description="B", total_amount=5)
        voided = prs.void(second.id)
        third = prs.create(customer=customer.id, description="C", total_amount=6)
        with pytest.warns(DeprecationWarning, match="payment_requests.void") as warned:
            cancelled = prs.cancel(third.id)
        assert warned[0].filename == __file__  # points at the caller's line
        listed = list(prs.list(customer_id=customer.id, statuses=["VOID"]))

        invoice = client.invoices.create(customer=customer.id, items=[WIDGET])
        client.invoices.activate(invoice.id, collection_method="ONE_TIME_PAYMENT")
        imported = client.payments.import_payment(
            invoice_id=invoice.id, amount=Decimal("10.01"), reference=unique("BANK")
        )

        assert created.total_amount == Decimal("100.5") and updated.total_amount == Decimal(
            "120.25"
        )
        assert sent.status == t.PaymentRequestStatus.UNPAID
        assert paused.collection is not None and paused.collection.is_paused("ON_DEMAND")
        assert distributed.payment_requests[0].distribution.custom_message == "Thanks"
        assert scheduled.status == t.PaymentRequestStatus.SCHEDULED
        assert on_failure.cancel_collection_on_failure is True
        assert paid.status == "PAID" and voided.status == cancelled.status == "VOID"
        assert {p.id for p in listed} == {second.id, third.id}
        assert imported.payments[0].amount == Decimal("10.01")
        assert imported.payments[0].invoice_id == invoice.id

    drive(sandbox, biller.auth, scenario)


CSV_HEADER = (
    "externalId,customerExternalId,description,totalAmount,currencyCode,taxRate,reference,payByDate"
)


def test_bulk_import(sandbox: str, biller: Connected, tmp_path: Any) -> None:
    def scenario(client: Any) -> None:
        external = unique("CX").replace(" ", "-")
        new_customer(client, external_id=external)
        path = tmp_path / "june.csv"
        rows = [f"B-1,{external},June fees,120.50,GBP,20,R-1,2030-06-30", "B-2,nobody,x,1,,,,"]
        path.write_text("\n".join([CSV_HEADER, *rows]) + "\n", encoding="utf-8")
        job = client.payment_requests.bulk_import(path)
        for _ in range(200):  # the sandbox's worker processes jobs in the background
            job = client.payment_requests.retrieve_bulk_import(job.job_id)
            if job.is_finished:
                break
            time.sleep(0.05)
        items = list(client.payment_requests.list_bulk_import_items(job.job_id))

        assert job.file_name == path.name and job.collection_method == "NONE"
        assert job.status == t.BulkImportJobStatus.COMPLETED_WITH_ERRORS
        by_row = {item.external_id: item for item in items}
        assert by_row["B-1"].status == "CREATED" and by_row["B-1"].payment_request_id
        assert by_row["B-2"].status == "FAILED" and by_row["B-2"].errors

    drive(sandbox, biller.auth, scenario)


def test_schedules_catalogs_and_workflows(sandbox: str, biller: Connected) -> None:
    def scenario(client: Any) -> None:
        customer = new_customer(client)
        cadence = {"timeUnit": "MONTHS", "frequency": 1, "startDate": date(2030, 1, 31)}
        details = {"customer": {"id": customer.id}, "items": [WIDGET]}
        schedules = client.recurring_invoices
        plan = schedules.create(cadence=cadence, invoice_details=details)
        changed = schedules.update(
            plan.id, cadence=cadence, invoice_details={**details, "description": "X"}
        )
        active = schedules.activate(plan.id)
        stopped = schedules.cancel(plan.id)
        schedules.delete(schedules.create(cadence=cadence, invoice_details=details).id)

        pr_details = {
            "customer": {"id": customer.id},
            "amount": Decimal("1499.99"),
            "currencyCode": "GBP",
            "description": "Rent",
        }
        recurring = client.recurring_payment_requests
        rent = recurring.create(cadence=cadence, payment_request_details=pr_details)
        same = recurring.retrieve(rent.id)
        moved = recurring.update(
            rent.id, cadence={**cadence, "frequency": 2}, payment_request_details=pr_details
        )
        ended = recurring.cancel(rent.id)
        recurring.delete(rent.id)

        rates = list(client.catalogs.list_tax_rates(page_size=2))
        items = list(client.catalogs.list_items())
        workflow = client.workflows.upsert(
            name=unique("Late payers"),
            type="ONE_TIME_PAYMENT",
            events=[{"action": "SEND_EMAIL", "trigger": "AFTER_DUE", "offsetDays": 3}],
        )

        assert (
            plan.status == t.RecurringInvoiceStatus.DRAFT
            and changed.invoice_details.description == "X"
        )
        assert active.status == "ACTIVE" and stopped.status == "CANCELLED"
        assert same.payment_request_details.amount == Decimal("1499.99")
        assert moved.cadence.frequency == 2 and ended.status == "CANCELLED"
        assert len(rates) > 2 and all(isinstance(r.rate, Decimal) for r in rates)  # paged by 2
        assert all(isinstance(i, t.CatalogItem) for i in items)
        assert workflow.events[0].offset_days == 3
        with pytest.raises(NotFound):
            recurring.retrieve(rent.id)

    drive(sandbox, biller.auth, scenario)


def test_webhooks_and_oauth(sandbox: str, admin: SandboxAdmin) -> None:
    app = admin.create_app(unique("app"))
    platform = admin.platform_token(app)
    tokens = admin.connect_biller(unique("Biller"), app=app)

    def manage_webhooks(client: Any) -> None:
        hooks = client.webhooks
        hook = hooks.create(app.client_id, url="http://127.0.0.1:9/h", events=["invoice"])
        listed = hooks.list(app.client_id)
        same = hooks.retrieve(app.client_id, hook.id)
        changed = hooks.update(
            app.client_id, hook.id, url=hook.url, events=["invoice", "payment"], enabled=False
        )
        secret = hooks.generate_signing_secret(app.client_id)
        register_secret(secret.secret_key.get_secret_value())
        auth = hooks.set_target_auth(
            app.client_id, api_key_authentication={"headerKey": "x-api-key", "headerValue": "k"}
        )
        hooks.delete(app.client_id, hook.id)

        assert [h.id for h in listed] == [hook.id] and same.events == ["invoice"]
        assert changed.enabled is False and changed.events == ["invoice", "payment"]
        assert "*" in repr(secret) and len(secret.secret_key.get_secret_value()) > 20
        assert auth.status_code == "200"
        assert hooks.list(app.client_id) == []

    def authorize(client: Any) -> Any:
        granted = client.oauth.get_authorization(app.client_id)
        code = client.oauth.authorize(client_id=app.client_id, redirect_uri=app.redirect_uri)
        register_secret(code.code.get_secret_value())
        assert granted.authorized is True and granted.biller_id == tokens.biller_id
        return code

    def exchange(client: Any, code: Any) -> None:
        issued = client.oauth.token(
            grant_type="authorization_code",
            client_id=app.client_id,
            client_secret=app.client_secret,
            code=code.code,
            redirect_uri=app.redirect_uri,
        )
        register_secret(issued.access_token.get_secret_value())
        client.oauth.revoke(
            token=issued.refresh_token, client_id=app.client_id, client_secret=app.client_secret
        )
        assert issued.token_type.lower() == "bearer" and issued.expires_in > 0
        assert issued.access_token.get_secret_value() not in repr(issued)

    biller_auth = StaticTokenAuth(tokens.access_token)
    drive(sandbox, StaticTokenAuth(platform.access_token), manage_webhooks)
    code = drive(sandbox, biller_auth, authorize)
    drive(sandbox, biller_auth, lambda client: exchange(client, code))

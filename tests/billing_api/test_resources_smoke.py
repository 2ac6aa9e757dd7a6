"""Each resource group against the real sandbox, once with the blocking client and once with the
async one (the same scenario text drives both; see ``fixtures_resources.py``)."""

from __future__ import annotations

import asyncio
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
    collect,
    done,
    drive,
    force_mandate,
    unique,
)
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_secret

flavour = fixtures_resources.flavour
biller = fixtures_resources.biller
WIDGET = {"description": "Widget", "quantity": 3, "unitAmount": Decimal("19.99"), "taxRate": 20}


async def new_customer(client: Any, **fields: Any) -> t.Customer:
    people = [{"firstName": "Pat", "email": "pat@example.com"}]
    return await done(client.customers.create(name=unique("Customer"), people=people, **fields))


def test_biller(flavour: str, sandbox: str, biller: Connected) -> None:
    async def scenario(client: Any) -> None:
        me = await done(client.biller.retrieve())
        website = f"https://{flavour}.example.com"
        patch = [{"op": "replace", "path": "/website", "value": website}]
        changed = await done(client.biller.update(patch))

        assert isinstance(me, t.Biller) and me.id == biller.biller_id
        assert changed.website == website

    drive(flavour, sandbox, biller.auth, scenario)


def test_customers_and_settings(flavour: str, sandbox: str, biller: Connected) -> None:
    async def scenario(client: Any) -> None:
        created = await new_customer(client, external_id=unique("EXT"))
        found = await done(
            client.customers.retrieve(created.id, include_customer_financial_details=True)
        )
        renamed = await done(client.customers.update_by_id(created.id, name=unique("Renamed")))
        again = await done(client.customers.update(created.id, name=renamed.name + " 2"))
        listed = await collect(client.customers.list(search_text=again.name, page_size=5))
        payment = await done(
            client.customers.upsert_payment_settings(
                created.id, paused_collection_methods=["ON_DEMAND"]
            )
        )
        payment_read = await done(client.customers.retrieve_payment_settings(created.id))
        workflow = await done(
            client.customers.upsert_workflow_settings(created.id, reminders_enabled=False)
        )
        workflow_read = await done(client.customers.retrieve_workflow_settings(created.id))

        assert found.id == created.id and found.financial_details is not None
        assert again.name.endswith(" 2")
        assert [c.id for c in listed] == [created.id]
        assert payment.paused_collection_methods == [t.CollectionMethod.ON_DEMAND]
        assert payment_read.paused_collection_methods == ["ON_DEMAND"]
        assert workflow.reminders_enabled is False and workflow_read.customer_id == created.id

    drive(flavour, sandbox, biller.auth, scenario)


def test_autopilot_cards_and_mandates(
    flavour: str, sandbox: str, admin: SandboxAdmin, biller: Connected
) -> None:
    async def scenario(client: Any) -> None:
        customer = await new_customer(client)
        settings = client.customer_autopilot_settings
        upserted = await done(settings.upsert(customer.id, guidance="Be gentle."))
        read = await done(settings.retrieve(customer.id))
        await done(settings.delete(customer.id))

        card = add_card(admin, customer.id)
        cards = await collect(client.cards_on_file.list(customer.id))
        removed = await done(client.cards_on_file.remove(customer.id, card["id"]))
        asked = await done(
            client.cards_on_file.request(customer.id, redirect_url="https://example.com/done")
        )

        mandate = await done(client.mandates.create(customer.id))
        same = await done(client.mandates.retrieve(mandate.id))
        for_customer = await collect(client.mandates.list_for_customer(customer.id))
        searched = await collect(client.mandates.list(customer_id=customer.id))
        force_mandate(admin, customer.id, "ACTIVE")
        cancelled = await done(client.mandates.cancel(mandate.id))
        reinstated = await done(client.mandates.reinstate(mandate.id))

        assert upserted.settings.guidance == read.settings.guidance == "Be gentle."
        assert [c.id for c in cards] == [card["id"]] and cards[0].status == "ACTIVE"
        assert removed.status == t.CardOnFileStatus.REMOVED
        assert asked.customer_id == customer.id and asked.url
        assert same.id == mandate.id and isinstance(same.status, t.MandateStatus)
        assert [m.id for m in for_customer] == [m.id for m in searched] == [mandate.id]
        assert cancelled.status == "CANCELLED" and reinstated.status == "PENDING"

    drive(flavour, sandbox, biller.auth, scenario)


def test_invoices(flavour: str, sandbox: str, biller: Connected) -> None:
    async def scenario(client: Any) -> None:
        customer = await new_customer(client)
        invoice = await done(
            client.invoices.create(customer=customer.id, items=[WIDGET], due_date=date(2030, 1, 31))
        )
        updated = await done(
            client.invoices.update(invoice.id, items=[WIDGET, WIDGET], description="Two")
        )
        preview = await done(
            client.invoices.preview_instalments(
                invoice.id,
                cadence={
                    "type": "INTERVAL",
                    "timeUnit": "WEEK",
                    "frequency": 2,
                    "startDate": date(2031, 1, 1),
                    "endDate": date(2031, 2, 26),
                },
            )
        )
        pdf = await done(client.invoices.retrieve_file(invoice.id))
        sent = await done(
            client.invoices.activate(invoice.id, collection_method="ONE_TIME_PAYMENT")
        )
        await done(client.invoices.pause_collection(invoice.id, methods=["ON_DEMAND"]))
        paused = await done(client.invoices.retrieve(invoice.id))
        await done(client.invoices.resume_collection(invoice.id, methods=["ON_DEMAND"]))
        paid = await done(client.invoices.mark_as_paid(invoice.id))
        other = await done(client.invoices.create(customer=customer.id, items=[WIDGET]))
        voided = await done(client.invoices.void(other.id, reason="duplicate"))
        listed = await collect(client.invoices.list(customer_id=customer.id, sort="invoiceNo,asc"))

        # 3 x 19.99 = 59.97 plus 20% tax 11.99 = 71.96, read from money strings.
        assert invoice.total_amount == Decimal("71.96") and invoice.status == t.InvoiceStatus.DRAFT
        assert updated.total_amount == Decimal("143.92") and updated.description == "Two"
        assert sum(i.amount for i in preview.instalments) == preview.amount == Decimal("143.92")
        assert pdf.startswith(b"%PDF")
        assert sent.status == "UNPAID" and paused.collection is not None
        assert paused.collection.is_paused(t.CollectionMethod.ON_DEMAND)
        assert paid.status == t.InvoiceStatus.PAID and voided.status == t.InvoiceStatus.VOID
        assert {i.id for i in listed} == {invoice.id, other.id}

    drive(flavour, sandbox, biller.auth, scenario)


def test_payment_requests_and_payments(
    flavour: str, sandbox: str, admin: SandboxAdmin, biller: Connected
) -> None:
    async def scenario(client: Any) -> None:
        customer = await new_customer(client)
        prs = client.payment_requests
        created = await done(
            prs.create(customer=customer.id, description="Consulting", total_amount="100.50")
        )
        updated = await done(
            prs.update(created.id, description="Consulting+", total_amount=Decimal("120.25"))
        )
        sent = await done(prs.activate(created.id, collection_method="ONE_TIME_PAYMENT"))
        await done(prs.pause_collection(created.id, methods=["ON_DEMAND"]))
        paused = await done(prs.retrieve(created.id))
        await done(prs.resume_collection(created.id, methods=["ON_DEMAND"]))
        distributed = await done(
            prs.update_distribution(
                payment_request_ids=[created.id], distribution={"customMessage": "Thanks"}
            )
        )
        force_mandate(admin, customer.id, "ACTIVE")
        debit = await done(prs.create(customer=customer.id, description="DD", total_amount=7))
        scheduled = await done(prs.activate(debit.id, collection_method="DIRECT_DEBIT_PAYMENT"))
        on_failure = await done(prs.cancel_collection_on_failure(debit.id))
        paid = await done(prs.mark_as_paid(created.id))
        second = await done(prs.create(customer=customer.id, description="B", total_amount=5))
        voided = await done(prs.void(second.id))
        third = await done(prs.create(customer=customer.id, description="C", total_amount=6))
        # The async flavour warns when the call runs (awaited), the blocking one at once.
        with pytest.warns(DeprecationWarning, match="payment_requests.void") as warned:
            if flavour == "async":
                cancelled = await prs.cancel(third.id)
            else:
                cancelled = prs.cancel(third.id)
        assert warned[0].filename == __file__  # points at the caller's line
        listed = await collect(prs.list(customer_id=customer.id, statuses=["VOID"]))

        invoice = await done(client.invoices.create(customer=customer.id, items=[WIDGET]))
        await done(client.invoices.activate(invoice.id, collection_method="ONE_TIME_PAYMENT"))
        imported = await done(
            client.payments.import_payment(
                invoice_id=invoice.id, amount=Decimal("10.01"), reference=unique("BANK")
            )
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

    drive(flavour, sandbox, biller.auth, scenario)


CSV_HEADER = (
    "externalId,customerExternalId,description,totalAmount,currencyCode,taxRate,reference,payByDate"
)


def test_bulk_import(flavour: str, sandbox: str, biller: Connected, tmp_path: Any) -> None:
    async def scenario(client: Any) -> None:
        external = unique("CX").replace(" ", "-")
        await new_customer(client, external_id=external)
        path = tmp_path / f"june-{flavour}.csv"
        rows = [f"B-1,{external},June fees,120.50,GBP,20,R-1,2030-06-30", "B-2,nobody,x,1,,,,"]
        path.write_text("\n".join([CSV_HEADER, *rows]) + "\n", encoding="utf-8")
        job = await done(client.payment_requests.bulk_import(path))
        for _ in range(200):  # the sandbox's worker processes jobs in the background
            job = await done(client.payment_requests.retrieve_bulk_import(job.job_id))
            if job.is_finished:
                break
            await asyncio.sleep(0.05)
        items = await collect(client.payment_requests.list_bulk_import_items(job.job_id))

        assert job.file_name == path.name and job.collection_method == "NONE"
        assert job.status == t.BulkImportJobStatus.COMPLETED_WITH_ERRORS
        by_row = {item.external_id: item for item in items}
        assert by_row["B-1"].status == "CREATED" and by_row["B-1"].payment_request_id
        assert by_row["B-2"].status == "FAILED" and by_row["B-2"].errors

    drive(flavour, sandbox, biller.auth, scenario)


def test_schedules_catalogs_and_workflows(flavour: str, sandbox: str, biller: Connected) -> None:
    async def scenario(client: Any) -> None:
        customer = await new_customer(client)
        cadence = {"timeUnit": "MONTHS", "frequency": 1, "startDate": date(2030, 1, 31)}
        details = {"customer": {"id": customer.id}, "items": [WIDGET]}
        schedules = client.recurring_invoices
        plan = await done(schedules.create(cadence=cadence, invoice_details=details))
        changed = await done(
            schedules.update(
                plan.id, cadence=cadence, invoice_details={**details, "description": "X"}
            )
        )
        active = await done(schedules.activate(plan.id))
        stopped = await done(schedules.cancel(plan.id))
        await done(
            schedules.delete(
                (await done(schedules.create(cadence=cadence, invoice_details=details))).id
            )
        )

        pr_details = {
            "customer": {"id": customer.id},
            "amount": Decimal("1499.99"),
            "currencyCode": "GBP",
            "description": "Rent",
        }
        recurring = client.recurring_payment_requests
        rent = await done(recurring.create(cadence=cadence, payment_request_details=pr_details))
        same = await done(recurring.retrieve(rent.id))
        moved = await done(
            recurring.update(
                rent.id, cadence={**cadence, "frequency": 2}, payment_request_details=pr_details
            )
        )
        ended = await done(recurring.cancel(rent.id))
        await done(recurring.delete(rent.id))

        rates = await collect(client.catalogs.list_tax_rates(page_size=2))
        items = await collect(client.catalogs.list_items())
        workflow = await done(
            client.workflows.upsert(
                name=unique("Late payers"),
                type="ONE_TIME_PAYMENT",
                events=[{"action": "SEND_EMAIL", "trigger": "AFTER_DUE", "offsetDays": 3}],
            )
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
            await done(recurring.retrieve(rent.id))

    drive(flavour, sandbox, biller.auth, scenario)


def test_webhooks_and_oauth(flavour: str, sandbox: str, admin: SandboxAdmin) -> None:
    app = admin.create_app(unique("app"))
    platform = admin.platform_token(app)
    tokens = admin.connect_biller(unique("Biller"), app=app)

    async def manage_webhooks(client: Any) -> None:
        hooks = client.webhooks
        hook = await done(
            hooks.create(app.client_id, url="http://127.0.0.1:9/h", events=["invoice"])
        )
        listed = await done(hooks.list(app.client_id))
        same = await done(hooks.retrieve(app.client_id, hook.id))
        changed = await done(
            hooks.update(
                app.client_id, hook.id, url=hook.url, events=["invoice", "payment"], enabled=False
            )
        )
        secret = await done(hooks.generate_signing_secret(app.client_id))
        register_secret(secret.secret_key.get_secret_value())
        auth = await done(
            hooks.set_target_auth(
                app.client_id, api_key_authentication={"headerKey": "x-api-key", "headerValue": "k"}
            )
        )
        await done(hooks.delete(app.client_id, hook.id))

        assert [h.id for h in listed] == [hook.id] and same.events == ["invoice"]
        assert changed.enabled is False and changed.events == ["invoice", "payment"]
        assert "*" in repr(secret) and len(secret.secret_key.get_secret_value()) > 20
        assert auth.status_code == "200"
        assert await done(hooks.list(app.client_id)) == []

    async def authorize(client: Any) -> Any:
        granted = await done(client.oauth.get_authorization(app.client_id))
        code = await done(
            client.oauth.authorize(client_id=app.client_id, redirect_uri=app.redirect_uri)
        )
        register_secret(code.code.get_secret_value())
        assert granted.authorized is True and granted.biller_id == tokens.biller_id
        return code

    async def exchange(client: Any, code: Any) -> None:
        issued = await done(
            client.oauth.token(
                grant_type="authorization_code",
                client_id=app.client_id,
                client_secret=app.client_secret,
                code=code.code,
                redirect_uri=app.redirect_uri,
            )
        )
        register_secret(issued.access_token.get_secret_value())
        await done(
            client.oauth.revoke(
                token=issued.refresh_token, client_id=app.client_id, client_secret=app.client_secret
            )
        )
        assert issued.token_type.lower() == "bearer" and issued.expires_in > 0
        assert issued.access_token.get_secret_value() not in repr(issued)

    biller_auth = StaticTokenAuth(tokens.access_token)
    drive(flavour, sandbox, StaticTokenAuth(platform.access_token), manage_webhooks)
    code = drive(flavour, sandbox, biller_auth, authorize)
    drive(flavour, sandbox, biller_auth, lambda client: exchange(client, code))

"""The client: :class:`BillingClient` (blocking, for synchronous Prefect tasks), one namespace per
contract tag::

    with BillingClient("https://api.adfin.com/api", auth) as client:
        invoice = client.invoices.retrieve(invoice_id)
        client.invoices.pause_collection(invoice.id, methods=["AUTO_COLLECT"])
        for request in client.payment_requests.list(statuses=["UNPAID"]):
            ...

Method names are the contract's ``x-method`` in the namespace of its tag; transport, retries
and typed errors come from :mod:`billing_api._base_client`.
"""

from __future__ import annotations

from functools import cached_property

from billing_api._base_client import SyncAPIClient
from billing_api.resources import (
    BillerResource,
    CardsOnFile,
    Catalogs,
    CustomerAutopilotSettings,
    Customers,
    Invoices,
    Mandates,
    OAuth,
    PaymentRequests,
    Payments,
    RecurringInvoices,
    RecurringPaymentRequests,
    Webhooks,
    Workflows,
)

__all__ = ["BillingClient"]


class BillingClient(SyncAPIClient):
    """Blocking client of the service; see :class:`SyncAPIClient` for the constructor."""

    @cached_property
    def oauth(self) -> OAuth:
        """Token, revoke, app authorization (tag ``oauth``)."""
        return OAuth(self)

    @cached_property
    def biller(self) -> BillerResource:
        """The authenticated biller (tag ``biller``)."""
        return BillerResource(self)

    @cached_property
    def customers(self) -> Customers:
        """Customers and their settings (tag ``customers``)."""
        return Customers(self)

    @cached_property
    def customer_autopilot_settings(self) -> CustomerAutopilotSettings:
        """AI collections guidance per customer (tag ``customer_autopilot_settings``)."""
        return CustomerAutopilotSettings(self)

    @cached_property
    def cards_on_file(self) -> CardsOnFile:
        """Saved cards (tag ``cards_on_file``)."""
        return CardsOnFile(self)

    @cached_property
    def mandates(self) -> Mandates:
        """Direct-debit mandates (tag ``mandates``)."""
        return Mandates(self)

    @cached_property
    def invoices(self) -> Invoices:
        """Invoices (tag ``invoices``)."""
        return Invoices(self)

    @cached_property
    def recurring_invoices(self) -> RecurringInvoices:
        """Invoice schedules (tag ``recurring_invoices``)."""
        return RecurringInvoices(self)

    @cached_property
    def payment_requests(self) -> PaymentRequests:
        """Payment requests and bulk import (tag ``payment_requests``)."""
        return PaymentRequests(self)

    @cached_property
    def recurring_payment_requests(self) -> RecurringPaymentRequests:
        """Payment-request schedules (tag ``recurring_payment_requests``)."""
        return RecurringPaymentRequests(self)

    @cached_property
    def payments(self) -> Payments:
        """Payment import (tag ``payments``)."""
        return Payments(self)

    @cached_property
    def catalogs(self) -> Catalogs:
        """Tax rates and catalogue items (tag ``catalogs``)."""
        return Catalogs(self)

    @cached_property
    def workflows(self) -> Workflows:
        """Workflow configurations (tag ``workflows``)."""
        return Workflows(self)

    @cached_property
    def webhooks(self) -> Webhooks:
        """Webhook subscriptions; needs a platform token (tag ``webhooks``)."""
        return Webhooks(self)

"""One namespace per contract tag, in a blocking and an async flavour (``client.<tag>``).

Each module builds its operations' requests once (plain builder functions) and derives both
flavours from them; see :mod:`billing_api.resources._core`.
"""

from billing_api.resources.biller import AsyncBillerResource, BillerResource
from billing_api.resources.cards_on_file import AsyncCardsOnFile, CardsOnFile
from billing_api.resources.catalogs import AsyncCatalogs, Catalogs
from billing_api.resources.customer_autopilot_settings import (
    AsyncCustomerAutopilotSettings,
    CustomerAutopilotSettings,
)
from billing_api.resources.customers import AsyncCustomers, Customers
from billing_api.resources.invoices import AsyncInvoices, Invoices
from billing_api.resources.mandates import AsyncMandates, Mandates
from billing_api.resources.oauth import AsyncOAuth, OAuth
from billing_api.resources.payment_requests import AsyncPaymentRequests, PaymentRequests
from billing_api.resources.payments import AsyncPayments, Payments
from billing_api.resources.recurring_invoices import AsyncRecurringInvoices, RecurringInvoices
from billing_api.resources.recurring_payment_requests import (
    AsyncRecurringPaymentRequests,
    RecurringPaymentRequests,
)
from billing_api.resources.webhooks import AsyncWebhooks, Webhooks
from billing_api.resources.workflows import AsyncWorkflows, Workflows

__all__ = [
    "AsyncBillerResource",
    "AsyncCardsOnFile",
    "AsyncCatalogs",
    "AsyncCustomerAutopilotSettings",
    "AsyncCustomers",
    "AsyncInvoices",
    "AsyncMandates",
    "AsyncOAuth",
    "AsyncPaymentRequests",
    "AsyncPayments",
    "AsyncRecurringInvoices",
    "AsyncRecurringPaymentRequests",
    "AsyncWebhooks",
    "AsyncWorkflows",
    "BillerResource",
    "CardsOnFile",
    "Catalogs",
    "CustomerAutopilotSettings",
    "Customers",
    "Invoices",
    "Mandates",
    "OAuth",
    "PaymentRequests",
    "Payments",
    "RecurringInvoices",
    "RecurringPaymentRequests",
    "Webhooks",
    "Workflows",
]

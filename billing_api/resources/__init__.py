"""One namespace per contract tag (``client.<tag>``).

Each module builds its operations' requests with plain builder functions and binds them as
methods; see :mod:`billing_api.resources._core`.
"""

from billing_api.resources.biller import BillerResource
from billing_api.resources.cards_on_file import CardsOnFile
from billing_api.resources.catalogs import Catalogs
from billing_api.resources.customer_autopilot_settings import CustomerAutopilotSettings
from billing_api.resources.customers import Customers
from billing_api.resources.invoices import Invoices
from billing_api.resources.mandates import Mandates
from billing_api.resources.oauth import OAuth
from billing_api.resources.payment_requests import PaymentRequests
from billing_api.resources.payments import Payments
from billing_api.resources.recurring_invoices import RecurringInvoices
from billing_api.resources.recurring_payment_requests import RecurringPaymentRequests
from billing_api.resources.webhooks import Webhooks
from billing_api.resources.workflows import Workflows

__all__ = [
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

"""Every table of the sandbox, registered on one ``Base.metadata`` by importing this package.

One module per part of the service; code imports the tables from here (``from sandbox.models
import Invoice``), so a table is always registered before ``create_all`` runs.
"""

from sandbox.models.auth import AccessToken, App, AuthorizationCode, Biller, Grant, RefreshToken
from sandbox.models.base import Base, DecimalText, Money, UtcDateTime
from sandbox.models.billing import Customer, Invoice, Mandate, Payment, PaymentRequest, Sequence
from sandbox.models.customers import (
    AutopilotSettings,
    CardOnFile,
    CardOnFileRequest,
    CatalogItem,
    TaxRate,
    Workflow,
)
from sandbox.models.imports import BulkImportItem, BulkImportJob
from sandbox.models.payouts import Payout, PayoutItem
from sandbox.models.sandbox_state import Counter, StateEntry
from sandbox.models.schedules import Schedule
from sandbox.models.webhooks import (
    AppWebhookSettings,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEvent,
)

__all__ = [
    "AccessToken",
    "App",
    "AppWebhookSettings",
    "AuthorizationCode",
    "AutopilotSettings",
    "Base",
    "Biller",
    "BulkImportItem",
    "BulkImportJob",
    "CardOnFile",
    "CardOnFileRequest",
    "CatalogItem",
    "Counter",
    "Customer",
    "DecimalText",
    "Grant",
    "Invoice",
    "Mandate",
    "Money",
    "Payment",
    "PaymentRequest",
    "Payout",
    "PayoutItem",
    "RefreshToken",
    "Schedule",
    "Sequence",
    "StateEntry",
    "TaxRate",
    "UtcDateTime",
    "Webhook",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEvent",
    "Workflow",
]

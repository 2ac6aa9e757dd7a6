"""Signing a mandate on its hosted page: the bank details a person types, checked, and the
CREATED → PENDING move.

The page (:mod:`sandbox.routes.pages`) only renders; the rules live here. Which documented test
account signed is kept on the mandate (``test_account_kind``) for the simulation, which later
moves it PENDING → ACTIVE and decides the fate of its collections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from sandbox.customers import mandates
from sandbox.models.billing import Mandate
from sandbox.pages.test_accounts import bank_account_kind, masked_account_number
from sandbox.webhooks import events

HOLDER_MAX = 100
_SORT_CODE = re.compile(r"^(\d{2})[- ]?(\d{2})[- ]?(\d{2})$")
_ACCOUNT_NUMBER = re.compile(r"^\d{8}$")


@dataclass(frozen=True)
class BankDetails:
    holder: str
    sort_code: str  # normalised to NN-NN-NN
    account_number: str  # 8 digits


def parse_bank_details(
    holder: str, sort_code: str, account_number: str, confirmed: bool
) -> BankDetails | dict[str, str]:
    """The checked details, or the error of each bad field (keyed by form field name)."""
    errors: dict[str, str] = {}
    holder = " ".join(holder.split())
    if not holder:
        errors["account_holder"] = "Enter the account holder's name."
    elif len(holder) > HOLDER_MAX:
        errors["account_holder"] = f"The name can be at most {HOLDER_MAX} characters."
    elif not any(c.isalpha() for c in holder):
        errors["account_holder"] = "The name must contain letters."
    code = _SORT_CODE.match(sort_code.strip())
    if code is None:
        errors["sort_code"] = "Enter the sort code as six digits, like 10-88-00."
    number = account_number.replace(" ", "")
    if not _ACCOUNT_NUMBER.match(number):
        errors["account_number"] = "Enter the account number as eight digits, like 00012345."
    if not confirmed:
        errors["confirm"] = (
            "Confirm that you are the account holder and the only person needed to authorise "
            "debits from this account."
        )
    if errors or code is None:
        return errors
    return BankDetails(holder, "-".join(code.groups()), number)


class NotSignable(Exception):
    """The mandate is past CREATED (signed already, cancelled, migrating)."""

    def __init__(self, mandate: Mandate) -> None:
        super().__init__(explain_state(mandate))


def explain_state(mandate: Mandate) -> str:
    """Why a mandate that is not CREATED cannot be signed, in words for the payer."""
    if mandate.status in ("PENDING", "ACTIVE"):
        return "This Direct Debit mandate has already been signed. Nothing more is needed."
    if mandate.status == "CANCELLED":
        return "This Direct Debit mandate has been cancelled and can no longer be signed."
    return "This Direct Debit mandate is being migrated and cannot be signed now."


def sign(session: Session, mandate: Mandate, details: BankDetails, now: datetime) -> Mandate:
    """CREATED → PENDING (awaiting the bank): authorisation time, masked account number, and
    the test-account kind; emits DIRECT_DEBIT_MANDATE_SIGNED. Raises :class:`NotSignable` for
    any other status."""
    if mandate.status != "CREATED":
        raise NotSignable(mandate)
    mandates.set_status(
        mandate,
        "PENDING",
        "PENDING_ACTIVATION",
        now,
        bank_account_number=masked_account_number(details.account_number),
    )
    mandate.authorisation_time = now
    mandate.test_account_kind = bank_account_kind(details.sort_code, details.account_number)
    events.emit(
        session,
        biller_id=mandate.biller_id,
        kind="dd-mandate",
        type="DIRECT_DEBIT_MANDATE_SIGNED",
        ids={"customerId": mandate.customer_id, "directDebitMandateId": mandate.id},
    )
    return mandate

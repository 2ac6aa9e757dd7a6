"""Simulation step: mandates (see sandbox/simulation/clock.py; contract ``MandateStatus``).

On each working day:

- a mandate signed on the authorisation page (PENDING, with a documented test-account kind)
  becomes ACTIVE 3 working days after it was signed (``authorisationTime``), or after it was
  reinstated; DIRECT_DEBIT_MANDATE_ACTIVE;
- an ACTIVE mandate signed with the ``PAYER_CANCELS`` account is cancelled by the payer
  (``INSTRUCTION_CANCELLED_BY_PAYER``) 10 working days after it became active
  (``submissionTime``, which activation sets); DIRECT_DEBIT_MANDATE_CANCELLED.

Mandates nobody signed on the page (``test_account_kind`` null: created by the API and forced
by the admin endpoint, or seeded) are left as they are.
"""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.core.working_days import add_working_days, is_working_day
from sandbox.customers import mandates
from sandbox.models.billing import Mandate
from sandbox.pages.test_accounts import PAYER_CANCELS
from sandbox.webhooks import events

ACTIVATION_DELAY = 3  # working days from signature to the bank's confirmation [C: about 3]
PAYER_CANCELS_AFTER = 10  # working days from activation to the payer's cancellation
LONDON = ZoneInfo("Europe/London")


def _london_day(moment: datetime) -> date:
    return moment.astimezone(LONDON).date()


def run_day(session: Session, day: date, moment: datetime) -> None:
    """Activate the signed mandates whose day has come, then cancel the payer-cancelled ones."""
    if not is_working_day(day):
        return
    pending = session.scalars(
        select(Mandate)
        .where(Mandate.status == "PENDING", Mandate.test_account_kind.is_not(None))
        .order_by(Mandate.created_at, Mandate.id)
    ).all()
    for mandate in pending:
        if day >= activation_day(mandate):
            mandates.set_status(mandate, "ACTIVE", None, moment)
            mandate.submission_time = moment  # also when reinstated: activation starts anew
            events.mandate_event(session, mandate, "DIRECT_DEBIT_MANDATE_ACTIVE")
    session.flush()
    active = session.scalars(
        select(Mandate)
        .where(Mandate.status == "ACTIVE", Mandate.test_account_kind == PAYER_CANCELS)
        .order_by(Mandate.created_at, Mandate.id)
    ).all()
    for mandate in active:
        since = mandate.submission_time or mandate.updated_at
        if day >= add_working_days(_london_day(since), PAYER_CANCELS_AFTER):
            mandates.set_status(mandate, "CANCELLED", "INSTRUCTION_CANCELLED_BY_PAYER", moment)
            events.mandate_event(session, mandate, "DIRECT_DEBIT_MANDATE_CANCELLED")


def activation_day(mandate: Mandate) -> date:
    """The working day the bank confirms a signed (or reinstated) PENDING mandate."""
    if mandate.status_reason_code == "REINSTATED" or mandate.authorisation_time is None:
        since = mandate.updated_at
    else:
        since = mandate.authorisation_time
    return add_working_days(_london_day(since), ACTIVATION_DELAY)

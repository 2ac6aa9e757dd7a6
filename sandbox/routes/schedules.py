"""``/schedules/invoices`` and ``/schedules/payment_requests``: recurring invoices and recurring
payment requests, two routers made by one factory.

A recurring invoice is created ``DRAFT`` and generates nothing until activated; a recurring
payment request is created ``ACTIVE`` (it has no draft status, so no ``:activate``). ``:action``
routes come before ``/{id}`` (a path parameter matches ``abc:cancel``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response

from sandbox.billing import schedules
from sandbox.billing.schedules import RECURRING_INVOICE, RECURRING_PAYMENT_REQUEST, Kind
from sandbox.core.bodies import JsonBody
from sandbox.core.deps import BillerId, SessionDep

IdPath = Annotated[str, Path(min_length=1)]


def schedule_router(kind: Kind, path: str, operation: str, *, activate: bool) -> APIRouter:
    """The routes of one kind of schedule, operation ids ``<operation>.<action>``."""
    router = APIRouter(prefix=path, tags=[operation])
    what = kind.what

    @router.post(
        "", operation_id=f"{operation}.create", status_code=201, summary=f"Create a {what}"
    )
    def create(biller_id: BillerId, session: SessionDep, body: JsonBody) -> dict[str, Any]:
        schedule = schedules.create(session, biller_id, kind, schedules.parse(kind, body))
        return schedules.public(session, kind, schedule)

    @router.put("/{id}:cancel", operation_id=f"{operation}.cancel", summary=f"Cancel a {what}")
    def cancel(biller_id: BillerId, session: SessionDep, id: IdPath) -> dict[str, Any]:
        schedule = schedules.get(session, biller_id, kind, id)
        return schedules.public(session, kind, schedules.cancel(session, kind, schedule))

    if activate:

        @router.put(
            "/{id}:activate", operation_id=f"{operation}.activate", summary=f"Activate a {what}"
        )
        def activate_schedule(
            biller_id: BillerId, session: SessionDep, id: IdPath
        ) -> dict[str, Any]:
            schedule = schedules.get(session, biller_id, kind, id)
            return schedules.public(session, kind, schedules.activate(session, kind, schedule))

    @router.get("/{id}", operation_id=f"{operation}.retrieve", summary=f"Retrieve a {what}")
    def retrieve(biller_id: BillerId, session: SessionDep, id: IdPath) -> dict[str, Any]:
        return schedules.public(session, kind, schedules.get(session, biller_id, kind, id))

    @router.put("/{id}", operation_id=f"{operation}.update", summary=f"Update a {what}")
    def update(
        biller_id: BillerId, session: SessionDep, id: IdPath, body: JsonBody
    ) -> dict[str, Any]:
        schedule = schedules.get(session, biller_id, kind, id)
        updated = schedules.update(session, kind, schedule, schedules.parse(kind, body))
        return schedules.public(session, kind, updated)

    @router.delete(
        "/{id}", operation_id=f"{operation}.delete", status_code=204, summary=f"Delete a {what}"
    )
    def delete(biller_id: BillerId, session: SessionDep, id: IdPath) -> Response:
        """Deletes the schedule; what it generated is kept."""
        schedules.delete(session, schedules.get(session, biller_id, kind, id))
        return Response(status_code=204)

    return router


recurring_invoices = schedule_router(
    RECURRING_INVOICE, "/schedules/invoices", "recurring_invoices", activate=True
)
recurring_payment_requests = schedule_router(
    RECURRING_PAYMENT_REQUEST,
    "/schedules/payment_requests",
    "recurring_payment_requests",
    activate=False,
)

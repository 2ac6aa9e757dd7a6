"""``:pause_collection`` and ``:resume_collection`` of invoices and payment requests: four
operations, one handler shape (the rules are :mod:`sandbox.billing.pause_resume`'s).

Included before the invoice and payment-request routers: their ``PUT /{id}`` would otherwise take
``abc:pause_collection``. Where the contract types the payment request's id as a uuid, a malformed
one is 400 ``BAD_REQUEST``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Path, Response

from sandbox.billing.pause_resume import Action, Document, change_collection
from sandbox.core.bodies import JsonBody
from sandbox.core.deps import BillerId, SessionDep

router = APIRouter()

# (document, its id's path parameter and type, summary noun)
DOCUMENTS: dict[Document, tuple[str, object, str]] = {
    "invoices": (
        "invoiceId",
        Annotated[str, Path(alias="invoiceId", min_length=1)],
        "for every payment request of an invoice",
    ),
    "payment_requests": (
        "paymentRequestId",
        Annotated[uuid.UUID, Path(alias="paymentRequestId")],
        "methods of a payment request",
    ),
}


def _handler(document: Document, action: Action, id_type: object) -> Callable[..., Response]:
    def handler(
        biller_id: BillerId, session: SessionDep, document_id: str, body: JsonBody
    ) -> Response:
        change_collection(session, biller_id, document, str(document_id), action, body)
        return Response(status_code=204)

    # The id's type differs per document (FastAPI reads it from the annotations).
    handler.__annotations__ = {**handler.__annotations__, "document_id": id_type}
    return handler


for document, (id_name, id_type, noun) in DOCUMENTS.items():
    for action in ("pause", "resume"):
        router.add_api_route(
            f"/{document}/{{{id_name}}}:{action}_collection",
            _handler(document, action, id_type),
            methods=["PUT"],
            operation_id=f"{document}.{action}_collection",
            status_code=204,
            tags=[document],
            summary=f"{action.capitalize()} collection {noun}",
        )

"""``/apps/{clientId}/webhooks``: an app's webhook subscriptions, its signing secret and the
credentials presented to its targets (platform token of that app only; ``PlatformDep``).

``/digest`` and ``/auth`` are declared before ``/{webhookId}``, which would match them.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response

from sandbox.core.bodies import JsonBody, json_object
from sandbox.core.deps import PlatformDep, SessionDep
from sandbox.core.validation import parse_body
from sandbox.webhooks import settings as hooks

router = APIRouter(prefix="/apps/{clientId}/webhooks", tags=["webhooks"])

WebhookIdPath = Annotated[str, Path(alias="webhookId", min_length=1)]


@router.post(
    "", operation_id="webhooks.create", status_code=201, summary="Create a webhook subscription"
)
def create_webhook(principal: PlatformDep, session: SessionDep, body: JsonBody) -> dict[str, Any]:
    """Each call creates another subscription (``enabled: true``), even for the same url."""
    data = parse_body(hooks.WebhookIn, json_object(body))
    return hooks.public(hooks.create_webhook(session, principal.client_id, data))


@router.get("", operation_id="webhooks.list", summary="List the app's webhooks")
def list_webhooks(principal: PlatformDep, session: SessionDep) -> dict[str, Any]:
    """``{"webhooksResponse": [...]}``, oldest first, unpaged, as the spec shows."""
    rows = hooks.list_webhooks(session, principal.client_id)
    return {"webhooksResponse": [hooks.public(row) for row in rows]}


@router.put(
    "/digest",
    operation_id="webhooks.generate_signing_secret",
    summary="Generate or replace the signing secret",
)
def generate_signing_secret(
    principal: PlatformDep, session: SessionDep, response: Response
) -> dict[str, str]:
    """A new app-wide secret on every call; the old one stops signing at once."""
    response.headers["Cache-Control"] = "no-store"
    return {"secretKey": hooks.new_signing_secret(session, principal.client_id)}


@router.put(
    "/auth",
    operation_id="webhooks.set_target_auth",
    summary="Set the authentication used toward webhook targets",
)
def set_target_auth(principal: PlatformDep, session: SessionDep, body: JsonBody) -> dict[str, str]:
    """Stored, never shown again; the answer is literally ``{"statusCode": "200"}``."""
    data = parse_body(hooks.TargetAuthIn, json_object(body))
    hooks.set_target_auth(session, principal.client_id, data)
    return {"statusCode": "200"}


@router.get(
    "/{webhookId}", operation_id="webhooks.retrieve", summary="Retrieve a webhook subscription"
)
def retrieve_webhook(
    principal: PlatformDep, session: SessionDep, webhook_id: WebhookIdPath
) -> dict[str, Any]:
    return hooks.public(hooks.get_webhook(session, principal.client_id, webhook_id))


@router.put("/{webhookId}", operation_id="webhooks.update", summary="Update a webhook subscription")
def update_webhook(
    principal: PlatformDep, session: SessionDep, webhook_id: WebhookIdPath, body: JsonBody
) -> dict[str, Any]:
    """Replaces url, events, name and description; ``enabled`` keeps its value unless given."""
    webhook = hooks.get_webhook(session, principal.client_id, webhook_id)
    data = parse_body(hooks.WebhookIn, json_object(body))
    return hooks.public(hooks.update_webhook(session, webhook, data))


@router.delete(
    "/{webhookId}",
    operation_id="webhooks.delete",
    status_code=204,
    summary="Delete a webhook subscription",
)
def delete_webhook(
    principal: PlatformDep, session: SessionDep, webhook_id: WebhookIdPath
) -> Response:
    hooks.delete_webhook(session, hooks.get_webhook(session, principal.client_id, webhook_id))
    return Response(status_code=204)

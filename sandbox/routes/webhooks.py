"""``/apps/{clientId}/webhooks``: an app's webhook subscriptions (platform token only)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sqlalchemy import select

from sandbox.deps import PlatformDep, SessionDep
from sandbox.models import Webhook
from sandbox.timefmt import iso

router = APIRouter(prefix="/apps/{clientId}/webhooks", tags=["webhooks"])


def public(webhook: Webhook) -> dict[str, Any]:
    return {
        "id": webhook.id,
        "clientId": webhook.client_id,
        "url": webhook.url,
        "name": webhook.name,
        "description": webhook.description,
        "events": list(webhook.events),
        "enabled": webhook.enabled,
        "creationTime": iso(webhook.created_at),
        "lastUpdatedTime": iso(webhook.updated_at),
    }


@router.get("", operation_id="webhooks.list", summary="List the app's webhooks")
def list_webhooks(principal: PlatformDep, session: SessionDep) -> dict[str, Any]:
    """``{"webhooksResponse": [...]}``, unpaged, as the spec shows."""
    rows = session.scalars(
        select(Webhook).where(Webhook.client_id == principal.client_id).order_by(Webhook.created_at)
    )
    return {"webhooksResponse": [public(row) for row in rows]}

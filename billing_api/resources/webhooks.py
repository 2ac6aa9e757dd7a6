"""``client.webhooks``: an app's webhook subscriptions (a platform token is needed).

Every operation names the app by ``client_id`` (the path's ``/apps/{clientId}``). The signing
secret comes back as ``SecretStr``; verify deliveries with
:func:`billing_api.webhooks.verify_signature`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import httpx
from pydantic import SecretStr

from billing_api._base_request import operation_for, parse_json_body
from billing_api.resources._core import (
    Call,
    SyncResource,
    body,
    model_call,
    no_content_call,
    parse_model,
    sync_op,
)
from billing_api.types import (
    ApiModel,
    Webhook,
    WebhookAuthResponse,
    WebhookEventKind,
    WebhookSecret,
)

__all__ = ["Webhooks"]

Kinds = Sequence[WebhookEventKind | str]
Credentials = Mapping[str, str | SecretStr] | None


class _WebhookList(ApiModel):
    webhooks_response: list[Webhook]


def _kinds(events: Kinds) -> list[str]:
    if isinstance(events, str):
        raise TypeError("events: a list of event kinds, e.g. ['invoice', 'payment']")
    if not events:
        raise ValueError("events: subscribe to at least one kind (invoice, payment, ...)")
    return [str(kind) for kind in events]


def create(
    client_id: str,
    *,
    url: str,
    events: Kinds,
    name: str | None = None,
    description: str | None = None,
) -> Call[Webhook]:
    """Subscribe ``url`` to event kinds. Not idempotent (a repeat subscribes twice)."""
    payload = body(url=url, events=_kinds(events), name=name, description=description)
    return model_call("webhooks.create", Webhook, path_params={"clientId": client_id}, json=payload)


def list_(client_id: str) -> Call[list[Webhook]]:
    """Every subscription of the app (not paged)."""

    def decode(response: httpx.Response) -> list[Webhook]:
        value = parse_json_body(operation_for("webhooks.list"), response)
        return parse_model(_WebhookList, value, "webhooks.list").webhooks_response

    return Call("webhooks.list", decode, path_params={"clientId": client_id})


def _one(client_id: str, webhook_id: str) -> dict[str, str]:
    return {"clientId": client_id, "webhookId": webhook_id}


def retrieve(client_id: str, webhook_id: str) -> Call[Webhook]:
    """One subscription."""
    return model_call("webhooks.retrieve", Webhook, path_params=_one(client_id, webhook_id))


def update(
    client_id: str,
    webhook_id: str,
    *,
    url: str,
    events: Kinds,
    name: str | None = None,
    description: str | None = None,
    enabled: bool | None = None,
) -> Call[Webhook]:
    """Replace a subscription (``enabled`` left out stays as it is)."""
    payload = body(
        url=url, events=_kinds(events), name=name, description=description, enabled=enabled
    )
    return model_call(
        "webhooks.update", Webhook, path_params=_one(client_id, webhook_id), json=payload
    )


def delete(client_id: str, webhook_id: str) -> Call[None]:
    """Remove a subscription."""
    return no_content_call("webhooks.delete", path_params=_one(client_id, webhook_id))


def generate_signing_secret(client_id: str) -> Call[WebhookSecret]:
    """A new signing secret for the app's deliveries (the old one stops working)."""
    return model_call(
        "webhooks.generate_signing_secret", WebhookSecret, path_params={"clientId": client_id}
    )


def set_target_auth(
    client_id: str,
    *,
    basic_authentication: Credentials = None,
    api_key_authentication: Credentials = None,
) -> Call[WebhookAuthResponse]:
    """The credentials deliveries present to your endpoint: ``basic_authentication``
    ``{"username", "password"}`` and/or ``api_key_authentication`` ``{"headerKey",
    "headerValue"}``."""
    if basic_authentication is None and api_key_authentication is None:
        raise ValueError("set_target_auth: give basic_authentication or api_key_authentication")
    payload = body(
        basic_authentication=basic_authentication, api_key_authentication=api_key_authentication
    )
    return model_call(
        "webhooks.set_target_auth",
        WebhookAuthResponse,
        path_params={"clientId": client_id},
        json=payload,
    )


class Webhooks(SyncResource):
    """Webhook subscriptions (blocking)."""

    create = sync_op(create)
    list = sync_op(list_)
    retrieve = sync_op(retrieve)
    update = sync_op(update)
    delete = sync_op(delete)
    generate_signing_secret = sync_op(generate_signing_secret)
    set_target_auth = sync_op(set_target_auth)

"""``client.oauth``: the four ``oauth`` operations of the contract as plain calls.

``authorize`` and ``get_authorization`` act for the signed-in biller (bearer token). ``token`` and
``revoke`` are thin form-encoded calls for completeness; the rotating refresh-token machinery
(Basic auth, no blind resend, token stores) lives in :class:`billing_api.oauth.OAuthClient`,
which is what credentials and blocks use. Every value that is a credential (tokens, the code,
the client secret) is ``SecretStr`` in answers and never logged.
"""

from __future__ import annotations

from pydantic import SecretStr

from billing_api.resources._core import (
    Call,
    SyncResource,
    body,
    model_call,
    no_content_call,
    query,
    sync_op,
)
from billing_api.types import AppAuthorization, AuthorizeResponse, OAuthTokenResponse

__all__ = ["OAuth"]


def _reveal(value: str | SecretStr | None) -> str | None:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def _form(**fields: str | SecretStr | None) -> dict[str, str]:
    # RFC 6749 names are snake_case already: no camelCase here.
    return {name: text for name, value in fields.items() if (text := _reveal(value)) is not None}


def token(
    *,
    grant_type: str,
    client_id: str | None = None,
    client_secret: str | SecretStr | None = None,
    code: str | SecretStr | None = None,
    refresh_token: str | SecretStr | None = None,
    redirect_uri: str | None = None,
    scope: str | None = None,
    code_verifier: str | SecretStr | None = None,
) -> Call[OAuthTokenResponse]:
    """``POST /oauth2/token`` with the client credentials as form fields. Not idempotent:
    codes and refresh tokens are single use."""
    form = _form(
        grant_type=grant_type,
        client_id=client_id,
        client_secret=client_secret,
        code=code,
        refresh_token=refresh_token,
        redirect_uri=redirect_uri,
        scope=scope,
        code_verifier=code_verifier,
    )
    return model_call("oauth.token", OAuthTokenResponse, data=form)


def revoke(
    *,
    token: str | SecretStr,
    client_id: str | None = None,
    client_secret: str | SecretStr | None = None,
    token_type_hint: str | None = "refresh_token",
) -> Call[None]:
    """``POST /oauth2/revoke``: revoke a refresh token (access tokens live until they expire)."""
    form = _form(
        token=token,
        client_id=client_id,
        client_secret=client_secret,
        token_type_hint=token_type_hint,
    )
    return no_content_call("oauth.revoke", data=form)


def authorize(
    *,
    client_id: str,
    redirect_uri: str,
    scope: str | None = None,
    state: str | None = None,
    code_challenge: str | None = None,
    code_challenge_method: str | None = None,
) -> Call[AuthorizeResponse]:
    """The signed-in biller authorizes an app: a single-use code bound to ``redirect_uri``."""
    payload = body(
        client_id=client_id,
        redirect_uri=redirect_uri,
        scope=scope,
        state=state,
        code_challenge=code_challenge,
        code_challenge_method=code_challenge_method,
    )
    return model_call("oauth.authorize", AuthorizeResponse, json=payload)


def get_authorization(client_id: str) -> Call[AppAuthorization]:
    """Whether the signed-in biller has authorized the app ``client_id``."""
    return model_call(
        "oauth.get_authorization", AppAuthorization, params=query(client_id=client_id)
    )


class OAuth(SyncResource):
    """OAuth operations (blocking)."""

    token = sync_op(token)
    revoke = sync_op(revoke)
    authorize = sync_op(authorize)
    get_authorization = sync_op(get_authorization)

"""When the block's store fails (a missing block, a Prefect API that does not answer), the error
names the block and the Prefect API, and the billing client neither blames the service nor
retries it as the service's transport error."""

from __future__ import annotations

import socket

import pytest
from pydantic import SecretStr

from billing_api import TokenStoreError, TransportError
from blocks import BillerCredentials
from tests.support.credentials import register_block_secrets, save_connected_block, unique_name
from tests.support.sandbox_admin import SandboxAdmin


def test_a_missing_block_says_how_to_create_it(prefect_api: str) -> None:
    name = unique_name("missing")
    block = BillerCredentials(
        client_id="c",
        client_secret=SecretStr("client-secret-value-2"),
        refresh_token=SecretStr("refresh-token-value-2"),
    )
    block._block_document_name = name

    with pytest.raises(TokenStoreError) as missing:
        block.read()

    assert str(missing.value) == (
        f"credential block {name!r} on the Prefect API at {prefect_api}: the block does not exist "
        f"(reading the block); create it with: billops auth login --block {name}"
    )


def test_an_unreachable_prefect_api_is_named_and_not_taken_for_the_service(
    prefect_api: str, short_admin: SandboxAdmin
) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    name = unique_name("down")
    block, tokens = save_connected_block(short_admin, name, with_access_token=False)
    register_block_secrets(block)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/api"

    with (
        temporary_settings({PREFECT_API_URL: dead}),
        block.get_client(max_retries=3) as client,
        pytest.raises(TokenStoreError) as failed,
    ):
        client.biller.retrieve()

    assert not isinstance(failed.value, TransportError)
    message = str(failed.value)
    assert message.startswith(f"credential block {name!r} on the Prefect API at {dead}: ")
    assert "reading the block failed: ConnectError" in message
    stats = short_admin.biller_stats(tokens.biller_id)
    assert stats.get("requests", {}).get("biller.retrieve", 0) == 0
    assert stats.get("tokenGrants", {}).get("refresh_token", 0) == 0

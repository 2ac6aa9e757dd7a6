"""Prefect's own standards for blocks (description, docs URL, code example, field descriptions)."""

from __future__ import annotations

import pytest
from prefect.blocks.core import Block
from prefect.testing.standard_test_suites import BlockStandardTestSuite

from blocks import BillerCredentials, PlatformCredentials


@pytest.mark.parametrize("block", [BillerCredentials, PlatformCredentials], indirect=True)
class TestAllBlocksAdhereToStandards(BlockStandardTestSuite):
    @pytest.fixture
    def block(self, request: pytest.FixtureRequest) -> type[Block]:
        return request.param  # type: ignore[no-any-return]

    @pytest.mark.skip(reason="downloads the logo over the network; the blocks have no logo")
    def test_has_a_valid_image(self, block: type[Block]) -> None:
        """Skipped: the only standard test that needs the network."""


def test_block_types_have_the_documented_slugs() -> None:
    assert BillerCredentials.get_block_type_slug() == "billops-biller-credentials"
    assert PlatformCredentials.get_block_type_slug() == "billops-platform-credentials"

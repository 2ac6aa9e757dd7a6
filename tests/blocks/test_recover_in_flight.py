"""``billops auth recover`` on a journal that holds only a refresh's intent (its process stopped
after noting it, with no token set after it): the command asks the service, by refreshing under
the lock as a worker would, and says precisely which of the two cases it is. The sandbox's own
count of refresh grants is the truth each answer is checked against."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from billing_api import RecoveryDirectory
from billops.cli import app
from blocks import BillerCredentials
from tests.support.credentials import (
    invalid_grants,
    refresh_grants,
    register_block_secrets,
    save_connected_block,
    unique_name,
)
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_secret

ROOT = Path(__file__).resolve().parents[2]


def _intent_of_a_process_now_gone(journal: RecoveryDirectory, name: str) -> None:
    """The intent a worker notes before its refresh, noted by a process that then ends."""
    code = (
        "import sys; from pathlib import Path; from billing_api import RecoveryDirectory; "
        "RecoveryDirectory(Path(sys.argv[1])).record_intent(sys.argv[2], from_rotation=0)"
    )
    command = [sys.executable, "-c", code, str(journal.directory), name]
    subprocess.run(command, check=True, cwd=ROOT, timeout=60)


def test_a_refresh_granted_whose_answer_never_arrived_needs_a_login(
    prefect_api: str, short_admin: SandboxAdmin, billops_home: Path
) -> None:
    name = unique_name("lost")
    block, tokens = save_connected_block(short_admin, name)
    journal = RecoveryDirectory(billops_home / "recovery")
    _intent_of_a_process_now_gone(journal, name)
    # The worker's refresh reached the service, which rotated the token; the answer was lost.
    with block.get_oauth_client() as oauth:
        lost = oauth.refresh(block.read().refresh_token)
    register_secret(lost.refresh_token)
    register_secret(lost.access_token)
    assert refresh_grants(short_admin, tokens.biller_id) == 1

    result = CliRunner().invoke(app, ["auth", "recover", "--block", name])

    assert result.exit_code == 1, result.output
    assert "the refresh from rotation 0 started by pid" in result.output
    assert "the service granted that refresh" in result.output
    assert "its answer never arrived" in result.output
    assert f"Log in again: billops auth login --block {name}" in result.output
    assert refresh_grants(short_admin, tokens.biller_id) == 1  # the one lost, nothing granted
    assert invalid_grants(short_admin, tokens.biller_id) == 1  # the spent token, presented once
    assert BillerCredentials.load_named(name).read().rotation == 0
    assert journal.state(name).intent is not None  # still says why the credential is dead


def test_a_refresh_that_never_reached_the_service_is_done_now(
    prefect_api: str, short_admin: SandboxAdmin, billops_home: Path
) -> None:
    name = unique_name("unsent")
    block, tokens = save_connected_block(short_admin, name)
    journal = RecoveryDirectory(billops_home / "recovery")
    _intent_of_a_process_now_gone(journal, name)  # which stopped before sending

    result = CliRunner().invoke(app, ["auth", "recover", "--block", name])

    assert result.exit_code == 1, result.output  # nothing to restore
    assert "the refresh from rotation 0 started by pid" in result.output
    assert "it never reached the service" in result.output
    assert f"block {name!r} is now at rotation 1 (no login needed)" in result.output
    assert refresh_grants(short_admin, tokens.biller_id) == 1
    assert invalid_grants(short_admin, tokens.biller_id) == 0
    stored = BillerCredentials.load_named(name)
    register_block_secrets(stored)
    assert stored.read().rotation == 1
    assert journal.state(name).empty  # the intent and the new record are settled

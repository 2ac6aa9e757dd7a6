"""The chaos soak's credentials: telling a refresh token lost to a kill in the service's part of
the refresh window (documented, and beyond any client: ``docs/credentials.md`` §3) from one lost
by billops, and logging the biller in again as an operator would after the former.

A worker killed after its refresh request reached the service and before the answer came back
has spent the token and received nothing. The journal's intent survives the kill; the next
worker's refresh is refused with ``invalid_grant`` and its ``ReauthorizationRequired`` names that
intent's process ("... started by pid P ... never finished"). The soak accepts a lost credential
when the process so named is one the soak killed. That line is written by the next worker, and
the chaos may take that worker too before its log reaches the API (logs are sent in batches):
then the night's own record that an attempt of the biller crashed because the soak killed its
process ("<block>: attempt N crashed: its process (host:PID) is gone", written by the parent,
which the soak never kills) is the evidence. A dead token with neither is a regression.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.sandbox_admin import AppCredentials, SandboxAdmin
from tests.support.secret_scan import register_secret
from tests.support.soak_checks import live_at_sandbox, live_refresh_token

_STORY_WORDS = ("refresh", "rotation", "journal", "Reauthoriz", "invalid_grant", "Killed", "Crash")


def unfinished_refresh_pids(block: str) -> set[int]:
    """The processes the current Prefect API's logs name as having started a refresh of
    ``block`` that never finished (the reason of a ``ReauthorizationRequired``)."""
    return _pids_in_logs(
        re.compile(
            re.escape(f"the refresh token of {block} ")
            + r"\(rotation \d+\) was refused with invalid_grant.*?started by pid (\d+) "
            + r".*?never finished",
            re.DOTALL,
        )
    )


def crashed_attempt_pids(block: str) -> set[int]:
    """The processes the current Prefect API's logs name as running an attempt of ``block``
    that crashed because its process was gone (``tasks/nightly/children.py``)."""
    return _pids_in_logs(
        re.compile(
            re.escape(f"{block}: attempt ") + r"\d+ crashed: its process \([^()]*?:(\d+)\) is gone"
        )
    )


def _pids_in_logs(pattern: re.Pattern[str]) -> set[int]:
    """The process ids ``pattern``'s group finds in every log the current Prefect API holds."""
    from prefect.client.orchestration import get_client

    pids: set[int] = set()
    with get_client(sync_client=True) as client:
        offset = 0
        while batch := client.read_logs(limit=200, offset=offset):
            for log in batch:
                pids.update(int(pid) for pid in pattern.findall(log.message))
            offset += len(batch)
    return pids


def credential_dead(database: Path, block: str) -> bool:
    """Whether neither the block nor its recovery journal holds a live refresh token. A worker
    killed between a grant and the block's save leaves the new token set in the journal, and
    the next worker saves it into the block (``docs/credentials.md`` §3): not lost."""
    from blocks._journal import default_journal

    if live_refresh_token(database, block):
        return False
    kept = default_journal().state(block).tokens
    if kept is None:
        return True
    register_secret(kept.refresh_token)
    register_secret(kept.access_token)
    return not live_at_sandbox(database, kept.refresh_token)


def log_in_again(admin: SandboxAdmin, block: str, biller_id: str) -> None:
    """What an operator does for a lost credential (``billops auth login``): a new grant from the
    biller's consent, saved by the same code the CLI uses (which also empties the journal)."""
    from billing_api import TokenSet
    from blocks import BillerCredentials
    from blocks.admin import save_login

    current = BillerCredentials.load(block)
    secret = current.client_secret.get_secret_value()
    app = AppCredentials(current.client_id, secret, "")
    code = admin.authorization_code(app, biller_id)
    answer = admin.token(app, grant_type="authorization_code", code=code)
    answer.raise_for_status()
    settings = current.model_dump(
        include={"environment", "base_url", "login_url", "redirect_uri", "client_id"}
    )
    settings["client_secret"] = secret
    save_login(block, settings, TokenSet(refresh_token=answer.json()["refresh_token"]))


def credential_story(log_folder: Path, block: str, limit: int = 60) -> str:
    """What the journal holds for ``block`` and the workers' and server's log lines about its
    credential, for a failure message (no token: the secret scan checks every log)."""
    from blocks._journal import default_journal

    state = default_journal().state(block)
    kept = f"rotation {state.tokens.rotation}" if state.tokens else "none"
    lines = [f"journal: intent {state.intent or 'none'}; token set {kept}"]
    for path in sorted(log_folder.glob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if block in line and any(word in line for word in _STORY_WORDS):
                lines.append(f"{path.name}: {line}")
    if len(lines) == 1:
        lines.append(f"(no log line in {log_folder} names {block})")
    return "\n".join(lines[:1] + lines[1:][-limit:])

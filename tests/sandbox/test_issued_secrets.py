"""``GET /_sandbox/secrets`` and the secret scan built on it (``tests/support/secret_scan.py``):
every token the sandbox issued is listed as a digest (never in clear), so a token rotated by a
process the test never saw is found when planted in a report or a ledger column; webhook
credentials are listed as they are; a column meant to hold a credential can be named."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sqlalchemy import create_engine, text

from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import database_texts, find_leaks


def _sha(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _rotated(admin: SandboxAdmin) -> tuple[list[str], dict[str, str]]:
    """A biller's first tokens (registered by the admin helpers) and a rotation done over plain
    HTTP, as a worker does it: nothing in this process registers the rotated pair."""
    tokens = admin.connect_biller("Scanned Biller Ltd")
    form = {
        "grant_type": "refresh_token",
        "refresh_token": tokens.refresh_token,
        "client_id": tokens.app.client_id,
        "client_secret": tokens.app.client_secret,
    }
    answer = admin.api.post("/oauth2/token", data=form)
    assert answer.status_code == 200, answer.status_code
    first = [tokens.app.client_secret, tokens.access_token, tokens.refresh_token]
    return first, dict(answer.json())


def test_every_issued_secret_is_listed_as_a_digest_and_webhook_credentials_in_clear(
    admin: SandboxAdmin,
) -> None:
    first, rotated = _rotated(admin)
    platform = admin.platform_token()
    where = f"/apps/{platform.app.client_id}/webhooks/digest"
    signing = admin.api.put(where, headers=platform.headers)
    assert signing.status_code == 200, signing.status_code

    listed = admin.http.get("/_sandbox/secrets").json()

    issued = [*first, rotated["access_token"], rotated["refresh_token"], platform.access_token]
    assert all(_sha(secret) in listed["digests"] for secret in issued)
    assert signing.json()["secretKey"] in listed["clear"]
    shown = admin.http.get("/_sandbox/secrets").text
    assert not [secret for secret in issued if secret in shown], "a token listed in clear"
    assert all(any(s.startswith(p) for p in listed["prefixes"]) for s in issued)


def test_a_rotated_token_planted_in_a_report_fails_the_scan_and_a_clean_report_does_not(
    admin: SandboxAdmin, tmp_path: Path
) -> None:
    _first, rotated = _rotated(admin)
    listed = admin.http.get("/_sandbox/secrets").json()
    scan = {"digests": listed["digests"], "prefixes": listed["prefixes"]}
    clean = "outcome:  imported\nrows:     3 created\n"
    planted = clean + f"debug:    Bearer {rotated['refresh_token']}, then more text\n"
    in_json = f'{{"token":"{rotated["access_token"]}"}}'

    logs = [("clean report", clean), ("planted report", planted), ("artifact", in_json)]

    assert find_leaks([], logs, **scan) == ["planted report", "artifact"]
    assert find_leaks([], [("truncated", planted[:-30])], **scan) == []  # no whole token left
    assert find_leaks([], logs) == []  # without the sandbox's list nothing is known


def test_a_ledger_column_holding_a_token_fails_unless_it_is_named_as_a_credentials_place(
    admin: SandboxAdmin, tmp_path: Path
) -> None:
    from ledger import upgrade_database

    _first, rotated = _rotated(admin)
    listed = admin.http.get("/_sandbox/secrets").json()
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    upgrade_database(url)
    engine = create_engine(url)
    with engine.begin() as db:
        db.execute(
            text("INSERT INTO ledger_meta (key, value) VALUES ('note', :v)"),
            {"v": f"refreshed with {rotated['refresh_token']}"},
        )
    engine.dispose()
    scan = {"digests": listed["digests"], "prefixes": listed["prefixes"]}

    every = database_texts(url, label="ledger")
    allowed = database_texts(url, allowed=["ledger_meta.value"], label="ledger")

    assert "ledger: ledger_operations" in dict(every)  # every table is read, empty ones too
    assert find_leaks([], every, **scan) == ["ledger: ledger_meta"]
    assert find_leaks([], allowed, **scan) == []

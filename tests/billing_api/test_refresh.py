"""The refresh procedure (``TokenManager``) and ``RefreshingAuth`` against the sandbox over HTTP.

Clocks are injected: "the token is about to expire" is the manager's clock moving, and the
sandbox's grant counters (``/_sandbox/stats``) say how many refreshes really happened.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from billing_api import (
    FileTokenStore,
    OAuthError,
    ReauthorizationRequired,
    RecoveryDirectory,
    RefreshingAuth,
    StaticTokenAuth,
    TokenManager,
    TokenSet,
    utc_now,
)
from tests.billing_api.oauth_helpers import (
    LOGIN_COMMAND,
    RECOVER_COMMAND,
    FailingWriteStore,
    StaleReadStore,
    close_oauth_clients,
    expired_set,
    file_store,
    oauth_for,
    stale_error,
)
from tests.support.clocks import Clock
from tests.support.credentials import token_grants
from tests.support.faults import clear_faults, plan_faults
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    close_oauth_clients()


def _fresh_set(tokens: BillerTokens, clock: Clock) -> TokenSet:
    """The set a login leaves behind, granted at the clock's time."""
    return TokenSet(
        refresh_token=tokens.refresh_token,
        access_token=tokens.access_token,
        access_token_expires_at=clock() + timedelta(seconds=tokens.expires_in),
        access_token_lifetime=float(tokens.expires_in),
        rotation=0,
        last_refreshed_at=clock(),
    )


def _get_biller(admin: SandboxAdmin, auth: httpx.Auth) -> httpx.Response:
    with httpx.Client(base_url=f"{admin.root}/api", auth=auth) as http:
        return http.get("/biller")


# --- the renewal margin: min(60 s, 10% of the lifetime) -----------------------------------------


@pytest.mark.parametrize(
    ("lifetime", "margin"), [(86400.0, 60.0), (3600.0, 60.0), (300.0, 30.0), (2.0, 0.2)]
)
def test_access_token_counts_as_spent_inside_the_margin(lifetime: float, margin: float) -> None:
    now = utc_now()
    tokens = TokenSet("r", "a", now + timedelta(seconds=lifetime), lifetime)

    assert tokens.renewal_margin() == pytest.approx(margin)
    assert tokens.access_token_usable(now + timedelta(seconds=lifetime - margin - 0.01))
    assert not tokens.access_token_usable(now + timedelta(seconds=lifetime - margin + 0.01))
    assert not TokenSet("r").access_token_usable(now)


def test_naive_timestamps_are_refused() -> None:
    with pytest.raises(ValueError, match="access_token_expires_at must be timezone-aware"):
        TokenSet("r", "a", utc_now().replace(tzinfo=None))


def test_expiring_token_is_refreshed_ahead_of_time_and_persisted_first(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    clock = Clock()
    store = file_store(tmp_path / "acme.json", _fresh_set(biller_token, clock))
    manager = TokenManager(store, oauth_for(admin, biller_token), now=clock)
    auth = RefreshingAuth(manager)

    clock.advance(86400 - 61)  # 61 s left: still usable
    assert _get_biller(admin, auth).status_code == 200
    assert token_grants(admin, biller_token.biller_id).get("refresh_token", 0) == 0

    clock.advance(2)  # 59 s left: inside the 60 s margin
    assert _get_biller(admin, auth).status_code == 200

    stored = store.read()
    assert token_grants(admin, biller_token.biller_id)["refresh_token"] == 1
    assert stored.rotation == 1 and stored.refresh_token != biller_token.refresh_token
    assert manager.current == stored
    assert stored.last_refreshed_at is not None
    assert stored.access_token_usable(utc_now())


def test_ten_percent_rule_on_short_lived_tokens(tmp_path: Path) -> None:
    with running_sandbox(f"sqlite:///{tmp_path}/s.db", accessTokenTtl=300) as admin:
        tokens = admin.connect_biller()
        clock = Clock()
        store = file_store(tmp_path / "acme.json", _fresh_set(tokens, clock))
        manager = TokenManager(store, oauth_for(admin, tokens), now=clock)

        clock.advance(300 - 31)  # 31 s of 300 left: more than 10% (30 s)
        assert manager.access_token() == tokens.access_token
        clock.advance(2)  # 29 s left
        fresh = manager.access_token()

        assert fresh != tokens.access_token
        assert token_grants(admin, tokens.biller_id)["refresh_token"] == 1
        assert store.read().access_token_lifetime == 300


def test_401_refreshes_once_and_retries_once(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    # The stored access token looks valid for a day but the service does not know it.
    bogus = TokenSet(
        refresh_token=biller_token.refresh_token,
        access_token="bogus-access-token",
        access_token_expires_at=utc_now() + timedelta(days=1),
        access_token_lifetime=86400.0,
    )
    store = file_store(tmp_path / "acme.json", bogus)
    manager = TokenManager(store, oauth_for(admin, biller_token))

    response = _get_biller(admin, RefreshingAuth(manager))

    assert response.status_code == 200
    assert [r.status_code for r in response.history] == [401]  # one refused, one retried
    assert token_grants(admin, biller_token.biller_id)["refresh_token"] == 1
    assert store.read().rotation == 1
    stats = admin.biller_stats(biller_token.biller_id)
    assert stats["requests"]["biller.retrieve"] == 1  # only the retry reached the biller


def test_401_on_a_revoked_grant_ends_in_reauthorization_not_a_loop(
    admin: SandboxAdmin, tmp_path: Path
) -> None:
    app = admin.create_app()
    biller_id = admin.create_biller()
    code = admin.authorization_code(app, biller_id)
    first = admin.token(app, grant_type="authorization_code", code=code).json()
    store = file_store(tmp_path / "acme.json", expired_set(first["refresh_token"]))
    manager = TokenManager(store, oauth_for(admin, BillerTokens(app, biller_id, "", "", 0)))
    manager.access_token()  # rotation 1, a day-long access token
    # Replaying the code revokes the whole grant (RFC 6749 §4.1.2): the access token the manager
    # holds now answers 401 and its refresh token invalid_grant.
    assert admin.token(app, grant_type="authorization_code", code=code).status_code == 400

    with pytest.raises(ReauthorizationRequired) as dead:
        _get_biller(admin, RefreshingAuth(manager))

    assert dead.value.command == LOGIN_COMMAND
    assert token_grants(admin, biller_id)["refresh_token"] == 1
    assert store.read().rotation == 1


def test_force_refresh_reuses_a_token_another_worker_obtained(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    store = file_store(tmp_path / "acme.json", expired_set(biller_token.refresh_token))
    other = TokenManager(store, oauth_for(admin, biller_token))
    mine = TokenManager(store, oauth_for(admin, biller_token))
    rejected = "expired"

    obtained = other.access_token()
    assert mine.force_refresh(rejected) == obtained

    assert token_grants(admin, biller_token.biller_id)["refresh_token"] == 1


def test_threads_of_one_process_refresh_once(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    store = file_store(tmp_path / "acme.json", expired_set(biller_token.refresh_token))
    manager = TokenManager(store, oauth_for(admin, biller_token))
    barrier = threading.Barrier(8)
    seen: list[str] = []

    def worker() -> None:
        barrier.wait(timeout=10)
        seen.append(manager.access_token())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert len(seen) == 8 and len(set(seen)) == 1
    assert token_grants(admin, biller_token.biller_id) == {
        "authorization_code": 1,
        "refresh_token": 1,
        "invalid_grant": 0,
    }


def test_an_async_http_client_is_refused_with_a_clear_error(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    store = file_store(tmp_path / "acme.json", expired_set(biller_token.refresh_token))
    auth = RefreshingAuth(TokenManager(store, oauth_for(admin, biller_token)))

    async def call() -> httpx.Response:
        async with httpx.AsyncClient(base_url=f"{admin.root}/api", auth=auth) as http:
            return await http.get("/biller")

    with pytest.raises(TypeError, match="RefreshingAuth is synchronous"):
        asyncio.run(call())
    assert token_grants(admin, biller_token.biller_id).get("refresh_token", 0) == 0


def test_static_token_auth(admin: SandboxAdmin, biller_token: BillerTokens) -> None:
    auth = StaticTokenAuth(biller_token.access_token)
    assert _get_biller(admin, auth).status_code == 200
    assert biller_token.access_token not in repr(auth)


# --- a dead credential ------------------------------------------------------------------------


def test_reused_refresh_token_raises_reauthorization_required_naming_the_command(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    oauth = oauth_for(admin, biller_token)
    oauth.refresh(biller_token.refresh_token)  # someone else used it; the store never heard
    store = file_store(tmp_path / "acme.json", expired_set(biller_token.refresh_token))
    manager = TokenManager(store, oauth)

    with pytest.raises(ReauthorizationRequired) as dead:
        manager.access_token()

    message = str(dead.value)
    assert dead.value.command == LOGIN_COMMAND
    assert f"Run: {LOGIN_COMMAND}" in message and "invalid_grant" in message
    assert biller_token.refresh_token not in message
    assert token_grants(admin, biller_token.biller_id)["invalid_grant"] == 1
    assert store.read().rotation == 0  # nothing was written


def test_invalid_grant_then_the_store_has_something_newer(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    oauth = oauth_for(admin, biller_token)
    newer = oauth.refresh(biller_token.refresh_token).to_token_set(1)
    # The first two reads (fast path, under the lock) still see the old set; the file is newer.
    store = file_store(
        tmp_path / "acme.json",
        newer,
        StaleReadStore,
        stale=expired_set(biller_token.refresh_token),
        stale_reads=2,
    )
    manager = TokenManager(store, oauth)

    assert manager.access_token() == newer.access_token
    assert token_grants(admin, biller_token.biller_id)["invalid_grant"] == 1


def test_answer_lost_after_the_refresh_is_not_retried(faulty: SandboxAdmin, tmp_path: Path) -> None:
    tokens = faulty.connect_biller()
    store = file_store(tmp_path / "acme.json", expired_set(tokens.refresh_token))
    manager = TokenManager(store, oauth_for(faulty, tokens))
    plan_faults(faulty, {"pathPrefix": "/oauth2/token", "method": "POST", "dropAfterCommit": 1})
    try:
        with pytest.raises(ReauthorizationRequired) as dead:
            manager.access_token()
    finally:
        clear_faults(faulty)

    assert "may have processed it" in str(dead.value)
    assert token_grants(faulty, tokens.biller_id) == {
        "authorization_code": 1,
        "refresh_token": 1,  # exactly one: no blind second attempt
        "invalid_grant": 0,
    }


def test_rate_limited_refresh_leaves_the_credential_intact(
    faulty: SandboxAdmin, tmp_path: Path
) -> None:
    tokens = faulty.connect_biller()
    store = file_store(tmp_path / "acme.json", expired_set(tokens.refresh_token))
    delays: list[float] = []
    manager = TokenManager(store, oauth_for(faulty, tokens, sleep=delays.append, max_retries=1))
    plan_faults(faulty, {"pathPrefix": "/oauth2/token", "method": "POST", "rateLimit": 1})
    try:
        with pytest.raises(OAuthError) as refused:
            manager.access_token()
    finally:
        clear_faults(faulty)

    assert refused.value.status_code == 429
    assert delays == [1]
    assert manager.access_token()  # the same refresh token still works afterwards
    assert store.read().rotation == 1


# --- persisting fails -------------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["store down", "stale"])
def test_a_failed_save_leaves_the_tokens_in_the_journal_until_the_next_holder_saves_them(
    admin: SandboxAdmin,
    biller_token: BillerTokens,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    failure: str,
) -> None:
    error = OSError("store unreachable") if failure == "store down" else stale_error()
    store = file_store(
        tmp_path / "acme.json",
        expired_set(biller_token.refresh_token),
        FailingWriteStore,
        error=error,
    )
    delays: list[float] = []
    recovery = tmp_path / "home" / "recovery"
    journal = RecoveryDirectory(recovery)
    manager = TokenManager(
        store, oauth_for(admin, biller_token), journal=journal, sleep=delays.append
    )

    with caplog.at_level(logging.WARNING):
        response = _get_biller(admin, RefreshingAuth(manager))

    assert response.status_code == 200
    path = recovery / "acme.journal"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(recovery).st_mode) == 0o700
    saved = journal.state("acme").tokens
    assert saved is not None and saved == manager.current and saved.rotation == 1
    assert store.read().rotation == 0  # the store never took it
    if failure == "store down":
        assert (store.attempts, delays) == (3, [0.5, 1.0])
    else:
        assert (store.attempts, delays) == (1, [])  # a CAS refusal is not retried
    critical = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert len(critical) == 1
    assert RECOVER_COMMAND in critical[0].getMessage()
    assert str(path) in critical[0].getMessage()
    for secret in (saved.refresh_token, saved.access_token, biller_token.refresh_token):
        assert secret and secret not in caplog.text

    # The next worker, with a store that works, adopts the record under the lock, saves it into
    # the store and removes it; no second refresh was needed for that.
    healthy = FileTokenStore(store.path, name="acme")
    other = TokenManager(healthy, oauth_for(admin, biller_token), journal=journal)
    assert other.force_refresh("expired") == saved.access_token
    assert healthy.read() == saved
    assert journal.state("acme").empty and path.stat().st_size == 0
    assert token_grants(admin, biller_token.biller_id)["refresh_token"] == 1

"""What the chaos soak (``tests/flows/test_nightly_chaos.py``) reads after the night: the
sandbox's own truth per biller, the payout reports' fate, the live refresh tokens, and the texts
the secret scan sweeps (the Prefect server's logs and artifacts, an operator's ``billops``
commands the morning after)."""

from __future__ import annotations

import csv
import io
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from tests.support.cli import billops_command
from tests.support.nightly_world import WholeBiller, payout_export
from tests.support.platform import Platform
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_log, register_secret


def sandbox_truth(database: Path, biller: WholeBiller) -> dict[str, Any]:
    """What the sandbox's own database holds for the biller: the paid invoice's payments, the
    pause and resume events, and its payouts (none made by the night: the payout job reads)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(f"sqlite:///{database}")
    with engine.connect() as db:
        payments = db.execute(
            text("SELECT count(*) FROM payments WHERE invoice_id = :i"),
            {"i": biller.paid_invoice["id"]},
        ).scalar_one()
        events = Counter(
            row[0]
            for row in db.execute(
                text("SELECT type FROM webhook_events WHERE biller_id = :b"),
                {"b": biller.biller_id},
            )
            if "COLLECTION_PAUSED" in row[0] or "COLLECTION_RESUMED" in row[0]
        )
    engine.dispose()
    return {"payments": payments, "events": events}


def payout_fate(admin: SandboxAdmin, home: Path, biller: WholeBiller) -> list[str]:
    """What is wrong with the payout report the night found (empty when nothing): it must be
    put away in ``processed/`` (or ``failed/`` with a report saying why) unchanged, the ledger
    must hold the file as done with that report and every payout the report lists, and the
    service's payouts for the period must be what they were when it was downloaded."""
    from ledger import FileState
    from tasks.common.session import open_ledger
    from tasks.inbox.ledger_files import sha256_of

    name = biller.payout_report.name
    inbox = home / "inbox" / biller.block
    found = [p for p in inbox.rglob(name) if {"processed", "failed"} & set(p.parts)]
    if len(found) != 1:
        return [f"{name}: put away {len(found)} times ({sorted(map(str, found))})"]
    kept = found[0]
    wrong: list[str] = []
    reports = [p for p in kept.parent.glob(f"{kept.stem}*") if p != kept]
    if "failed" in kept.parts and not any(p.stat().st_size for p in reports):
        wrong.append(f"{name}: in failed/ without a report saying why")
    listed = {row["Payout ID"] for row in csv.DictReader(io.StringIO(kept.read_text("utf-8")))}
    with open_ledger() as ledger:
        record = ledger.file_seen(sha256_of(kept), biller=biller.block, kind="inbox-payouts")
        payouts = {p.payout_id for p in ledger.payouts_by_id(biller.biller_id, sorted(listed))}
    done = FileState.REJECTED if "failed" in kept.parts else FileState.IMPORTED
    if record is None or record.state != done or not record.report_path:
        wrong.append(f"{name}: the ledger's record is {record}, not {done.value} with a report")
    elif not Path(record.report_path).is_file():
        wrong.append(f"{name}: the ledger names a report that is not there")
    if "processed" in kept.parts and not listed <= payouts:
        wrong.append(f"{name}: the ledger lacks payouts {sorted(listed - payouts)}")
    if payout_export(admin, biller.biller_id, biller.payout_period) != kept.read_bytes():
        wrong.append(f"{name}: the service's payouts of its period changed during the night")
    return wrong


def live_refresh_token(database: Path, block: str) -> bool:
    """Whether the block's stored refresh token is the live one at the sandbox (neither used
    nor revoked); both its tokens go to the secret scan."""
    from blocks import BillerCredentials

    stored = BillerCredentials.load(block).token_set()
    register_secret(stored.refresh_token)
    register_secret(stored.access_token)
    return live_at_sandbox(database, stored.refresh_token)


def live_at_sandbox(database: Path, refresh_token: str) -> bool:
    """Whether the sandbox issued ``refresh_token`` and has neither used nor revoked it."""
    from sqlalchemy import create_engine, text

    from sandbox.oauth.tokens import digest

    engine = create_engine(f"sqlite:///{database}")
    with engine.connect() as db:
        row = db.execute(
            text("SELECT used_at, revoked_at FROM refresh_tokens WHERE digest = :d"),
            {"d": digest(refresh_token)},
        ).one_or_none()
    engine.dispose()
    return row is not None and row[0] is None and row[1] is None


def server_texts(running: Platform) -> None:
    """The Prefect server's stored logs and every artifact, for the secret scan."""
    from prefect.client.orchestration import get_client

    with running.api(), get_client(sync_client=True) as client:
        offset, lines = 0, []
        while batch := client.read_logs(limit=200, offset=offset):
            lines += [f"{log.name} {log.message}" for log in batch]
            offset += len(batch)
        offset, texts = 0, []  # the server answers 200 at most a page
        while batch := client.read_artifacts(limit=200, offset=offset):
            texts += [str(artifact.data) for artifact in batch]
            offset += len(batch)
    register_log("\n".join(lines), label="soak: Prefect server logs")
    register_log("\n".join(texts), label="soak: artifacts")


def morning_commands(running: Platform, blocks: list[str]) -> dict[str, int]:
    """An operator's morning after the night: ``billops ledger status``, ``audit``, ``inbox
    status`` and ``auth status`` of every biller, on the platform's settings; each output goes
    to the secret scan. Each command -> its exit code."""
    wanted = [["ledger", "status"], ["audit"], ["inbox", "status"]]
    wanted += [["auth", "status", "--block", block] for block in blocks]
    codes: dict[str, int] = {}
    for args in wanted:
        done = subprocess.run(
            billops_command(*args),
            env=running.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        name = "billops " + " ".join(args)
        register_log(done.stdout + done.stderr, label=f"soak: {name}")
        codes[name] = done.returncode
    return codes

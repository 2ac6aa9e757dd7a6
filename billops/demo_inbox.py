"""The demo's inbox and webhook steps: the file is dropped into the inbox and the watcher takes
it, and the sandbox's webhooks reach a receiver whose events start a deployment run through its
trigger (README, "The inbox" and "The webhook receiver")."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from rich.console import Console

from billops.listen import tcp_listener

PLATFORM_BLOCK = "demo-platform"
WAIT_SECONDS = 120.0


@dataclass
class DemoHooks:
    """The running receiver, the ledger it stores into, and the deployment its events start."""

    url: str
    ledger: Any
    deployment_id: UUID
    deployment_name: str


def _triggers(deployment: str) -> list[Any]:
    import yaml
    from prefect.events import DeploymentEventTrigger

    from billops.deploy_cli import PREFECT_FILE

    spec = yaml.safe_load(PREFECT_FILE.read_text(encoding="utf-8"))
    [found] = [d for d in spec["deployments"] if d["name"] == deployment]
    return [DeploymentEventTrigger(**trigger) for trigger in found.get("triggers", [])]


@contextmanager
def webhook_receiver(
    root: str, seeded: dict[str, Any], blocks: list[str], console: Console
) -> Iterator[DemoHooks]:
    """Subscribe a receiver on a loopback port (``billops webhooks setup``'s steps), deploy
    ``poll-import-jobs`` with its triggers, and serve until the block ends."""
    import uvicorn
    from pydantic import SecretStr

    from billops.webhooks_app import create_app
    from blocks import PlatformCredentials
    from flows.payment_requests import poll_import_jobs
    from ledger import Ledger
    from ledger.settings import BillopsSettings
    from tasks.webhooks.directory import map_billers
    from tasks.webhooks.subscription import set_up_webhooks

    PlatformCredentials(
        environment="sandbox",
        base_url=f"{root}/api",
        client_id=seeded["clientId"],
        client_secret=SecretStr(seeded["clientSecret"]),
    ).save(PLATFORM_BLOCK, overwrite=True)
    platform = PlatformCredentials.load_named(PLATFORM_BLOCK)
    listener = tcp_listener("127.0.0.1", 0, backlog=128)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/webhooks"
    set_up_webhooks(platform, url=url, events=["payment-request"])
    ledger = Ledger(BillopsSettings().ledger_database_url)
    map_billers(ledger, blocks)
    deployment: Any = poll_import_jobs.to_deployment(
        name="poll-import-jobs", triggers=_triggers("poll-import-jobs")
    )
    deployment_id: UUID = deployment.apply()

    def settings() -> Any:
        return PlatformCredentials.load_named(PLATFORM_BLOCK).webhooks

    server = uvicorn.Server(
        uvicorn.Config(create_app(ledger, settings), log_level="warning", access_log=False)
    )
    thread = threading.Thread(
        target=contextvars.copy_context().run,
        args=(server.run,),
        kwargs={"sockets": [listener]},
        daemon=True,
    )
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.05)
    console.print(f"   webhook receiver listening at {url}, subscribed to payment-request events")
    try:
        yield DemoHooks(url, ledger, deployment_id, "poll-import-jobs")
    finally:
        server.should_exit = True
        thread.join(30)
        listener.close()
        ledger.close()


def import_through_inbox(
    inbox: Path, block: str, write: Callable[[Path], Path], console: Console
) -> Path:
    """Drop the file written by ``write`` into the biller's inbox, let a watcher take it, and
    return the folder it was put away in."""
    from flows.inbox import run_here
    from tasks.inbox.watch import Watcher, WatchOptions

    folder = inbox / block
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "inbox.yaml").write_text("on_bad_rows: skip\n", encoding="utf-8")
    dropped = write(folder / "payment-requests" / "payment-requests.csv")
    console.print(f"4. dropped it into the inbox: {dropped}; the watcher takes it…")
    watcher = Watcher(inbox, run_here, WatchOptions(concurrency=1, settle_seconds=0.5))
    thread = threading.Thread(target=contextvars.copy_context().run, args=(watcher.run,))
    thread.start()
    deadline = time.monotonic() + WAIT_SECONDS
    try:
        while not (reports := list(folder.glob("*/**/payment-requests.csv.inbox.txt"))):
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"the watcher did not process {dropped.name} in time")
            time.sleep(0.2)
    finally:
        watcher.stop()
        thread.join(60)
    report = reports[0]
    outcome = next(line for line in report.read_text().splitlines() if line.startswith("outcome"))
    console.print(f"   {outcome.split(':', 1)[1].strip()}: put away in {report.parent}")
    return report.parent


def show_webhook_run(hooks: DemoHooks, console: Console) -> None:
    """The first stored webhook event, and the run its trigger started."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    deadline = time.monotonic() + WAIT_SECONDS
    while not (events := hooks.ledger.webhook_events(limit=1)):
        if time.monotonic() > deadline:
            raise RuntimeError("no webhook reached the receiver")
        time.sleep(0.2)
    event = events[0]
    console.print(
        f"5. webhook {event.type} arrived at the receiver (verified, stored, acknowledged) → "
        f"Prefect event billops.service.{event.kind}.{event.type.lower()}"
    )
    wanted = DeploymentFilter(id=DeploymentFilterId(any_=[hooks.deployment_id]))
    with get_client(sync_client=True) as client:
        while not (runs := client.read_flow_runs(deployment_filter=wanted)):
            if time.monotonic() > deadline:
                raise RuntimeError("the event started no run")
            time.sleep(0.5)
    run = runs[0]
    console.print(
        f"   its trigger started run {run.name!r} of {hooks.deployment_name} for "
        f"{run.parameters.get('biller')} ({run.state_name}; a worker runs it)"
    )

"""``billops webhooks``: run the receiver, set up the subscription, list, replay."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from blocks.webhook_settings import WebhookReceiverSettings

if TYPE_CHECKING:
    from blocks import PlatformCredentials

app = typer.Typer(help="The webhook receiver and its subscription.", no_args_is_help=True)
PlatformOption = Annotated[
    str, typer.Option("--platform", help="Name of the platform credential block.")
]


def _platform(name: str) -> PlatformCredentials:
    """The platform credential block ``name``; a usage error saying how to create it when there
    is none (Prefect's own words name neither the option nor the command)."""
    from blocks import PlatformCredentials

    try:
        return PlatformCredentials.load_named(name)
    except ValueError as exc:
        if "Unable to find block document" not in str(exc):
            raise
        raise typer.BadParameter(
            f"no platform credential block named {name!r} on this Prefect server; create it "
            "in the Prefect UI (Blocks, +, 'Billops Platform Credentials': your app's client id "
            "and secret) after `billops setup`",
            param_hint="'--platform'",
        ) from None


def _settings_loader(block: str) -> WebhookReceiverSettings:
    settings = _platform(block).webhooks
    if settings is None or settings.signing_secret is None:
        raise typer.BadParameter(
            f"block {block!r} has no webhook signing secret: run `billops webhooks setup "
            f"--platform {block} --url URL` first",
            param_hint="'--platform'",
        )
    return settings


def _server_class() -> type:
    import uvicorn

    class StopsCleanly(uvicorn.Server):
        """uvicorn re-raises a SIGTERM after its graceful shutdown, so the process would end
        "killed by SIGTERM"; for ``serve`` a stop is the normal end, and it exits 0."""

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            self._captured_signals.clear()

    return StopsCleanly


def _receiver_path(value: str) -> str:
    """The receiver's path as the option's check: Starlette's router asserts a leading '/'
    (``hooks`` ended in an AssertionError traceback)."""
    if not value.startswith("/") or any(c in value for c in "?# \t"):
        raise typer.BadParameter(f"{value!r} is not a URL path: start it with '/', e.g. /webhooks")
    return value


@app.command("serve")
def serve(
    platform: PlatformOption,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on; 0 picks a free one.")] = 8470,
    path: Annotated[
        str, typer.Option(help="Path deliveries are POSTed to.", callback=_receiver_path)
    ] = "/webhooks",
) -> None:
    """Receive the service's webhooks until SIGTERM or Ctrl-C. Prints 'webhook receiver ready:
    URL' once listening. Put it behind a TLS reverse proxy (README)."""
    import uvicorn

    from billops.listen import tcp_listener
    from billops.webhooks_app import create_app
    from tasks.common.session import open_ledger

    _settings_loader(platform)  # fail now, with the command to run, if setup was never done
    ledger = open_ledger()
    try:
        application = create_app(ledger, lambda: _settings_loader(platform), path=path)
        listener = tcp_listener(host, port, backlog=2048)
        bound = listener.getsockname()[1]
        config = uvicorn.Config(
            application, log_level="warning", access_log=False, lifespan="on", backlog=2048
        )
        server = _server_class()(config)
        typer.echo(f"webhook receiver ready: http://{host}:{bound}{path}", err=False)
        server.run(sockets=[listener])
    finally:
        ledger.close()


@app.command("setup")
def setup(
    platform: PlatformOption,
    url: Annotated[str, typer.Option(help="The receiver's public https URL (loopback: http).")],
    events: Annotated[
        str, typer.Option(help="Comma-separated event kinds to subscribe to.")
    ] = "payment,dd-mandate,invoice,biller,customer,payment-request,payout",
    target_auth: Annotated[
        str, typer.Option(help="Credentials the service presents: api-key, basic or none.")
    ] = "api-key",
    key_mode: Annotated[
        str, typer.Option(help="How the secret becomes the HMAC key: either, utf8 or base64.")
    ] = "either",
    biller: Annotated[
        list[str] | None,
        typer.Option(help="Biller credential blocks to map to their billers \\[default: all]."),
    ] = None,
) -> None:
    """Subscribe URL, set the target credentials, rotate the signing secret into the block, and
    learn which biller each biller credential block serves."""
    from tasks.common.session import all_biller_blocks, open_ledger
    from tasks.webhooks.directory import map_billers
    from tasks.webhooks.subscription import set_up_webhooks

    if target_auth not in ("api-key", "basic", "none"):
        raise typer.BadParameter("choose api-key, basic or none", param_hint="'--target-auth'")
    if key_mode not in ("either", "utf8", "base64"):
        raise typer.BadParameter("choose either, utf8 or base64", param_hint="'--key-mode'")
    kinds = [kind.strip() for kind in events.split(",") if kind.strip()]
    block = _platform(platform)
    try:
        result = set_up_webhooks(
            block,
            url=url,
            events=kinds,
            target_auth=target_auth,  # type: ignore[arg-type]
            key_mode=key_mode,  # type: ignore[arg-type]
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--events'") from None
    verb = "created" if result.created else "updated"
    typer.echo(f"subscription {result.webhook_id} {verb}: {url} ({', '.join(result.events)})")
    typer.echo(f"signing secret rotated into block {platform}; target auth: {result.target_auth}")
    with open_ledger() as ledger:
        mapped = map_billers(ledger, biller or all_biller_blocks())
    for name, biller_id in sorted(mapped.items()):
        typer.echo(f"biller {biller_id} -> block {name}")


@app.command("list")
def list_command(platform: PlatformOption) -> None:
    """The app's subscriptions, and the events stored in the ledger."""
    from tasks.common.session import open_ledger

    block = _platform(platform)
    client = block.get_client()
    try:
        hooks = client.webhooks.list(block.client_id)
    finally:
        client.close()
    for hook in hooks:
        state = "enabled" if hook.enabled else "disabled"
        kinds = ", ".join(str(kind) for kind in hook.events)
        typer.echo(f"{hook.id}  {state:<8} {hook.url}  [{kinds}]")
    if not hooks:
        typer.echo("no subscriptions")
    with open_ledger() as ledger:
        stored = ledger.webhook_events()
    waiting = sum(1 for event in stored if event.emitted_at is None)
    typer.echo(f"{len(stored)} event(s) stored, {waiting} waiting to be emitted")


@app.command("replay")
def replay(
    since: Annotated[
        datetime, typer.Option(help="Re-emit events received at or after this time (UTC).")
    ],
    biller_id: Annotated[str | None, typer.Option(help="Only this biller's events.")] = None,
) -> None:
    """Emit stored events to Prefect again (each under a new event id, so triggers act again)."""
    from tasks.common.session import open_ledger
    from tasks.webhooks.directory import BillerDirectory
    from tasks.webhooks.emitter import Emitter

    moment = since if since.tzinfo else since.replace(tzinfo=UTC)
    with open_ledger() as ledger:
        records = ledger.webhook_events(since=moment, biller_id=biller_id)
        sent = asyncio.run(Emitter(ledger, BillerDirectory(ledger)).replay(records))
    typer.echo(f"{sent} event(s) re-emitted")

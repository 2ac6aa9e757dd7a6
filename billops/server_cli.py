"""``billops server start|stop|status``: a persistent local Prefect server every command uses.

Without it each command starts Prefect's temporary server and waits 10-20 s for it. ``start``
runs Prefect's own server (``prefect server start``: API, UI, scheduler) in the background on the
current ``PREFECT_HOME`` — the same database the temporary servers used, so blocks and runs made
before are still there — and writes down where it is (``$PREFECT_HOME/billops-server.json``);
every billops command then talks to it while it runs (:mod:`billops.prefect_env`). Its output
goes to ``$PREFECT_HOME/billops-server.log``.

Exit codes: 0 ok (``status``: running), 1 failed (``status``: not running), 2 usage error.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from billops.prefect_env import (
    ServerRecord,
    port_open,
    prefect_home,
    process_alive,
    read_record,
    record_path,
    running_server,
    write_record,
)

app = typer.Typer(
    help="A persistent local Prefect server (API, UI, schedules) that every command uses.",
    no_args_is_help=True,
)
LOG_NAME = "billops-server.log"
START_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 20.0


def server_environment(url: str, home: Path) -> dict[str, str]:
    """The server's environment: its home, its UI pointed at its own port, no analytics."""
    env = dict(os.environ)
    env.pop("PREFECT_API_URL", None)
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_UI_API_URL=f"{url}/api",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
    )
    return env


def healthy(url: str, timeout: float = 2.0) -> bool:
    """True when the server at ``url`` answers its health check."""
    import urllib.request  # here: the module costs every other command its import time

    try:
        with urllib.request.urlopen(f"{url}/api/health", timeout=timeout) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _log_tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start_server(host: str, port: int, home: Path) -> ServerRecord:
    """Start Prefect's server in the background and wait until it answers; raises on failure."""
    url = f"http://{host}:{port}"
    if port_open(url):
        raise RuntimeError(
            f"port {port} on {host} is already in use (another Prefect server?): "
            "choose another with --port"
        )
    home.mkdir(parents=True, exist_ok=True)
    log = home / LOG_NAME
    command = [sys.executable, "-m", "prefect", "server", "start", "--host", host]
    with log.open("ab") as output:
        process = subprocess.Popen(
            [*command, "--port", str(port)],
            env=server_environment(url, home),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: it outlives this terminal
        )
    record = ServerRecord(url=url, pid=process.pid, prefect_home=str(home), log=str(log))
    write_record(record)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            record_path(home).unlink(missing_ok=True)
            raise RuntimeError(
                f"the Prefect server exited at start (code {process.returncode}); "
                f"the end of {log}:\n{_log_tail(log)}"
            )
        if healthy(url):
            return record
        time.sleep(0.5)
    stop_server(record)
    raise RuntimeError(f"the Prefect server did not answer within {START_TIMEOUT_SECONDS:.0f} s")


def stop_server(record: ServerRecord) -> bool:
    """Stop the server's process group (SIGTERM, then SIGKILL); True when it was running."""
    was_running = process_alive(record.pid)
    if was_running:
        _signal_group(record.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        while process_alive(record.pid) and time.monotonic() < deadline:
            _reap(record.pid)
            time.sleep(0.2)
        if process_alive(record.pid):
            _signal_group(record.pid, signal.SIGKILL)
            _reap(record.pid)
    record_path(Path(record.prefect_home)).unlink(missing_ok=True)
    return was_running


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return  # the group has already ended: nothing to signal
    except PermissionError:
        os.kill(pid, sig)


def _reap(pid: int) -> None:
    """Collect the exit status when the server is this process's child (tests start it so)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


HostOption = Annotated[str, typer.Option(help="Interface to listen on.")]
PortOption = Annotated[int, typer.Option(min=1, max=65535, help="Port of the API and the UI.")]


@app.command("start")
def start(host: HostOption = "127.0.0.1", port: PortOption = 4200) -> None:
    """Start the server in the background (on $PREFECT_HOME) unless it is running already."""
    home = prefect_home()
    running = running_server(home)
    if running is not None:
        typer.echo(f"already running at {running.url} (pid {running.pid})")
        return
    try:
        record = start_server(host, port, home)
    except RuntimeError as exc:
        typer.secho(f"billops server start: {exc}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1) from None
    typer.echo(f"Prefect server running at {record.url} (UI and API), pid {record.pid}")
    typer.echo(f"  data: {home}   log: {record.log}")
    typer.echo("  every billops command uses it while it runs; `billops server stop` stops it")


@app.command("stop")
def stop() -> None:
    """Stop the server `billops server start` started for this $PREFECT_HOME."""
    record = read_record()
    if record is None:
        typer.echo(f"no billops server recorded for {prefect_home()}: nothing to stop")
        return
    was_running = stop_server(record)
    typer.echo(f"stopped the server at {record.url}" if was_running else "it was not running")


@app.command("status")
def status() -> None:
    """Say whether the server is running, where, and since which process (exit 1 if not)."""
    home = prefect_home()
    record = running_server(home)
    if record is None:
        typer.echo(
            f"no billops server running for {home}: commands start Prefect's temporary server "
            "(10-20 s each); `billops server start` starts a persistent one"
        )
        raise typer.Exit(1)
    answering = "answering" if healthy(record.url) else "not answering its health check"
    typer.echo(f"running at {record.url} (pid {record.pid}), {answering}")
    typer.echo(f"  data: {record.prefect_home}   log: {record.log}")

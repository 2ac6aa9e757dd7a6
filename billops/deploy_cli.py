"""``billops deploy`` (setup, the work pool, then every deployment) and ``billops ui``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console()
PREFECT_FILE = Path(__file__).resolve().parents[1] / "deployments" / "prefect.yaml"
WORK_POOL = "billops"


def ensure_work_pool(name: str = WORK_POOL) -> bool:
    """Create the process work pool the deployments name, if missing; True when created."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(name)
            return False
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(name=name, type="process"))
            return True


def deploy_command(
    prefect_file: Annotated[
        Path, typer.Option(exists=True, dir_okay=False, help="The deployments file.")
    ] = PREFECT_FILE,
) -> None:
    """Run `billops setup`, create the `billops` work pool, then deploy every deployment."""
    from billops.setup_cli import run_setup

    run_setup()
    if ensure_work_pool():
        console.print(f"work pool {WORK_POOL!r} created (type process)")
    command = [
        sys.executable,
        "-m",
        "prefect",
        "--no-prompt",
        "deploy",
        "--all",
        "--prefect-file",
        str(prefect_file),
    ]
    # prefect deploy resolves module entrypoints from the working directory: the project root.
    done = subprocess.run(command, cwd=prefect_file.parent.parent, check=False)
    if done.returncode != 0:
        console.print("[red]prefect deploy failed[/red] (its output is above)")
        raise typer.Exit(1)
    console.print(
        f"deployed. Start a worker: prefect worker start --pool {WORK_POOL}  "
        "(or see the README for serve())"
    )


def ui_command(
    home: Annotated[
        Path | None,
        typer.Option(help="The PREFECT_HOME whose runs to show (default: the demo's)."),
    ] = None,
    port: Annotated[int, typer.Option(help="Port of the UI.")] = 4200,
) -> None:
    """Open the Prefect UI on the runs of the demo (or of PREFECT_HOME). Ctrl-C stops it."""
    from ledger.settings import BillopsSettings

    prefect_home = home or BillopsSettings().home / "demo" / "prefect"
    env = dict(os.environ, PREFECT_HOME=str(prefect_home), PREFECT_SERVER_ANALYTICS_ENABLED="false")
    env.pop("PREFECT_API_URL", None)
    console.print(
        f"Prefect UI on http://127.0.0.1:{port} (runs from {prefect_home}); Ctrl-C stops it"
    )
    command = [
        sys.executable,
        "-m",
        "prefect",
        "server",
        "start",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    raise typer.Exit(subprocess.call(command, env=env))

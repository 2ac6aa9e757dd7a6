"""``billops deploy`` (setup, the work pool, then every deployment) and ``billops ui``."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from billops.console import LazyConsole

console = LazyConsole()
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


def _with_choices(schema: dict[str, Any], names: list[str]) -> bool:
    """Add ``names`` as the choices of the ``biller`` / ``billers`` fields; True when changed."""
    properties = schema.get("properties", {})
    changed = False
    biller = properties.get("biller")
    if isinstance(biller, dict) and biller.get("type") == "string":
        changed |= biller.get("enum") != names
        biller["enum"] = names
    billers = properties.get("billers")
    for option in (billers or {}).get("anyOf", [billers] if billers else []):
        if isinstance(option, dict) and option.get("type") == "array":
            items = option.setdefault("items", {"type": "string"})
            changed |= items.get("enum") != names
            items["enum"] = names
    return changed


def offer_biller_choices() -> list[str]:
    """Make the run forms of every deployment list the biller credential blocks there are.

    Prefect's forms offer a list only from the schema saved with the deployment, so the list is
    what existed when this ran: ``billops deploy`` and ``billops sandbox login`` run it, and so
    can anyone after adding a block (``billops deploy`` again). Returns the block names.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import DeploymentUpdate

    from tasks.common.session import all_biller_blocks

    names = all_biller_blocks()
    if not names:
        return names
    with get_client(sync_client=True) as client:
        for deployment in client.read_deployments():
            schema = copy.deepcopy(deployment.parameter_openapi_schema or {})
            if _with_choices(schema, names):
                client.update_deployment(
                    deployment.id, DeploymentUpdate(parameter_openapi_schema=schema)
                )
    return names


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
    billers = offer_biller_choices()
    if billers:
        console.print(f"the run forms offer these billers: {', '.join(billers)}")
    console.print(
        f"deployed. Start a worker: prefect worker start --pool {WORK_POOL}  "
        "(or see the README for serve())"
    )


def ui_command(
    home: Annotated[
        Path | None,
        # A file there would reach Prefect's server, which dies with its tracebacks.
        typer.Option(
            file_okay=False, help="The PREFECT_HOME whose runs to show (default: the demo's)."
        ),
    ] = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port of the UI.")] = 4200,
) -> None:
    """Open the Prefect UI on the runs of the demo (or of PREFECT_HOME). Ctrl-C stops it."""
    from billops.prefect_env import port_open
    from billops.server_cli import server_environment
    from ledger.settings import BillopsSettings

    prefect_home = home or BillopsSettings().home / "demo" / "prefect"
    url = f"http://127.0.0.1:{port}"
    if port_open(url):
        console.print(f"[red]failed:[/red] port {port} is in use: choose another with --port")
        raise typer.Exit(1)
    console.print(f"Prefect UI on {url} (runs from {prefect_home}); Ctrl-C stops it")
    command = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1"]
    # The server replaces this process: stopping `billops ui` stops the server (no orphan), and
    # the UI asks the API on the port it is served from, not Prefect's default 4200.
    sys.stdout.flush()
    os.execve(
        sys.executable,
        [*command, "--port", str(port)],
        server_environment(url, prefect_home),
    )

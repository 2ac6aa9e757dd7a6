"""``billops demo``: the main job on a fresh machine, with nothing configured.

Everything lives under one demo folder: its own ``PREFECT_HOME`` (Prefect's ephemeral server and
the run history ``billops ui`` shows afterwards) and ``BILLOPS_HOME`` (ledger, sandbox database,
reports). The steps, as a person would do them:

1. start a local sandbox of the service and seed two demo billers (customers, invoices…);
2. log in to each biller through the real authorization-code flow — the demo clicks "Approve" on
   the consent page where a person would — into credential blocks;
3. write a payment-request file for the first biller with a few deliberately bad rows;
4. import it for real (``--apply --on-bad-rows skip``), polling the jobs to completion;
5. run the nightly flow over both billers;
6. let 20 days pass in the sandbox; the failing test payer's debit bounces, and the delinquency
   plan pauses that customer's collection (approved as an operator) and leaves the others alone;
7. the first biller downloads its bank statement (the sandbox's export, Barclays' layout) and
   imports it: a dry run, then the recording approved as an operator; what was recorded and
   what waits for a person are printed;
8. print what was created and rejected, where the reports are, and how to open the Prefect UI.

The sandbox stops and Prefect's ephemeral server exits with the process: nothing is left running.
``billops demo`` runs this module in a fresh interpreter so the demo's ``PREFECT_HOME`` is set
before Prefect is imported.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rich.console import Console

console = Console()


def demo_environment(folder: Path) -> dict[str, str]:
    """The environment the demo runs in: every path under ``folder``, no Prefect server named."""
    env = dict(os.environ)
    env.pop("PREFECT_API_URL", None)
    env.pop("BILLOPS_LEDGER_URL", None)
    env.update(
        PREFECT_HOME=str(folder / "prefect"),
        BILLOPS_HOME=str(folder / "home"),
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="60",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_LOGGING_LEVEL=env.get("PREFECT_LOGGING_LEVEL", "WARNING"),
    )
    return env


def fresh_folder(folder: Path) -> None:
    """Start each demo from nothing: remove what an earlier demo left in its own subfolders."""
    import shutil

    for part in ("prefect", "home", "inbox"):
        shutil.rmtree(folder / part, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)


def run_in_fresh_interpreter(folder: Path) -> int:
    """What ``billops demo`` does: this module's ``main`` in a child process with the demo's env."""
    import subprocess

    fresh_folder(folder)
    command = [sys.executable, "-m", "billops.demo", str(folder)]
    return subprocess.call(command, env=demo_environment(folder))


def main(folder: Path) -> int:
    """Run the demo; returns the process exit code."""
    from billops.demo_steps import run_demo

    return run_demo(folder, console)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))

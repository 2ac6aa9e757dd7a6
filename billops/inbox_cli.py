"""``billops inbox``: watch the drop folders, scan them once, and say what is waiting,
processing, done and failed (README, "The inbox")."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(help="The inbox: drop a file, get a report.", no_args_is_help=True)
RootOption = Annotated[
    Path | None, typer.Option(help="The inbox root \\[default: $BILLOPS_HOME/inbox].")
]


def _root(root: Path | None) -> Path:
    from tasks.inbox.layout import default_root

    folder = (root or default_root()).resolve()
    if folder.exists() and not folder.is_dir():
        # A file here read as an empty inbox ("no biller folders", "0 file(s) taken", exit 0).
        raise typer.BadParameter(
            f"{folder} is a file: name the inbox folder, the one holding a folder per biller",
            param_hint="'--root'",
        )
    return folder


@app.command("watch")
def watch(
    root: RootOption = None,
    concurrency: Annotated[
        int, typer.Option(min=1, max=16, help="Files processed at the same time.")
    ] = 2,
    settle_seconds: Annotated[
        float, typer.Option(min=0, help="A file is complete once unchanged this long.")
    ] = 2.0,
    via_deployment: Annotated[
        str | None,
        typer.Option(
            help="Start each file's run through this deployment (e.g. "
            "process-inbox-file/process-inbox-file) instead of in this process."
        ),
    ] = None,
) -> None:
    """Process each file dropped into the inbox, one flow run per file, until SIGTERM or Ctrl-C
    (the files in hand finish first). Prints 'inbox watcher ready: ROOT' once watching."""
    from flows.inbox import run_here, start_file_run
    from tasks.inbox.claim import Claimed
    from tasks.inbox.watch import Watcher, WatchOptions

    folder = _root(root)

    def process(claimed: Claimed) -> Any:
        if via_deployment:
            return start_file_run(claimed, via_deployment)
        return run_here(claimed)

    watcher = Watcher(folder, process, WatchOptions(concurrency, settle_seconds))
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: watcher.stop())
    typer.echo(f"inbox watcher ready: {folder}")
    watcher.run()
    typer.echo(f"inbox watcher stopped after {watcher.processed} file(s)")


@app.command("scan")
def scan(
    root: RootOption = None,
    via_deployment: Annotated[
        str | None, typer.Option(help="Start each file's run through this deployment.")
    ] = None,
) -> None:
    """One pass: resume what a stopped process left, process every complete file, then exit
    (what the inbox-scan deployment does every few minutes)."""
    from flows.inbox import inbox_scan

    state = inbox_scan(root=_root(root), via_deployment=via_deployment, return_state=True)
    typer.echo(state.message or state.name)


@app.command("status")
def status(
    root: RootOption = None,
    files: Annotated[bool, typer.Option(help="List each file, not only the counts.")] = False,
) -> None:
    """Per biller: files waiting, processing (and left by a stopped process), processed, failed."""
    from tasks.inbox.status import inbox_status

    folder = _root(root)
    found = inbox_status(folder)
    if not found:
        typer.echo(f"no biller folders under {folder}")
        return
    typer.echo(
        f"{'biller':<24} {'waiting':>8} {'processing':>11} {'left':>5} "
        f"{'processed':>10} {'failed':>7}"
    )
    for biller in found:
        typer.echo(
            f"{biller.biller:<24} {len(biller.waiting):>8} {len(biller.processing):>11} "
            f"{len(biller.orphaned):>5} {len(biller.processed):>10} {len(biller.failed):>7}"
        )
        if files:
            for label, names in (
                ("waiting", biller.waiting),
                ("processing", biller.processing),
                ("left by a stopped process", biller.orphaned),
                ("processed", biller.processed),
                ("failed", biller.failed),
            ):
                for name in names:
                    typer.echo(f"  {label}: {name}")

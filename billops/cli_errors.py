"""How the command line reports a problem: one clear line and the documented exit code.

Exit codes (``docs/conventions.md`` §5 Errors, retries and exit codes): 0 ok, 1 failed, 2 usage
error, 3 finished with rejected or failed rows. An error that escapes a command is printed as one
message on stderr — never a traceback, never local variables (they may hold tokens) — and the
command exits 1; ``billops --verbose ...`` prints the traceback too, and lets Prefect's log lines
keep theirs. A sub-application listed in :data:`LAZY_GROUPS` is imported only when its command
runs, so a quick command does not pay for another's heavy imports.
"""

from __future__ import annotations

import importlib
import logging
import sys
import traceback
from typing import Any

import typer
from typer.core import TyperGroup

EXIT_FAILED = 1
EXIT_INTERRUPTED = 130
VERBOSE_FLAG = "--verbose"

# name -> (module, attribute, one-line help): sub-applications loaded only when used.
LAZY_GROUPS: dict[str, tuple[str, str, str]] = {
    "bank": ("billops.bank_cli", "app", "Bank statements: profiles, detection and preview."),
    "webhooks": ("billops.webhooks_cli", "app", "The webhook receiver and its subscription."),
}

_state = {"verbose": False}


def set_verbose(verbose: bool) -> None:
    _state["verbose"] = verbose


def verbose() -> bool:
    return _state["verbose"]


def _without_credentials(url: str, *, keep_path: bool) -> str:
    """``url`` as it may be printed: no user or password, no query (a code or a token)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/') if keep_path else ''}"


def _prefect_api_url() -> str | None:
    """The Prefect API this process talks to, when Prefect is loaded and names one."""
    if "prefect" not in sys.modules:
        return None
    from prefect.settings import get_current_settings

    url = get_current_settings().api.url
    return str(url) if url else None


def _unreachable(exc: BaseException) -> str | None:
    """A refused or timed-out connection, named by the server it was for.

    httpx's own words ("[Errno 111] Connection refused") say neither which server nor what to
    do; the Prefect API is the one most often down at night (``README.md``, ``billops server
    start``).
    """
    httpx = sys.modules.get("httpx")
    if httpx is None or not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return None
    try:
        target = str(exc.request.url)
    except RuntimeError:  # raised without the request it was for
        return None
    reason = " ".join(str(exc).split()) or type(exc).__name__
    api = _prefect_api_url()
    if api and target.startswith(api.rstrip("/")):
        return (
            f"cannot reach the Prefect API at {_without_credentials(api, keep_path=True)} "
            f"({reason}): start that server, or fix PREFECT_API_URL (unset, billops uses the "
            "server `billops server start` runs, else a temporary one)"
        )
    return (
        f"cannot reach {_without_credentials(target, keep_path=False)} ({reason}): "
        "is it running, and is the address right?"
    )


def describe(exc: BaseException) -> str:
    """The message a person reads: the error's own words, with its kind when that helps."""
    unreachable = _unreachable(exc)
    if unreachable is not None:
        return unreachable
    message = " ".join(str(exc).split()) or "(no message)"
    name = type(exc).__name__
    if name in ("Exception", "RuntimeError") or message.startswith(name):
        return message
    return f"{name}: {message}"


def report_error(exc: BaseException, *, prefix: str = "error") -> None:
    """Print ``exc`` as one line on stderr (with the traceback under ``--verbose``)."""
    if verbose():
        traceback.print_exception(exc, file=sys.stderr)
    typer.secho(f"{prefix}: {describe(exc)}", err=True, fg=typer.colors.RED)
    if not verbose():
        typer.echo("(billops --verbose ... shows the traceback)", err=True)


def _is_cli_signal(exc: BaseException) -> bool:
    """Exit, Abort and usage errors: the CLI framework prints and exits with their code."""
    return isinstance(exc, typer.Exit | typer.Abort) or hasattr(exc, "exit_code")


class BillopsGroup(TyperGroup):
    """The root command: lazily loaded sub-applications, and errors turned into one line."""

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_GROUPS})

    _resolving = False

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Loads a lazy sub-application for real: it is about to run."""
        self._resolving = True
        try:
            return super().resolve_command(ctx, args)
        finally:
            self._resolving = False

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in LAZY_GROUPS and cmd_name not in self.commands:
            module, attribute, help_text = LAZY_GROUPS[cmd_name]
            if not self._resolving:  # listed in a help page: its one line is enough
                return TyperGroup(name=cmd_name, help=help_text)
            command = typer.main.get_command(getattr(importlib.import_module(module), attribute))
            command.name = cmd_name
            self.commands[cmd_name] = command
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except Exception as exc:
            if _is_cli_signal(exc):
                raise
            report_error(exc)
            raise typer.Exit(EXIT_FAILED) from None


def verbose_first(args: list[str]) -> list[str]:
    """``billops run ... --verbose`` means ``billops --verbose run ...`` (the root's option)."""
    if VERBOSE_FLAG not in args[1:]:
        return args
    return [VERBOSE_FLAG, *(a for a in args if a != VERBOSE_FLAG)]


class _NoTracebackFormatter(logging.Formatter):
    """Formats a record as its wrapped formatter would, without the exception's traceback."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self._inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        # A copy: the same record goes on to the API handler, whose copy in the run's logs keeps
        # the traceback.
        bare = logging.makeLogRecord(record.__dict__)
        bare.exc_info, bare.exc_text, bare.stack_info = None, None, None
        return self._inner.format(bare)


def quiet_prefect_tracebacks() -> None:
    """Prefect's terminal lines without tracebacks (the run's logs keep them), unless verbose."""
    if verbose():
        return
    from prefect.logging.handlers import PrefectConsoleHandler

    seen: set[int] = set()
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            if id(handler) in seen or not isinstance(handler, PrefectConsoleHandler):
                continue
            seen.add(id(handler))
            if not isinstance(handler.formatter, _NoTracebackFormatter):
                handler.setFormatter(_NoTracebackFormatter(handler.formatter))

"""Workers for the crash tests, forked from one process that has already imported Prefect (a fresh
interpreter takes seconds to import it; a fork takes milliseconds, so a hundred trials fit).

Run ``python -m tests.blocks.kill_workers`` with ``PREFECT_API_URL`` and ``BILLOPS_HOME`` set; it
reads one command per line on stdin and answers on stdout:

- ``spawn BLOCK SECONDS GAP OUTDIR [REREAD [keep-going]]`` forks a worker and prints its pid.
  The worker calls ``GET /biller`` through the block's refreshing client every 50 ms for
  ``SECONDS``; the instant each token-endpoint answer arrives goes to ``OUTDIR/<pid>.answers``;
  right after each grant it writes ``OUTDIR/<pid>.gap`` and sleeps ``GAP`` seconds (a
  test-only widening of the gap between the grant and the block's save), then removes the file.
  With ``keep-going`` it does not stop at errors and logs each request to ``OUTDIR/<pid>.log``.
  At the end it writes
  ``OUTDIR/<pid>.json``: ``{"requests", "statuses", "errors"}`` (never a token). The tokens it
  was granted go to ``OUTDIR/<pid>.secrets``, for the test's secret scan to look for.
- ``reap`` collects finished or killed children; ``exit`` ends.

No thread runs in the forking process, and no client exists there before a fork: each worker
opens its own connections.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import cast

import httpx

# Imported before any fork, so that children start warm (the lazy imports of the refresh path).
import prefect.client.orchestration  # noqa: F401
import sqlalchemy.engine  # noqa: F401

import blocks._journal  # noqa: F401
import blocks._lock  # noqa: F401
import blocks._prefect_api  # noqa: F401
import ledger.settings  # noqa: F401
from billing_api import BillingClient, OAuthClient, RefreshingAuth, TokenManager, TokenSet
from blocks import BillerCredentials

ROOT = Path(__file__).resolve().parents[2]


def work(
    name: str, seconds: float, gap: float, outdir: Path, reread: float, keep_going: bool = False
) -> dict[str, object]:
    """One worker: GET /biller through the block for ``seconds``, widening the grant-save gap.

    ``keep_going``: do not stop after errors; log each request's time and outcome to
    ``OUTDIR/<pid>.log`` (for the server-restart test).
    """
    pid = os.getpid()
    log = (outdir / f"{pid}.log").open("a", buffering=1) if keep_going else None

    def in_the_gap(new: TokenSet) -> None:
        # For the test's secret scan only (outside BILLOPS_HOME): the tokens this worker got.
        with (outdir / f"{pid}.secrets").open("a") as handle:
            handle.write(f"{new.refresh_token}\n{new.access_token}\n")
        if gap <= 0:
            return
        marker = outdir / f"{pid}.gap"
        marker.write_text(str(new.rotation))
        time.sleep(gap)
        marker.unlink()

    statuses: Counter[int] = Counter()
    errors: list[str] = []
    requests, last_ok = 0, False
    block = _load(name, keep_going)
    manager = block.get_token_manager(after_grant=in_the_gap, reread_seconds=reread)
    _stamp_answers(manager, outdir / f"{pid}.answers")
    deadline = time.monotonic() + seconds
    with BillingClient(block.api_url, RefreshingAuth(manager), max_retries=0) as client:
        while time.monotonic() < deadline:
            try:
                client.request("biller.retrieve")
                statuses[200] += 1
                last_ok = True
                if log:
                    log.write(f"{time.time():.3f} ok\n")
            except Exception as exc:  # reported to the test, which decides
                errors.append(f"{type(exc).__name__}: {exc}")
                last_ok = False
                if log:
                    log.write(f"{time.time():.3f} error {type(exc).__name__}\n")
                    time.sleep(0.2)
                elif len(errors) >= 3:
                    break
            requests += 1
            time.sleep(0.05)
    return {
        "requests": requests,
        "statuses": dict(statuses),
        "errors": errors[-20:],
        "ended_ok": last_ok,
    }


def _stamp_answers(manager: TokenManager, path: Path) -> None:
    """Append the instant each token-endpoint answer arrives (its headers) to ``path``: a worker
    killed after its refresh intent tells by this whether the grant's answer had reached it (so
    the loss would be ours) or not (the service had the request)."""
    http = cast(OAuthClient, manager._endpoint)._http  # test-only instrumentation

    def answered(response: httpx.Response) -> None:
        with path.open("a") as handle:
            handle.write(f"{time.time():.6f}\n")

    http.event_hooks = {**http.event_hooks, "response": [answered]}


def _load(name: str, keep_going: bool) -> BillerCredentials:
    while True:
        try:
            return BillerCredentials.load_named(name)
        except Exception:
            if not keep_going:
                raise
            time.sleep(0.5)


def _spawn(
    name: str, seconds: float, gap: float, outdir: Path, reread: float, keep_going: bool
) -> int:
    # A fork copies one thread; another thread's held locks would stay held in the child.
    assert threading.active_count() == 1, f"threads before fork: {threading.enumerate()}"
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        os.close(0)
        result = work(name, seconds, gap, outdir, reread, keep_going)
        (outdir / f"{os.getpid()}.json").write_text(json.dumps(result))
    except BaseException as exc:  # the child must never return into the command loop
        (outdir / f"{os.getpid()}.json").write_text(
            json.dumps({"requests": 0, "statuses": {}, "errors": [f"{type(exc).__name__}: {exc}"]})
        )
        code = 1
    finally:
        os._exit(code)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


class Zygote:
    """The forking process, driven from a test (``env``: the workers' environment)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.blocks.kill_workers"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _ask(self, line: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def spawn(
        self,
        block: str,
        seconds: float,
        gap: float,
        outdir: Path,
        *,
        reread: float = 0.5,
        keep_going: bool = False,
    ) -> int:
        """Fork a worker (see the module doc); its pid."""
        mode = " keep-going" if keep_going else ""
        return int(self._ask(f"spawn {block} {seconds} {gap} {outdir} {reread}{mode}"))

    def reap(self) -> None:
        assert self._ask("reap") == "ok"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("exit\n")
        self.process.stdin.flush()
        self.process.wait(30)


def main() -> int:
    for line in sys.stdin:
        command, *args = line.split()
        if command == "spawn":
            name, seconds, gap, outdir = args[0], float(args[1]), float(args[2]), Path(args[3])
            reread = float(args[4]) if len(args) > 4 else 0.5
            keep_going = len(args) > 5 and args[5] == "keep-going"
            print(_spawn(name, seconds, gap, outdir, reread, keep_going), flush=True)
        elif command == "reap":
            _reap()
            print("ok", flush=True)
        elif command == "exit":
            _reap()
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

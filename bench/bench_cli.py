"""Benchmark: how long read-only ``billops`` commands take to answer, against ``python -c pass``.

Each command is started as a person starts it (a fresh interpreter, ``python -m billops.cli``)
in a scratch ``BILLOPS_HOME`` and ``PREFECT_HOME`` with an empty ledger, ``--repeat`` times,
interleaved with the floor (``python -c pass``) so a busy machine slows both alike. Printed per
command: the median wall time, the median CPU time (user + system of the child: what the command
would take on an idle core) and the wall ratio to the floor. Goal: a read-only command answers in
about a second.

``--server`` also starts a persistent Prefect server (``billops server start``) and times the
commands that read Prefect (``auth status`` of a block that does not exist: the Prefect import
and one API round trip); without it they are skipped, since each would start Prefect's
temporary server.

Usage: ``python bench/bench_cli.py [--repeat 5] [--server] [--root CHECKOUT]`` (``--root``: time
another checkout's billops with this environment, e.g. a worktree of the commit before a change).
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 1.0
COMMANDS: list[list[str]] = [
    ["--help"],
    ["server", "status"],
    ["ledger", "status"],
    ["audit"],
    ["bank", "profiles"],
    ["run", "import-payment-requests", "--help"],
]
PREFECT_COMMANDS: list[list[str]] = [["auth", "status", "--block", "no-such-block"]]


@dataclass
class Timings:
    """Wall and CPU seconds of each run of one command."""

    label: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    exit_codes: set[int] = field(default_factory=set)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _time(argv: list[str], env: dict[str, str], into: Timings) -> None:
    cpu, started = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=env["PYTHONPATH"], capture_output=True, check=False)
    into.wall.append(time.perf_counter() - started)
    into.cpu.append(_children_cpu() - cpu)
    into.exit_codes.add(done.returncode)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "BILLOPS_"))}
    env.update(
        BILLOPS_HOME=str(folder / "billops"),
        PREFECT_HOME=str(folder / "prefect"),
    )
    return env


def _billops(*args: str) -> list[str]:
    return [sys.executable, "-m", "billops.cli", *args]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--server", action="store_true", help="time commands reading Prefect too")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout whose billops runs (before/after)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="billops-bench-cli-") as scratch:
        env = _environment(Path(scratch))
        env["PYTHONPATH"] = str(args.root)
        upgrade = _billops("db", "upgrade")
        subprocess.run(upgrade, env=env, cwd=args.root, check=True, capture_output=True)
        commands = list(COMMANDS)
        if args.server:
            subprocess.run(
                _billops("server", "start", "--port", str(_free_port())),
                env=env,
                cwd=args.root,
                check=True,
                capture_output=True,
            )
            commands += PREFECT_COMMANDS
        try:
            floor = Timings("python -c pass")
            measured = [Timings("billops " + " ".join(command)) for command in commands]
            for _ in range(args.repeat):  # interleaved: load changes hit every command alike
                _time([sys.executable, "-c", "pass"], env, floor)
                for command, timings in zip(commands, measured, strict=True):
                    _time(_billops(*command), env, timings)
        finally:
            if args.server:
                stop = _billops("server", "stop")
                subprocess.run(stop, env=env, cwd=args.root, capture_output=True, check=False)
    _print(floor, measured, args.repeat, args.root)
    return 0


def _print(floor: Timings, measured: list[Timings], repeat: int, root: Path) -> None:
    floor_wall = statistics.median(floor.wall)
    try:
        load = " (load average {:.1f} {:.1f} {:.1f})".format(*os.getloadavg())
    except OSError:
        load = ""
    print(f"medians of {repeat} runs{load}; CPU = the child's user + system time")
    print(f"billops from {root}")
    print(f"{'command':<52}{'wall s':>8}{'CPU s':>8}{'x floor':>9}  exit")
    for timings in (floor, *measured):
        wall, cpu = statistics.median(timings.wall), statistics.median(timings.cpu)
        codes = ",".join(str(code) for code in sorted(timings.exit_codes))
        print(f"{timings.label:<52}{wall:8.2f}{cpu:8.2f}{wall / floor_wall:9.1f}  {codes}")
    slowest = max(statistics.median(t.cpu) for t in measured)
    print(
        f"slowest command's CPU: {slowest:.2f} s (goal: about {GOAL_SECONDS:.0f} s; CPU is the "
        "idle machine's wall time)"
    )


if __name__ == "__main__":
    sys.exit(main())

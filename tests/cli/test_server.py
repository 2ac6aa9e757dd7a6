"""A real Prefect server from the project's own environment (``billops server start``): commands
use it instead of a temporary server, ``billops deploy`` puts the nightly deployment on it, and
its scheduler schedules the nightly runs — with the exact packages of ``constraints.txt`` (a
SQLAlchemy the server cannot work with crashes the scheduler every loop and no run is ever
scheduled, while the deployment looks fine)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.billops_server import (
    BillopsHomes,
    RunningServer,
    billops_server,
    clean_env,
    wait_until,
)

TEMPORARY_SERVER = "Starting temporary server"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with billops_server(tmp_path_factory.mktemp("billops-server")) as running:
        yield running


def _log_tail(server: RunningServer) -> str:
    record = json.loads((server.homes.prefect_home / "billops-server.json").read_text())
    return "\n".join(Path(record["log"]).read_text(errors="replace").splitlines()[-40:])


def test_status_says_where_the_server_runs(server: RunningServer) -> None:
    done = server.homes.run("server", "status")

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"running at {server.url}" in done.stdout


def test_commands_use_the_running_server_and_setup_prints_no_noise(server: RunningServer) -> None:
    done = server.homes.run("setup")

    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert TEMPORARY_SERVER not in output  # it talked to the running server
    assert "Traceback" not in output and "telemetry" not in output.lower(), output
    with server.api() as api:
        assert api.get("/block_types/slug/billops-biller-credentials").status_code == 200


def test_the_nightly_deployment_gets_its_runs_scheduled(server: RunningServer) -> None:
    deployed = server.homes.run("deploy", timeout=600)
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr

    with server.api() as api:
        nightly: dict[str, Any] = api.get("/deployments/name/nightly/nightly").json()

        def scheduled() -> list[dict[str, Any]]:
            answer = api.post(
                "/flow_runs/filter",
                json={
                    "deployments": {"id": {"any_": [nightly["id"]]}},
                    "flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}},
                },
            )
            answer.raise_for_status()
            runs: list[dict[str, Any]] = answer.json()
            return runs

        assert wait_until(scheduled, timeout=150, every=2), (
            "the server scheduled no nightly run; the end of its log:\n" + _log_tail(server)
        )
    assert "bulk DML" not in _log_tail(server)
    (schedule,) = nightly["schedules"]
    assert schedule["schedule"]["cron"] == "30 2 * * *"
    assert schedule["schedule"]["timezone"] == "Europe/London"
    # The deployment list shows "At 02:30 AM every day": the time zone must be in its words.
    assert "Europe/London" in nightly["description"] and "london" in schedule["slug"]


def test_stop_stops_the_server_and_frees_its_port(server: RunningServer) -> None:
    record = json.loads((server.homes.prefect_home / "billops-server.json").read_text())

    done = server.homes.run("server", "stop")

    assert done.returncode == 0 and "stopped" in done.stdout, done.stdout + done.stderr
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", int(server.url.rsplit(":", 1)[1]))) != 0
    assert not (server.homes.prefect_home / "billops-server.json").exists()
    assert not Path(f"/proc/{record['pid']}").exists() or _is_zombie(record["pid"])
    assert server.homes.run("server", "status").returncode == 1


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return False


def test_setup_on_a_temporary_server_prints_only_what_it_did(tmp_path: Path) -> None:
    """No persistent server here: Prefect's temporary one, with billops turning analytics off."""
    homes = BillopsHomes(tmp_path / "p", tmp_path / "b", clean_env(tmp_path / "p", tmp_path / "b"))

    done = homes.run("setup")

    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output and "telemetry" not in output.lower(), output
    assert "database is locked" not in output, output
    assert done.stdout.strip().splitlines()[-1] == "setup complete"

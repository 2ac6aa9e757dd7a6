"""Rotation under concurrency: several processes share one block through one Prefect API, with
2-second access tokens. No ``invalid_grant``, every rotation persisted, the final token works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from blocks import BillerCredentials
from tests.support.credentials import (
    invalid_grants,
    refresh_grants,
    register_block_secrets,
    save_connected_block,
    subprocess_env,
    unique_name,
)
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_log, register_secret, register_tree

ROOT = Path(__file__).resolve().parents[2]


def _run_workers(
    name: str, processes: int, seconds: float, tmp_path: Path
) -> list[dict[str, object]]:
    env = subprocess_env(BILLOPS_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    workers = []
    for index in range(processes):
        log = (tmp_path / f"worker-{index}.log").open("w")
        command = [sys.executable, "-m", "tests.blocks.rotation_worker", name, str(seconds)]
        workers.append(
            (
                subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT),
                log,
            )
        )
    results = []
    for index, (process, log) in enumerate(workers):
        process.wait(timeout=seconds + 120)
        log.close()
        path = tmp_path / f"worker-{index}.log"
        register_log(path, label=f"rotation worker {index} output")
        lines = path.read_text().strip().splitlines()
        assert process.returncode == 0, f"worker {index} failed: {lines[-5:]}"
        results.append(json.loads(lines[-1]))
    return results


@pytest.mark.parametrize(
    ("processes", "seconds"),
    # The default suite's version stays near 30 s: four processes importing Prefect at once take
    # most of it on two cores; `make soak` runs the 32-process one.
    [(4, 6.0), pytest.param(32, 30.0, marks=pytest.mark.slow)],
)
def test_processes_sharing_a_block_never_lose_a_rotation(
    prefect_api: str, short_admin: SandboxAdmin, tmp_path: Path, processes: int, seconds: float
) -> None:
    name = unique_name("rot")
    block, tokens = save_connected_block(short_admin, name)

    results = _run_workers(name, processes, seconds, tmp_path)

    final = BillerCredentials.load(name)
    register_block_secrets(final)
    stored = final.read()
    assert all(r["requests"] for r in results)
    assert invalid_grants(short_admin, tokens.biller_id) == 0
    # Every rotation the sandbox granted is the one the block holds: none lost, none replayed.
    assert stored.rotation == refresh_grants(short_admin, tokens.biller_id)
    assert stored.rotation >= seconds / 2 - 1  # tokens live 2 s: they really did rotate
    with final.get_oauth_client() as oauth:
        renewed = oauth.refresh(stored.refresh_token)
    register_secret(renewed.refresh_token)
    register_secret(renewed.access_token)
    # The stored refresh token was the live one: it rotated once more, and nothing was replayed.
    assert renewed.refresh_token not in (None, stored.refresh_token)
    assert refresh_grants(short_admin, tokens.biller_id) == stored.rotation + 1
    assert invalid_grants(short_admin, tokens.biller_id) == 0
    # Every rotation reached the block, so its journal records were removed: no token is left in
    # the workers' BILLOPS_HOME (journal, refresh locks, anything else).
    register_tree(tmp_path / "home", label="rotation workers' BILLOPS_HOME")

"""The ``prefect`` fixture gives a working, isolated Prefect API for the flow tests."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def test_flows_run_against_a_temporary_prefect_home(prefect) -> None:
    from prefect import flow, task
    from prefect.settings import PREFECT_API_URL, PREFECT_HOME

    @task
    def double(values: list[int]) -> list[int]:
        return [v * 2 for v in values]

    @flow
    def batch(values: list[int]) -> int:
        return sum(double(values))

    assert batch([1, 2, 3]) == 12
    home = Path(PREFECT_HOME.value()).resolve()
    assert home.is_relative_to(Path(tempfile.gettempdir()).resolve())
    assert home == Path(os.environ["PREFECT_HOME"]).resolve()
    assert PREFECT_API_URL.value().startswith("http://127.0.0.1:")

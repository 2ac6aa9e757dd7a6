"""The contract document, ``billing_api/openapi.yaml``, read as data.

The sandbox shares nothing with the client but this file, so it locates the file through the
import system without importing ``billing_api`` (``find_spec`` does not run the package).
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml


def contract_path() -> Path:
    spec = importlib.util.find_spec("billing_api")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the billing_api package (which holds openapi.yaml) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "openapi.yaml"


@lru_cache(maxsize=1)
def load_contract() -> dict[str, Any]:
    with contract_path().open(encoding="utf-8") as handle:
        document: dict[str, Any] = yaml.safe_load(handle)
    return document

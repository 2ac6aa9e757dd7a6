"""The house's shape: the packages the wheel ships, and imports that only point down.

flows → tasks → (blocks, ledger) → billing_api; the sandbox stands apart (it shares only the
contract file); the CLI (billops) sits on top and may use everything.
"""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"billing_api", "ledger", "blocks", "tasks", "flows", "sandbox", "billops"}
# What each package must never import (of ours, plus Prefect where the layer must not know it).
FORBIDDEN = {
    "billing_api": {"prefect", "ledger", "blocks", "tasks", "flows", "sandbox", "billops"},
    "ledger": {"prefect", "blocks", "tasks", "flows", "sandbox", "billops"},
    "blocks": {"tasks", "flows", "sandbox", "billops"},
    "tasks": {"flows", "sandbox", "billops"},
    "flows": {"sandbox", "billops"},
    "sandbox": {"billing_api", "ledger", "blocks", "tasks", "flows", "billops", "prefect"},
    "billops": set(),
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_the_wheel_ships_exactly_our_top_level_packages() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = set(config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"])
    on_disk = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert shipped == on_disk == OURS


@pytest.mark.parametrize("package", sorted(OURS))
def test_generic_names_resolve_to_our_packages(package: str) -> None:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations is not None
    assert Path(next(iter(spec.submodule_search_locations))).resolve() == ROOT / package


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_down(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imports(path) & FORBIDDEN[package])
        for path in (ROOT / package).rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_contract_file_ships_with_billing_api() -> None:
    assert (ROOT / "billing_api" / "openapi.yaml").is_file()

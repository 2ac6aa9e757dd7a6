"""The house's shape: the packages the wheel ships, and imports that only point down.

flows → tasks → (blocks, ledger) → billing_api; the sandbox stands apart (it shares only the
contract file); the CLI (billops) sits on top and may use everything. Inside ``tasks``, the
shared pieces (``tasks/common``) know no job, and no job package imports another; flows reach
the ledger through its public surface only.
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


def _modules(path: Path, text: str | None = None) -> set[str]:
    """Every module ``path`` imports (or ``text`` would, as that file), dotted and absolute."""
    source = path.read_text(encoding="utf-8") if text is None else text
    tree = ast.parse(source, filename=str(path))
    package = list(path.relative_to(ROOT).parent.parts)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _imports(path: Path) -> set[str]:
    return {module.split(".")[0] for module in _modules(path)}


def _job_packages() -> list[str]:
    return sorted(p.name for p in (ROOT / "tasks").iterdir() if (p / "__init__.py").is_file())


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


def test_tasks_common_imports_no_job_package() -> None:
    jobs = {f"tasks.{name}" for name in _job_packages()} - {"tasks.common"}
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in _modules(path) if any(m == j or m.startswith(j + ".") for j in jobs)
        )
        for path in (ROOT / "tasks" / "common").rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


@pytest.mark.parametrize("job", [name for name in _job_packages() if name != "common"])
def test_a_job_package_imports_no_other_job(job: str) -> None:
    others = {f"tasks.{name}" for name in _job_packages()} - {"tasks.common", f"tasks.{job}"}
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in _modules(path) if any(m == o or m.startswith(o + ".") for o in others)
        )
        for path in (ROOT / "tasks" / job).rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_flows_import_no_ledger_internals() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in _modules(path) if m.startswith("ledger.") and "._" in f".{m[7:]}"
        )
        for path in (ROOT / "flows").rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_layout_rules_see_what_they_guard() -> None:
    """The scanner finds a private ledger module and a job package, however they are imported."""
    text = "from ledger._engine import make_engine\nfrom tasks import payment_requests\n"
    found = _modules(ROOT / "flows" / "probe.py", text)
    assert "ledger._engine" in found and "tasks.payment_requests" in found
    relative = _modules(ROOT / "ledger" / "probe.py", "from ._records import X\n")
    assert "ledger._records" in relative


# --- the sandbox's rooms ---------------------------------------------------------------------
# Routes map HTTP only: they call the domain packages (which own queries and contract rules),
# never each other, and never build SQL; the sandbox imports nothing of billops.
SANDBOX_ROUTES = ROOT / "sandbox" / "routes"
_SQL_CALLS = {"select", "insert", "update", "delete", "text"}


def _route_modules() -> list[Path]:
    return sorted(p for p in SANDBOX_ROUTES.glob("*.py") if p.name != "__init__.py")


def _sandbox_imports(path: Path) -> set[str]:
    """Every ``sandbox...`` module a file imports (``from sandbox.x import y`` counts ``x.y``
    too, since ``y`` may be a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("sandbox"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sandbox"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def _sql_offences(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    offences = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            offences += [f"imports {n}" for n in names if n and n.split(".")[0] == "sqlalchemy"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in _SQL_CALLS:
                offences.append(f"line {node.lineno}: calls {node.func.id}()")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("session", "sessions")
        ):
            offences.append(f"line {node.lineno}: uses {node.value.id}.{node.attr}")
    return offences


def test_the_sandbox_has_route_modules_to_check() -> None:
    assert len(_route_modules()) >= 15  # a moved folder must not make the checks below vacuous


@pytest.mark.parametrize("path", _route_modules(), ids=lambda p: p.name)
def test_no_route_module_imports_another(path: Path) -> None:
    others = {f"sandbox.routes.{p.stem}" for p in _route_modules() if p != path}
    assert sorted(_sandbox_imports(path) & others) == []


@pytest.mark.parametrize("path", _route_modules(), ids=lambda p: p.name)
def test_no_route_module_builds_sql(path: Path) -> None:
    assert _sql_offences(path) == []


def test_the_sql_check_catches_what_it_forbids(tmp_path: Path) -> None:
    offender = tmp_path / "route.py"
    offender.write_text(
        "from sqlalchemy import select\n"
        "def handler(session):\n"
        "    return session.execute(select(1))\n",
        encoding="utf-8",
    )
    assert _sql_offences(offender) == [
        "imports sqlalchemy",
        "line 3: uses session.execute",
        "line 3: calls select()",
    ]


def test_the_sandbox_imports_nothing_of_billops() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imports(path) & (OURS - {"sandbox"}))
        for path in (ROOT / "sandbox").rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}

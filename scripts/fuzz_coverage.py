"""What the stateful phase of ``scripts/fuzz.py`` reached: per link of the contract and per
operation that takes an id.

An operation **takes an id** when its path names a record (a path parameter other than the app's
``clientId``, which the run supplies), or when one of the contract's links fills an id into its
body (``requestBody``). Such an operation is **reached with a usable id** when a stateful step
followed a link to it with the link's values used (the id came from the answer of an earlier step
that succeeded), in positive mode, and the service did not answer that the record is missing: not
404, and no error naming a field the link filled. A link is **exercised** when at least one step
followed it that way. The run fails when an operation that takes an id was never reached so.

Steps are the JSON lines ``scripts/fuzz_hooks.py`` records; the contract is read as YAML.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

METHODS = ("get", "put", "post", "delete", "patch")
# The app's own id: the run supplies it, no link has to.
SUPPLIED_PARAMETERS = frozenset({"clientId"})
# ``<source> -> [<status>] <link name> -> <target>``, schemathesis' name of a followed link.
_TRANSITION = re.compile(r"^(?P<source>.+) -> \[(?P<status>[^\]]+)\] (?P<name>\S+) -> (?P<target>.+)$")


@dataclass(frozen=True, slots=True)
class Link:
    source: str  # operation label, e.g. "POST /customers"
    status: str
    name: str
    target: str
    body_fields: tuple[str, ...]  # dotted paths of the target's body the link fills
    source_id: str = ""  # operationIds
    target_id: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.status, self.name)


@dataclass(slots=True)
class Tally:
    followed: int = 0  # steps that followed it with the link's values used (positive mode)
    usable: int = 0  # of those, answered without "no such record"
    succeeded: int = 0  # of those, answered 2xx
    statuses: Counter[int] = field(default_factory=Counter)

    def add(self, status: int, usable: bool) -> None:
        self.followed += 1
        self.usable += usable
        self.succeeded += 200 <= status < 300
        self.statuses[status] += 1


@dataclass(slots=True)
class Coverage:
    links: dict[tuple[str, str, str], tuple[Link, Tally]]
    operations: dict[str, Tally]  # the operations that take an id
    steps: int = 0

    @property
    def unreached(self) -> list[str]:
        return sorted(label for label, tally in self.operations.items() if not tally.usable)

    @property
    def exercised_links(self) -> int:
        return sum(1 for _, tally in self.links.values() if tally.usable)


def _resolve(contract: dict[str, Any], node: Any) -> Any:
    """A ``$ref`` inside the contract, followed (once is enough for responses)."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        target: Any = contract
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def operations(contract: dict[str, Any], selected: Callable[[str], bool]) -> Iterator[
    tuple[str, dict[str, Any], list[dict[str, Any]]]
]:
    """``(label, operation, parameters)`` of each selected operation."""
    for path, item in contract["paths"].items():
        if not selected(path):
            continue
        shared = item.get("parameters", [])
        for method in METHODS:
            if method in item:
                operation = item[method]
                parameters = [_resolve(contract, p) for p in shared + operation.get("parameters", [])]
                yield f"{method.upper()} {path}", operation, parameters


def _body_fields(body: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(body, dict):
        for key, value in body.items():
            yield from _body_fields(value, f"{prefix}.{key}" if prefix else key)
    elif isinstance(body, list):
        for index, value in enumerate(body):
            yield from _body_fields(value, f"{prefix}[{index}]")
    else:
        yield prefix


def contract_links(contract: dict[str, Any], selected: Callable[[str], bool]) -> list[Link]:
    """Every link of the contract between two selected operations."""
    labels = {op.get("operationId"): label for label, op, _ in operations(contract, selected)}
    links = []
    for label, operation, _ in operations(contract, selected):
        source_id = str(operation.get("operationId"))
        for status, response in operation.get("responses", {}).items():
            declared = dict(_resolve(contract, response).get("links", {}))
            declared.update(response.get("links", {}))
            for name, link in declared.items():
                target_id = link.get("operationId")
                target = labels.get(target_id)
                if target is not None:
                    body = tuple(_body_fields(link["requestBody"])) if "requestBody" in link else ()
                    links.append(Link(label, str(status), name, target, body, source_id, target_id))
    return links


def id_taking_operations(
    contract: dict[str, Any], selected: Callable[[str], bool], links: Iterable[Link]
) -> set[str]:
    """Labels of the selected operations that take an id (see the module's docstring)."""
    taking = {link.target for link in links if link.body_fields}
    for label, _, parameters in operations(contract, selected):
        names = {p["name"] for p in parameters if p.get("in") == "path"}
        if names - SUPPLIED_PARAMETERS:
            taking.add(label)
    return taking


def is_usable(step: dict[str, Any], link: Link) -> bool:
    """Whether a followed step got past "no such record" (see the module's docstring)."""
    if step["status"] == 404:
        return False
    named = [str(error[1]) for error in step.get("errors", []) if error[1]]
    return not any(
        field_name == filled or field_name.startswith((filled + ".", filled + "["))
        for field_name in named
        for filled in link.body_fields
    )


def measure(steps: Iterable[dict[str, Any]], links: list[Link], taking: set[str]) -> Coverage:
    """Tally the recorded steps against the contract's links and the operations taking an id."""
    coverage = Coverage(
        links={link.key: (link, Tally()) for link in links},
        operations={label: Tally() for label in taking},
    )
    for step in steps:
        coverage.steps += 1
        match = _TRANSITION.match(step.get("link") or "")
        if match is None or step["status"] is None:
            continue
        if not step["applied"] or step["mode"] != "positive":
            continue
        entry = coverage.links.get((match["source"], match["status"], match["name"]))
        if entry is None:
            continue
        link, tally = entry
        usable = is_usable(step, link)
        tally.add(step["status"], usable)
        if link.target in coverage.operations:
            coverage.operations[link.target].add(step["status"], usable)
    return coverage


def read_steps(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _statuses(tally: Tally) -> str:
    return " ".join(f"{status}×{count}" for status, count in sorted(tally.statuses.items()))


def render(name: str, coverage: Coverage) -> str:
    """The per-link and per-operation tables and the two totals."""
    rows = [f"== {name}: stateful coverage ({coverage.steps} steps recorded)", "", "Links:"]
    rows.append(f"  {'followed':>8} {'usable':>6} {'2xx':>5}  link")
    for link, tally in sorted(coverage.links.values(), key=lambda entry: entry[0].key):
        mark = " " if tally.usable else "!"
        rows.append(
            f"{mark} {tally.followed:>8} {tally.usable:>6} {tally.succeeded:>5}  "
            f"{link.source} -[{link.status}] {link.name}-> {link.target}"
        )
    rows += ["", "Operations that take an id:"]
    rows.append(f"  {'followed':>8} {'usable':>6} {'2xx':>5}  operation (answers)")
    for label, tally in sorted(coverage.operations.items()):
        mark = " " if tally.usable else "!"
        rows.append(
            f"{mark} {tally.followed:>8} {tally.usable:>6} {tally.succeeded:>5}  "
            f"{label} ({_statuses(tally)})"
        )
    reached = len(coverage.operations) - len(coverage.unreached)
    rows += [
        "",
        f"{name}: links exercised {coverage.exercised_links}/{len(coverage.links)}, "
        f"operations taking an id reached with a usable id {reached}/{len(coverage.operations)}",
    ]
    if coverage.unreached:
        rows.append(f"{name}: NEVER REACHED with a usable id: {', '.join(coverage.unreached)}")
    return "\n".join(rows)


def without_incoming_link(links: Iterable[Link], taking: set[str]) -> list[str]:
    """Operations taking an id that no link of the contract leads to."""
    return sorted(taking - {link.target for link in links})

"""What the stateful phase of ``scripts/fuzz.py`` reached: per link of the contract and per
operation that takes an id.

An operation **takes an id** when its path names a record (a path parameter other than the app's
``clientId``, which the run supplies), when its request body requires one (a required property
named ``id``, ``...Id`` or ``...Ids``, at any depth of required objects: ``paymentRequestIds``,
``customerId``), or when one of the contract's links fills an id into its body (``requestBody``).
Ids a body may leave out (a template, a workflow, a catalogue tax rate) do not make an operation
take an id: it works without them.

Such an operation is **reached with a usable id** when a stateful step followed a link to it
with the link's values used (the id came from the answer of an earlier step that succeeded), in
positive mode, and the service did not answer that the record is missing: not 404, and no error
naming a field the link filled. A link is **exercised** when at least one step followed it that
way. The run fails when an operation that takes an id was never reached so, when no link leads
to it, or when no link fills an id its body requires. The tables also count the 2xx answers: an
id can be usable while the record's state refuses the operation (a draft cannot be marked paid).

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
# Properties named like ids that name no record of the service: the biller's own key.
NOT_RECORD_IDS = frozenset({"externalId"})
# ``<source> -> [<status>] <link name> -> <target>``, schemathesis' name of a followed link.
_TRANSITION = re.compile(
    r"^(?P<source>.+) -> \[(?P<status>[^\]]+)\] (?P<name>\S+) -> (?P<target>.+)$"
)


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


def operations(
    contract: dict[str, Any], selected: Callable[[str], bool]
) -> Iterator[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """``(label, operation, parameters)`` of each selected operation."""
    for path, item in contract["paths"].items():
        if not selected(path):
            continue
        shared = item.get("parameters", [])
        for method in METHODS:
            if method in item:
                operation = item[method]
                parameters = [
                    _resolve(contract, p) for p in shared + operation.get("parameters", [])
                ]
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


def _is_id_name(name: str) -> bool:
    return name not in NOT_RECORD_IDS and (name == "id" or name.endswith(("Id", "Ids")))


def _required_ids(contract: dict[str, Any], schema: Any, prefix: str = "") -> set[str]:
    """Dotted paths of the ids a body schema requires (``allOf`` parts merged; under
    ``anyOf``/``oneOf`` only what every alternative requires)."""
    schema = _resolve(contract, schema)
    if not isinstance(schema, dict):
        return set()
    found: set[str] = set()
    for part in schema.get("allOf", []):
        found |= _required_ids(contract, part, prefix)
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if alternatives:
        found |= set.intersection(*(_required_ids(contract, a, prefix) for a in alternatives))
    properties = schema.get("properties", {})
    for name in schema.get("required", []):
        path = f"{prefix}.{name}" if prefix else name
        if _is_id_name(name):
            found.add(path)
        elif name in properties:
            found |= _required_ids(contract, properties[name], path)
    return found


def required_body_ids(
    contract: dict[str, Any], selected: Callable[[str], bool]
) -> dict[str, set[str]]:
    """Per selected operation whose JSON body requires ids, the dotted paths of those ids."""
    required = {}
    for label, operation, _ in operations(contract, selected):
        content = _resolve(contract, operation.get("requestBody", {})).get("content", {})
        schema = content.get("application/json", {}).get("schema")
        if schema is not None and (ids := _required_ids(contract, schema)):
            required[label] = ids
    return required


def id_taking_operations(
    contract: dict[str, Any], selected: Callable[[str], bool], links: Iterable[Link]
) -> set[str]:
    """Labels of the selected operations that take an id (see the module's docstring)."""
    taking = {link.target for link in links if link.body_fields}
    taking |= set(required_body_ids(contract, selected))
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


def unfilled_body_ids(links: Iterable[Link], required: dict[str, set[str]]) -> list[str]:
    """``<operation>: <field>`` for each id a body requires that no link of the contract fills
    (a link filling ``paymentRequestIds[0]`` fills ``paymentRequestIds``)."""
    filled: dict[str, set[str]] = {}
    for link in links:
        filled.setdefault(link.target, set()).update(
            re.sub(r"\[\d+\]", "", field_path) for field_path in link.body_fields
        )
    return sorted(
        f"{label}: {field_path}"
        for label, fields in required.items()
        for field_path in fields
        if field_path not in filled.get(label, set())
    )

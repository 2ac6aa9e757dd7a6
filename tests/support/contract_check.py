"""Checks that each answer of the sandbox's API is one the contract allows.

``check_response`` is installed as an httpx response hook on the test clients of the API, so every
response the suite sees is validated: its status must be declared for the operation, and a JSON
body must match the declared schema (JSON Schema 2020-12, which OpenAPI 3.1 uses).
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import httpx
import yaml
from jsonschema import Draft202012Validator, ValidationError, validators
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

CONTRACT = Path(__file__).resolve().parents[2] / "billing_api" / "openapi.yaml"
_URI = "urn:billops:contract"


class ContractViolation(AssertionError):
    """An answer of the sandbox that the contract does not allow."""


def _multiple_of(_validator: Any, step: Any, instance: Any, _schema: Any) -> Any:
    """``multipleOf`` in decimal arithmetic: ``19.99`` is a multiple of ``0.01`` (a float
    division says it is not; the validators schemathesis uses agree with this one)."""
    number = isinstance(instance, int | float) and not isinstance(instance, bool)
    if number and Decimal(str(instance)) % Decimal(str(step)) != 0:
        yield ValidationError(f"{instance!r} is not a multiple of {step}")


_Validator = validators.extend(Draft202012Validator, {"multipleOf": _multiple_of})


@lru_cache(maxsize=1)
def _contract() -> dict[str, Any]:
    return yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _registry() -> Registry:
    return Registry().with_resource(_URI, Resource(contents=_contract(), specification=DRAFT202012))


@lru_cache(maxsize=1)
def _templates() -> list[tuple[re.Pattern[str], str, int]]:
    """Path templates as regexes, with their count of literal characters (more literal wins)."""
    out = []
    for template in _contract()["paths"]:
        regex = re.sub(r"\\\{[^}]+\\\}", r"[^/:]+", re.escape(template))
        literal = len(re.sub(r"\{[^}]+\}", "", template))
        out.append((re.compile(f"^{regex}$"), template, literal))
    return out


def _template_for(path: str) -> str | None:
    matches = [
        (literal, template) for regex, template, literal in _templates() if regex.match(path)
    ]
    return max(matches)[1] if matches else None


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _follow(pointer: str) -> tuple[Any, str]:
    """The node at ``pointer``, following ``$ref`` chains; returns the node and its pointer."""
    node: Any = _contract()
    for part in pointer.split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    while isinstance(node, dict) and "$ref" in node:
        pointer = node["$ref"].removeprefix("#")
        return _follow(pointer)
    return node, pointer


def check_response(response: httpx.Response) -> None:
    """Raise ContractViolation when ``response`` is not what the contract declares."""
    request = response.request
    path = request.url.path.removeprefix("/api")
    if path == "/openapi.json":
        return
    template = _template_for(path)
    method = request.method.lower()
    if template is None or method not in _contract()["paths"][template]:
        if response.status_code in (404, 405):
            return  # an unknown path or method: nothing in the contract to hold it to
        raise ContractViolation(f"{request.method} {path} is not a contract operation")
    op_pointer = f"/paths/{_escape(template)}/{method}"
    responses, _ = _follow(op_pointer + "/responses")
    status = str(response.status_code)
    if status not in responses:
        raise ContractViolation(
            f"{request.method} {template} answered {status}, not declared "
            f"({sorted(responses)}): {response.text[:300]}"
        )
    declared, pointer = _follow(f"{op_pointer}/responses/{status}")
    content = declared.get("content") or {}
    if not response.content:
        return
    media = next((m for m in content if "json" in m), None)
    if media is None:
        return  # a non-JSON body (a file) is not schema-checked
    body = response.json()
    schema_pointer = f"{pointer}/content/{_escape(media)}/schema"
    validator = _Validator({"$ref": f"{_URI}#{schema_pointer}"}, registry=_registry())
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(map(str, first.absolute_path)) or "(body)"
        raise ContractViolation(
            f"{request.method} {template} {status}: body breaks the contract at {where}: "
            f"{first.message}"
        )

"""Reads the endpoint tables of the interface specification the contract was written from.

Each table row that starts with an HTTP method and a path is one operation; the 3-digit numbers
in the rest of the row are the status codes the spec lists for it.
"""

from __future__ import annotations

import re
from pathlib import Path

_ROW = re.compile(r"^\|\s*(GET|POST|PUT|PATCH|DELETE)\s*\|\s*(/\S+)\s*\|(.*)$")
_STATUS = re.compile(r"\b([1-5]\d\d)\b")


def spec_operations(text: str) -> dict[tuple[str, str], set[str]]:
    """``{(method, path): {status codes named in the row}}``."""
    operations: dict[tuple[str, str], set[str]] = {}
    for line in text.splitlines():
        match = _ROW.match(line.strip())
        if match:
            method, path, rest = match.groups()
            operations[(method, path)] = set(_STATUS.findall(rest))
    return operations


def render(operations: dict[tuple[str, str], set[str]]) -> str:
    """The snapshot format of ``tests/data/spec_operations.txt``: ``METHOD path codes...``."""
    lines = [
        " ".join([method, path, *sorted(codes)]) for (method, path), codes in operations.items()
    ]
    return "\n".join(lines) + "\n"


def parse_snapshot(path: Path) -> dict[tuple[str, str], set[str]]:
    operations = {}
    for line in path.read_text().splitlines():
        method, op_path, *codes = line.split()
        operations[(method, op_path)] = set(codes)
    return operations

"""The repository's own documents stay citable: every ``docs/service.md §N`` or
``docs/conventions.md §N`` cited anywhere names a section that exists, and each document numbers
its sections in order (docs/conventions.md §14: comments cite these documents by section).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = {
    "service.md": ROOT / "docs" / "service.md",
    "conventions.md": ROOT / "docs" / "conventions.md",
}
SKIP_DIRS = {".venv", ".git", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg"}
HEADING = re.compile(r"^(#{2,3}) (\d+(?:\.\d+)?)\.? (.+)$", re.MULTILINE)
# `docs/service.md §6`, ``docs/service.md`` §6.2, docs/conventions.md, §7 ... (a cited document
# followed, within a few characters, by a section sign).
CITATION = re.compile(r"docs/(service|conventions)\.md[`'\")\]]*[ ,]*§\s?(\d+(?:\.\d+)?)")
# Inside a document, a bare §N refers to the same document unless a document is named just before.
BARE = re.compile(r"§\s?(\d+(?:\.\d+)?)")


def sections(text: str) -> list[str]:
    """The section numbers of a document, in the order its headings give them."""
    return [match[2] for match in HEADING.finditer(text)]


def _files() -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        if any(part in SKIP_DIRS for part in path.relative_to(ROOT).parts):
            continue
        if path.is_file() and path.suffix in SUFFIXES:
            found.append(path)
    return found


def citations(text: str) -> list[tuple[str, str]]:
    """``(document, section)`` for each cross-document citation in ``text``."""
    return [(f"{doc}.md", number) for doc, number in CITATION.findall(text)]


def bare_citations(text: str, own: str) -> list[tuple[str, str]]:
    """``(document, section)`` for each ``§N`` in a document's own text."""
    found = []
    for match in BARE.finditer(text):
        before = text[max(0, match.start() - 40) : match.start()]
        if "conventions.md" in before:
            doc = "conventions.md"
        elif "service.md" in before:
            doc = "service.md"
        elif "contract" in before.lower() or "RFC" in before:
            continue
        else:
            doc = own
        found.append((doc, match[1]))
    return found


@pytest.mark.parametrize("name", sorted(DOCS))
def test_sections_are_numbered_in_order(name: str) -> None:
    numbers = sections(DOCS[name].read_text(encoding="utf-8"))
    top = [int(n) for n in numbers if "." not in n]
    assert top == list(range(1, len(top) + 1)), f"docs/{name}: top-level sections {top}"
    subs: dict[int, list[int]] = {}
    for number in (n for n in numbers if "." in n):
        parent, sub = (int(part) for part in number.split("."))
        assert parent in top, f"docs/{name}: §{number} has no §{parent}"
        subs.setdefault(parent, []).append(sub)
    for parent, found in subs.items():
        assert found == list(range(1, len(found) + 1)), f"docs/{name}: §{parent}.x are {found}"


def test_every_cited_section_exists() -> None:
    known = {name: set(sections(path.read_text(encoding="utf-8"))) for name, path in DOCS.items()}
    missing = []
    for path in _files():
        if path == Path(__file__).resolve():
            continue  # this file's own examples, some of them wrong on purpose
        text = path.read_text(encoding="utf-8", errors="replace")
        cited = citations(text)
        if path in DOCS.values():
            cited += bare_citations(text, path.name)
        for doc, number in cited:
            if number not in known[doc]:
                missing.append(f"{path.relative_to(ROOT)}: docs/{doc} §{number}")
    assert not missing, "citations of sections that do not exist:\n" + "\n".join(sorted(missing))


def test_the_checks_can_fail() -> None:
    """The citation pattern finds a citation in each written form, and a gap in numbering shows."""
    text = "see `docs/service.md §6 Payouts`, ``docs/conventions.md`` §6.3 and docs/service.md §99"
    assert citations(text) == [("service.md", "6"), ("conventions.md", "6.3"), ("service.md", "99")]
    assert sections("## 1. A\n### 1.1 B\n## 3. C\n") == ["1", "1.1", "3"]
    assert bare_citations("as §2 says; `docs/conventions.md` §7", "service.md") == [
        ("service.md", "2"),
        ("conventions.md", "7"),
    ]

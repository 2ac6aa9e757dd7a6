"""The repository's own documents stay citable: every ``docs/service.md §N`` or
``docs/conventions.md §N`` cited anywhere names a section that exists, each document numbers
its sections in order, and nothing cites a document outside the repository or a work item
(docs/conventions.md §14 Citing documents in code).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = {
    "service.md": ROOT / "docs" / "service.md",
    "conventions.md": ROOT / "docs" / "conventions.md",
}
# Hidden folders (.git, .venv*, caches) are skipped too.
SKIP_DIRS = {"node_modules", "__pycache__", "build", "dist", "fuzz-report"}
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".ini", ".sh", ".html", ".j2"}
NAMES = {"Makefile", "Dockerfile"}
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
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS]
        found += [Path(folder, n) for n in names if Path(n).suffix in SUFFIXES or n in NAMES]
    return found


# What must not be cited (docs/conventions.md §14 Citing documents in code): documents outside
# the repository (the design and spec folders beside it, by path or by name) and work items.
# A citation of the house conventions names its file: `docs/conventions.md §N`.
FOREIGN = re.compile(
    r"\.\./shared\b|\bshared/(?:spec|design)\b"
    r"|service-facts|service-interface|ARCHITECTURE\.md|\bARCHITECTURE\b|style-anchors"
    r"|prefect-notes|peers\.md"
    r"|\b[Ii]ssues? #?\d+|\bwork items? #?\d+|\b[Ii]tems? \d+ (?:§|of the)|design card"
    r"|(?<!docs/)\b[Cc]onventions(?:\.md)?[`'\")]*\s*§"
    r"|\b(?:[Ss]ervice )?facts §|\b(?:[Ii]nterface )?spec §"
)
# Not citations: the contract test reads the interface specification when a copy of it sits
# beside the checkout (a path it opens, to check the committed snapshot against).
FOREIGN_ALLOWED = {("tests/test_contract.py", "service-interface")}


def foreign_citations(text: str) -> list[tuple[int, str]]:
    """``(line, what)`` for each citation of a document outside the repository or a work item."""
    return [(text.count("\n", 0, m.start()) + 1, m[0]) for m in FOREIGN.finditer(text)]


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


def test_nothing_cites_a_document_outside_the_repository_or_a_work_item() -> None:
    found = []
    for path in _files():
        if path == Path(__file__).resolve():
            continue  # this file's own examples
        name = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for line, what in foreign_citations(text):
            if (name, what) not in FOREIGN_ALLOWED:
                found.append(f"{name}:{line}: {what!r}")
    assert not found, "cite docs/service.md or docs/conventions.md instead:\n" + "\n".join(found)


def test_the_checks_can_fail() -> None:
    """The citation pattern finds a citation in each written form, and a gap in numbering shows."""
    text = "see `docs/service.md §6 Payouts`, ``docs/conventions.md`` §6.3 and docs/service.md §99"
    assert citations(text) == [("service.md", "6"), ("conventions.md", "6.3"), ("service.md", "99")]
    assert sections("## 1. A\n### 1.1 B\n## 3. C\n") == ["1", "1.1", "3"]
    assert bare_citations("as §2 says; `docs/conventions.md` §7", "service.md") == [
        ("service.md", "2"),
        ("conventions.md", "7"),
    ]
    foreign = (
        "see ../shared/spec/service-facts.md §8, `shared/design/ARCHITECTURE.md`, issue 17,"
        " Issue #4 §4, work item 3, item 2 of the brief, Conventions §6, `conventions.md` §6,"
        " service facts §11, spec §3, prefect-notes, peers.md and style-anchors"
    )
    assert [what for _, what in foreign_citations(foreign)] == [
        "../shared",
        "service-facts",
        "shared/design",
        "ARCHITECTURE.md",
        "issue 17",
        "Issue #4",
        "work item 3",
        "item 2 of the",
        "Conventions §",
        "conventions.md` §",
        "service facts §",
        "spec §",
        "prefect-notes",
        "peers.md",
        "style-anchors",
    ]
    fine = (
        "`docs/conventions.md` §6 Writes, docs/conventions.md §14, shared/bare ratio,"
        " item 1 (externalId 'e2'), --items 201600, RFC 6749 §5.2, the shared pieces"
    )
    assert foreign_citations(fine) == []

"""Header names a finance person would use, mapped to a job's canonical columns.

Each job describes its columns once as a :class:`ColumnSpec` (aliases per canonical column, the
required ones, and groups of which at least one must be present). Headers are compared after
lower-casing and dropping everything but letters and digits, so ``Pay by``, ``pay_by``,
``PAY-BY`` and decorations such as ``Amount (£)`` or ``VAT %`` all match.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tasks.common.finance_files.rows import InputFileError

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def normalise_header(name: str) -> str:
    """The comparison key of a header: lower case, letters and digits only."""
    return _NOT_ALNUM.sub("", name.casefold())


@dataclass(frozen=True)
class ColumnGroup:
    """Columns of which at least one must be present; ``label`` names the group when missing."""

    label: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class ColumnSpec:
    """The columns of one kind of finance file.

    ``aliases``: canonical column → the header names people use for it (the first three are
    quoted as examples when it is missing; a group's label must be one of its columns).
    ``required``: canonical columns that must be present. ``groups``: alternatives of which one
    must be present (a customer by id, externalId or name), reported before ``required``.
    """

    aliases: Mapping[str, Sequence[str]]
    required: tuple[str, ...] = ()
    groups: tuple[ColumnGroup, ...] = ()
    _table: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        table = {
            normalise_header(alias): canonical
            for canonical, names in self.aliases.items()
            for alias in names
        }
        object.__setattr__(self, "_table", table)

    def canonical(self, header_name: str) -> str | None:
        """The canonical column a header names, if any."""
        return self._table.get(normalise_header(header_name))

    def recognised(self, header: Sequence[str]) -> int:
        """How many cells of a candidate header row are known column names."""
        return sum(1 for name in header if normalise_header(name) in self._table)

    def examples(self) -> str:
        """The first alias of every column, quoted, for an error message."""
        return ", ".join(repr(names[0]) for names in self.aliases.values())

    def map_header(self, header: Sequence[str], *, where: str) -> dict[str, int]:
        """Canonical column → position in the row, or :class:`InputFileError` naming the fault."""
        positions: dict[str, int] = {}
        for position, name in enumerate(header):
            canonical = self.canonical(name)
            if canonical is None:
                continue
            if canonical in positions:
                first = header[positions[canonical]]
                raise InputFileError(
                    f"{where}: columns {first!r} and {name!r} both mean {canonical}; "
                    "keep one of them (or rename the other to something billops does not read)"
                )
            positions[canonical] = position
        missing = [g.label for g in self.groups if not any(c in positions for c in g.columns)]
        missing += [column for column in self.required if column not in positions]
        if missing:
            found = ", ".join(repr(name) for name in header if name) or "nothing"
            wanted = "; ".join(
                f"{column} (e.g. {', '.join(repr(a) for a in self.aliases[column][:3])})"
                for column in missing
            )
            raise InputFileError(
                f"{where}: required column missing: {wanted}. The header row has: {found}"
            )
        return positions

"""What reading a finance file yields: one :class:`InputRow` per data row, or an
:class:`InputFileError` when the file cannot be used as a whole."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


class InputFileError(Exception):
    """The file as a whole cannot be used; the message names the file and says why.

    Nothing of such a file is imported (``docs/conventions.md`` §8 Bad input); the caller
    quarantines it.
    """


@dataclass(frozen=True)
class InputRow:
    """One data row as read, before any checks.

    ``line`` is where a person finds the row: the CSV line its record starts on, or the
    spreadsheet's row number (the header is usually line 1, so the first data row is line 2).
    ``values`` holds the raw cells by canonical column (``amount``, ``pay_by_date``...), as text.
    ``cells`` and ``header`` keep the row exactly as the file had it (every column, in order, the
    unknown ones too) so reports can hand the row back unchanged; ``columns`` says which header
    each canonical column came from, so problems name the column as the person wrote it.
    """

    line: int
    values: dict[str, str]
    cells: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    columns: Mapping[str, str] = field(default_factory=dict)

    def column_name(self, canonical: str) -> str:
        """The header this canonical column was read from (the canonical name if it was absent)."""
        return self.columns.get(canonical, canonical)

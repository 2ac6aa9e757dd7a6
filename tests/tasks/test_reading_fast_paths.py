"""Shortcuts of the reader that must not change what it reads: blank rows are looked for from
the first column (only rows whose first cell is blank are looked at further)."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tasks.common.finance_files.raw import RawTable, trimmed
from tasks.payment_requests import read_payment_request_file


def test_rows_blank_only_in_their_first_cell_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_text(
        "Customer,Amount,Description\r\n"
        " ,10,kept: only its first cell is blank\r\n"
        "\t, ,\u00a0\r\n"  # kept: a no-break space is not blank (the rule is \\s)
        " , , \r\n"
        "Acme Ltd,10,x\r\n",
        encoding="utf-8",
    )

    table = read_payment_request_file(path).table

    assert table.lines.to_pylist() == [2, 3, 5]


def _blank(cell: str) -> bool:
    return re.fullmatch(r"[\t\n\f\r ]*", cell) is not None  # RE2's \s, what the reader uses


def test_blank_rows_are_the_rows_of_blank_cells_whatever_their_first_byte() -> None:
    """Only rows whose first cell is empty or starts with a whitespace byte are looked at; the
    rows dropped are exactly the rows whose every cell is blank."""
    firsts = ["", " ", "\t", "\f\r", "\n", " x", "x ", "\u00a0", "\x0b", "\u2003", "£", "é"]
    seconds = ["", " ", "y", "\u00a0"]
    rows = [(a, b) for a in firsts for b in seconds]
    table = RawTable(
        header=("A", "B"),
        columns={"a": 0, "b": 1},
        lines=pa.array(range(2, 2 + len(rows)), pa.int64()),
        cells=(pa.array([a for a, _ in rows]), pa.array([b for _, b in rows])),
        widths=pa.repeat(pa.scalar(2, pa.int32()), len(rows)),
    )

    kept = table.without_blank_rows().lines.to_pylist()

    expected = [n + 2 for n, (a, b) in enumerate(rows) if not (_blank(a) and _blank(b))]
    assert kept == expected
    assert len(kept) < len(rows)  # some rows were blank


EDGES = ["", " ", "\t", "\r\n", "\x0b", "\x1c", "\x1f", "\u00a0", "\u2003", "\u3000", "\x85"]
KEPT = ["x", "-", "0", "~", "£", "é"]  # no whitespace at the edges; the last two not ASCII


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("where", ["start", "end", "both"])
def test_a_column_is_trimmed_as_the_kernel_trims_it(edge: str, where: str) -> None:
    """Values are left as they are only when none can start or end with whitespace; any value
    with an edge byte that may be whitespace (ASCII or not) sends the column to the kernel."""
    word = {"start": edge + "Acme", "end": "Acme" + edge, "both": edge + "Acme" + edge}[where]
    values = pa.array(["Beta", "", word, "Gamma Ltd", " "[:0]], pa.string())

    for part in (values, values.slice(2, 2), values.slice(0, 2)):  # a slice reads its own bytes
        assert trimmed(part).to_pylist() == pc.utf8_trim_whitespace(part).to_pylist()


@pytest.mark.parametrize("edge", KEPT)
def test_a_column_without_edge_whitespace_is_not_copied(edge: str) -> None:
    values = pa.array(["Acme Ltd", "", "a b", edge + "x" + edge, "12.50"], pa.string())
    found = trimmed(values)
    assert found.to_pylist() == pc.utf8_trim_whitespace(values).to_pylist()
    assert (found is values) == (edge.isascii())  # any non-ASCII edge byte goes to the kernel
    assert trimmed(values.slice(1, 3)).to_pylist() == values.slice(1, 3).to_pylist()
    empty = pa.array(["", ""], pa.string())
    assert trimmed(empty) is empty

"""Shortcuts of the reader that must not change what it reads: blank rows are looked for from
the first column (only rows whose first cell is blank are looked at further)."""

from __future__ import annotations

from pathlib import Path

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

"""Finance files as people keep them (CSV in Excel's encodings and delimiters, or XLSX), read into
rows by the names people give their columns, and the cell values they type (``£1,234.50``,
``dd/mm/yyyy``, ``20%``). Pure functions: no Prefect, no HTTP.

- :func:`load_table` (``table.py``): a file → :class:`InputRow` per data row, by a job's
  :class:`ColumnSpec` (``headers.py``); :class:`InputFileError` when the file is unusable.
- ``values.py``: :func:`parse_amount`, :func:`parse_date`, :func:`parse_tax_rate`,
  :func:`parse_currency`, :func:`decimal_text`.
- ``cells.py``: :func:`cell_text`, a spreadsheet cell as the text a person typed.
"""

from tasks.common.finance_files.cells import cell_text
from tasks.common.finance_files.headers import ColumnGroup, ColumnSpec, normalise_header
from tasks.common.finance_files.rows import InputFileError, InputRow
from tasks.common.finance_files.table import LoadedTable, load_table
from tasks.common.finance_files.values import (
    DATE_FORMATS_HELP,
    PENNY,
    decimal_text,
    parse_amount,
    parse_currency,
    parse_date,
    parse_tax_rate,
)

__all__ = [
    "DATE_FORMATS_HELP",
    "PENNY",
    "ColumnGroup",
    "ColumnSpec",
    "InputFileError",
    "InputRow",
    "LoadedTable",
    "cell_text",
    "decimal_text",
    "load_table",
    "normalise_header",
    "parse_amount",
    "parse_currency",
    "parse_date",
    "parse_tax_rate",
]

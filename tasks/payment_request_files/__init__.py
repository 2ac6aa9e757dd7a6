"""Payment-request files as finance keeps them: read, check, write the service's bulk file, report.

Pure functions (no Prefect, no HTTP): ``tasks/payment_request_import.py`` wraps them in tasks.

- :func:`read_payment_request_file`: CSV (UTF-8 with or without BOM, Windows-1252; comma,
  semicolon or tab) or XLSX (first sheet or named) → :class:`InputRow` per data row, headers
  matched by the names people use; :class:`InputFileError` when the file is unusable as a whole.
- :func:`validate_rows` / :func:`parse_payment_request_file`: every row checked against the
  biller's customers (:class:`CustomerDirectory`) and today's date in London → good
  :class:`PaymentRequestRow` and every :class:`RowProblem` (line, column, value, reason).
- :func:`write_service_csv` / :func:`make_chunks`: the contract's bulk-import file through a
  column mapping (:func:`default_column_mapping`), deterministic bytes per chunk.
- :func:`write_outcome_report` / :func:`write_failed_rows`: the CSVs next to the input
  (:func:`report_path`, :func:`failed_rows_path`).
"""

from tasks.payment_request_files._customers import CustomerDirectory
from tasks.payment_request_files._model import (
    Chunk,
    CustomerRef,
    InputFileError,
    InputRow,
    ParsedFile,
    PaymentRequestRow,
    RowOutcome,
    RowProblem,
)
from tasks.payment_request_files._read import load_file, read_payment_request_file
from tasks.payment_request_files._reports import (
    failed_rows_path,
    report_path,
    write_failed_rows,
    write_outcome_report,
)
from tasks.payment_request_files._service_file import (
    DEFAULT_CHUNK_SIZE,
    MAX_FILE_BYTES,
    MAX_ROWS_PER_FILE,
    default_column_mapping,
    make_chunks,
    write_service_csv,
)
from tasks.payment_request_files._template import starter_payment_request_csv
from tasks.payment_request_files._validate import (
    derive_external_id,
    parse_payment_request_file,
    validate_rows,
)

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "MAX_FILE_BYTES",
    "MAX_ROWS_PER_FILE",
    "Chunk",
    "CustomerDirectory",
    "CustomerRef",
    "InputFileError",
    "InputRow",
    "ParsedFile",
    "PaymentRequestRow",
    "RowOutcome",
    "RowProblem",
    "default_column_mapping",
    "derive_external_id",
    "failed_rows_path",
    "load_file",
    "make_chunks",
    "parse_payment_request_file",
    "read_payment_request_file",
    "report_path",
    "starter_payment_request_csv",
    "validate_rows",
    "write_failed_rows",
    "write_outcome_report",
    "write_service_csv",
]

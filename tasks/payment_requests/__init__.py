"""The payment-request import: a finance team's file becomes payment requests at the service.

The job's story (``flows/payment_requests.py``): prepare (read, validate, chunk), approve (a full
sync only), submit each chunk, settle the jobs, report. Its modules:

- reading and checking the file: ``columns.py`` (the header names people use), ``customers.py``
  (resolving the customer a row names), ``screen.py`` (every row, column by column),
  ``rowcheck.py`` (one row, with its reasons), ``derive.py`` (externalIds from business
  fields), ``known.py`` (what the service holds, kept in the ledger), ``validate.py`` (the file
  as a whole), ``model.py`` (rows, problems, outcomes, chunks), ``template.py`` (the starter);
- sending it: ``service_file.py`` (the contract's bulk file, cut into chunks), ``jobs.py`` (each
  chunk once under the write-once protocol, polled to its end, every row recorded),
  ``prepare.py`` (the file against the biller's customers and the ledger), ``steps.py`` (the
  Prefect tasks), ``summary.py`` (whether to send, and how the run ends);
- afterwards: ``reports.py`` and ``report_files.py`` (the CSVs next to the input, the
  artifacts), ``resolution.py`` (``billops ledger resolve``), ``undo.py`` (void what a run
  created).

Everything it shares with other jobs lives in ``tasks/common``.
"""

from tasks.common.finance_files import InputFileError, InputRow
from tasks.payment_requests.customers import CustomerDirectory
from tasks.payment_requests.model import (
    Chunk,
    CustomerRef,
    GoodRows,
    ParsedFile,
    PaymentRequestRow,
    RowOutcome,
    RowProblem,
    RowStatus,
)
from tasks.payment_requests.report_files import (
    failed_rows_path,
    report_path,
    write_failed_rows,
    write_outcome_report,
)
from tasks.payment_requests.rowcheck import ImportRules, derive_external_id
from tasks.payment_requests.service_file import (
    DEFAULT_CHUNK_SIZE,
    MAX_FILE_BYTES,
    MAX_ROWS_PER_FILE,
    default_column_mapping,
    make_chunks,
    write_service_csv,
)
from tasks.payment_requests.template import starter_payment_request_csv
from tasks.payment_requests.validate import (
    parse_payment_request_file,
    read_payment_request_file,
    validate_table,
)

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "MAX_FILE_BYTES",
    "MAX_ROWS_PER_FILE",
    "Chunk",
    "CustomerDirectory",
    "CustomerRef",
    "GoodRows",
    "ImportRules",
    "InputFileError",
    "InputRow",
    "ParsedFile",
    "PaymentRequestRow",
    "RowOutcome",
    "RowProblem",
    "RowStatus",
    "default_column_mapping",
    "derive_external_id",
    "failed_rows_path",
    "make_chunks",
    "parse_payment_request_file",
    "read_payment_request_file",
    "report_path",
    "starter_payment_request_csv",
    "validate_table",
    "write_failed_rows",
    "write_outcome_report",
    "write_service_csv",
]

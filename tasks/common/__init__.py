"""What every job reuses. Each module is lifted out of the payment-request import, and the jobs to
come (bank payments, payouts, delinquency, the inbox) build on the same pieces:

- ``write_once``: the protocol around the ledger for writes that are not idempotent on the wire —
  :func:`~tasks.common.write_once.write_once` (record intent → claim → send → outcome),
  :func:`~tasks.common.write_once.claim_and_send` (send again a write an earlier run left),
  :class:`~tasks.common.write_once.Intent`, :class:`~tasks.common.write_once.Sent`,
  :func:`~tasks.common.write_once.classify_send_failure` (unknown / released / failed),
  :class:`~tasks.common.write_once.ClaimPolicy`, :class:`~tasks.common.write_once.SendBudget`
  (at most 3 sends of one write per run), an optional ``look_up`` that asks the service before
  anything is sent again.
- ``polling``: :func:`~tasks.common.polling.poll_until` and :class:`~tasks.common.polling.Backoff`
  (exponential backoff with a cap and a deadline, :class:`~tasks.common.polling.PollSettings`).
- ``reports``: :func:`~tasks.common.reports.write_csv_atomically` (a CSV next to the input:
  atomic, BOM, 0644), :func:`~tasks.common.reports.sibling_path`, artifacts on the flow run
  (:func:`~tasks.common.reports.publish_summary`, :func:`~tasks.common.reports.publish_table`,
  :func:`~tasks.common.reports.artifact_key`).
- ``approval``: :func:`~tasks.common.approval.require_approval` — a person's approval, from the
  pause form in the UI (required fields, the facts approved, a deadline, an event announcing the
  wait) or the CLI's ``--approve-as`` (:func:`~tasks.common.approval.approved_from_cli`, the
  process's context), never a run parameter; audited in the ledger with its channel; the caller
  words what is being approved.
- ``outcome``: how a run ends — :func:`~tasks.common.outcome.end_run` with an
  :class:`~tasks.common.outcome.Outcome` (a named ``Completed`` state, its message, a
  needs-attention event), :func:`~tasks.common.outcome.refused` for a refused approval, and the
  names every job shares.
- ``run_logs``: :func:`~tasks.common.run_logs.send_client_logs_to_runs`, the client's and the
  credential blocks' log lines in the run's logs.
- ``session``: :func:`~tasks.common.session.open_ledger`,
  :func:`~tasks.common.session.biller_session` (a biller's client from its credential block).
- ``workers``: who holds a ledger claim (:func:`~tasks.common.workers.worker_name`), whether it is
  gone (:func:`~tasks.common.workers.holder_dead`), the claim policy every job uses
  (``CLAIMS``), the run id (:func:`~tasks.common.workers.current_run_id`).
- ``crash_points``: named points where tests crash a run on purpose (``BILLOPS_CRASH_AT``).
- ``progress``: :class:`~tasks.common.progress.JobProgress`, a progress artifact and the CLI's
  progress bars for long waits.
- ``finance_files``: reading files people drop (CSV in Excel's encodings and delimiters, XLSX),
  headers by the names people use (:class:`~tasks.common.finance_files.ColumnSpec`), and cell
  values (``£`` amounts, UK dates, tax rates).

Nothing here imports a job package (``tests/test_layout.py`` checks it).
"""

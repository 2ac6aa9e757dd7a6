"""The work of every job, under the flows that compose it.

- ``tasks/common/``: what every job reuses (the write-once protocol around the ledger, polling,
  reports, approval, the biller session, workers and crash points, reading finance files); its
  ``__init__`` lists each module and what it offers.
- one package per job: ``tasks/payment_requests/`` (import a finance team's payment-request file),
  and, as they arrive, the bank-payment, payout, delinquency and inbox jobs beside it.

Pure functions do the work; thin ``@task`` wrappers (a job's ``steps.py``) add what Prefect
gives. Tasks are batch-sized: never one task run per row. A job package imports ``tasks.common``
and never another job's package.
"""

"""Pausing collection for delinquent customers (README, "Pausing collection for delinquent
customers"). Pure pieces first, then the ones that talk to the service:

- ``policy`` / ``conditions``: the biller's policy as data (YAML; ``default_policy.yaml``
  ships), validated with errors naming file, line and key;
- ``snapshot``: what the service says on a day (customers, open debts, observed failures) as
  columns; ``metrics``, ``checks``, ``evaluate``: the policy applied to it — a pure, vectorised
  function whose every decision carries the conditions that made it;
- ``history``: what billops already did (the ledger's operations); ``plan``: the exact calls;
- ``take``: reading the service and storing the snapshot; ``apply``: each call once through the
  write-once protocol; ``resolution``: settling an unanswered call for ``billops ledger resolve``;
- ``report``, ``verdict``, ``approval``, ``steps``: reports, permission and final states, the
  nightly's unattended context, and the Prefect tasks the flow composes.
"""

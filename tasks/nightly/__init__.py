"""The nightly run at platform scale: one biller's night, and a coordinator over many billers.

- ``night``: what one biller's night did (:class:`~tasks.nightly.night.BillerResult`: its jobs,
  rows, payments, pauses, duration, outcome), as a row of the coordinator's summary table and
  back; the night's overall outcome.
- ``limits``: the global concurrency limits a biller's night runs under — one per service app
  (its rate limit is shared by every biller of the app) and one per biller (limit 1) —
  created when missing.
- ``children``: a biller's night as a child run of the per-biller deployment, keyed by biller
  and night; watching the children, telling a run whose process is gone, a retry on another
  worker, and reading each child's result back from its artifact.

The jobs themselves are the flows' business (``flows/nightly_biller.py``); nothing here imports
a job package.
"""

from tasks.nightly.night import BillerResult, JobLine, night_of

__all__ = ["BillerResult", "JobLine", "night_of"]

"""The inbox: finance teams drop files into a folder per biller and get a report back.

A file's life (README, "The inbox"): dropped in ``<root>/<biller>/`` (kind detected from its
content) or in a kind's sub-folder (``payment-requests/``, ``bank/``, ``payouts/``); taken only
once complete; claimed by a rename into ``processing/`` (under an OS lock that dies with its
holder, so two watchers never take one file and a crash leaves it to be resumed); processed by
its job; moved with its reports into ``processed/YYYY-MM-DD/`` or ``failed/``. A file dropped
again is recognised by its content (the ledger's files table) and reported, not processed twice.

- ``layout.py``: the folders, the kinds, the names never taken (``~$`` lock files, dot files,
  temporary names), complete-file detection;
- ``claim.py``: the atomic claim, resuming files a dead process left, the move to the outcome
  folder with the reports;
- ``settings.py``: a biller folder's ``inbox.yaml`` (its credential block, what may be applied
  without an approval);
- ``classify.py``: a file's kind from its folder or, at the top level, from what each job's own
  detection recognises (the detectors are passed in: this package imports no other job);
- ``ledger_files.py``: the content check against the ledger's files table;
- ``outcome.py``: the inbox report written beside the file;
- ``status.py``: what is waiting, processing, done and failed, per biller;
- ``watch.py``: the long-running watcher (watchfiles, bounded concurrency, clean SIGTERM).
- ``sweep.py``: one biller's waiting files of one kind, each claimed, processed and released in
  turn (the nightly's bank and payout steps).

The per-file flow and the scan flow are in ``flows/inbox.py``.
"""

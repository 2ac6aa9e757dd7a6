"""A faithful local implementation of the invoicing and payment-collection service.

The sandbox answers the contract in ``billing_api/openapi.yaml`` over real HTTP so that the demo,
the tests and the benchmarks run on a fresh machine. It shares nothing with ``billing_api`` but
that contract file, and no billops job imports it: the CLI loads it lazily
(``billops sandbox serve``). What the real service does where the contract is silent, and what
the sandbox chose instead, is in ``docs/service.md``.

The rule of the house: **routes map HTTP only**. A module of ``routes/`` reads the request
(path, query, body, token), calls the domain packages, and turns their answer into a response;
it builds no SQL and imports no other route module. The domain packages own the queries and the
contract's rules. ``tests/test_layout.py`` checks both.

- ``app`` (``create_app``), ``serve`` (the process and the in-thread test server), ``config``
- ``core/``: database and sessions (one writer at a time on SQLite), request dependencies (the
  biller id, the root URL), the contract's error bodies, JSON bodies and query validation,
  pagination (``Listing``), the clock and run-time state, ids, money, times, numbering, working
  days, request counters and the request-id middleware
- ``models/``: every table, registered by the package's ``__init__``
- ``oauth/``: apps, codes, grants and rotating tokens; client authentication and the consent
  page's rules; the biller record
- ``customers/``: records, listing and financial summaries, settings, mandates, cards on file
- ``billing/``: invoices (lines, tax, actions, instalments, the PDF), payment requests, the
  invoice and payment-request lists, collection pause and resume, imported payments, schedules,
  catalogues, workflows
- ``bulk_import/``: the CSV, jobs and items, applying rows, the background worker
- ``simulation/``: the clock's daily steps (mandates, schedules, collections, payouts) and the
  seeded demo data
- ``exports/``: the payout export and the bank statements in UK banks' layouts
- ``webhooks/``: subscriptions, the event outbox, delivery, the admin history
- ``faults/``: the fault plan and the middleware that injects it
- ``pages/``: the hosted pages' forms and rules (mandate signing, card payment), the documented
  test accounts
- ``routes/``: one router per section of the contract, the hosted pages, the consent page and
  the admin API (``/_sandbox``)
"""

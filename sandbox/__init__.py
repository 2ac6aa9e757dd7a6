"""A faithful local implementation of the invoicing and payment-collection service.

The sandbox answers the contract in ``billing_api/openapi.yaml`` over real HTTP so that the demo,
the tests and the benchmarks run on a fresh machine. It shares nothing with ``billing_api`` but
that contract file, and no billops job imports it: the CLI loads it lazily
(``billops sandbox serve``).

Layout (one module per job):

- ``config``      start-up settings and the run-time overrides of ``POST /_sandbox/config``
- ``db``/``models`` engine factory and tables (SQLite by default, any SQLAlchemy URL)
- ``clock``       the sandbox's time: wall time plus an offset kept in the database
- ``tokens``      OAuth: apps, authorization codes, grants, access and rotating refresh tokens
- ``deps``        FastAPI dependencies: session, principal (biller / platform), admin guard
- ``errors``      the contract's error bodies, rendered in one place
- ``middleware``  ``X-Request-Id`` on every response and the per-operation request counters
- ``routes/``     one router per section of the contract, plus ``admin`` and the consent page
- ``serve``       uvicorn runners: the ``billops sandbox serve`` process and an in-thread server
"""

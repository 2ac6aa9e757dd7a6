"""A faithful local implementation of the invoicing and payment-collection service.

The sandbox answers the contract in ``billing_api/openapi.yaml`` over real HTTP so that the demo,
the tests and the benchmarks run on a fresh machine. It shares nothing with ``billing_api`` but
that contract file, and no billops job imports it: the CLI loads it lazily
(``billops sandbox serve``).

Layout (one module per job; routes are thin, the modules below do the work):

- infrastructure: ``app`` (``create_app``), ``serve`` (the process and the in-thread server),
  ``config``, ``db``, ``models`` (Base, exact ``Money``, auth tables), ``billing_models`` (the
  business tables), ``deps``, ``errors``, ``middleware``, ``pagination``, ``numbering``, ``state``
  (run-time config, the clock), ``stats``, ``contract``, ``timefmt``, ``money``
- input checking: ``bodies`` (exact JSON reading, ``Fields``) and ``validation`` (pydantic bodies);
  both report ``field`` paths in the contract's ``items[0].quantity`` form
- OAuth and billers: ``tokens``, ``billers``
- customers: ``customers`` (shared helpers), ``customer_records``, ``customer_query``,
  ``customer_settings``, ``customer_models``, ``mandates``, ``cards``, ``catalogs``, ``workflows``
- invoicing: ``invoicing``, ``invoice_lines`` (tax per line), ``invoice_actions``, ``instalments``,
  ``invoice_pdf``, ``payment_requests``, ``payment_request_actions``, ``collection`` (pause and
  resume, the effective collection state), ``payment_import``
- bulk import: ``bulk_csv`` (reading the file), ``bulk_import`` (jobs), ``bulk_apply`` (rows),
  ``bulk_worker`` (the background thread), ``import_models``
- schedules: ``schedules``, ``schedule_bodies``, ``schedule_models``; webhooks: ``webhook_settings``
- events and delivery: ``events`` (``emit``: an outbox row in the caller's transaction),
  ``event_models``, ``webhook_delivery`` (the worker: signing, attempts, backoff)
- fault injection: ``faults`` (the plan, the ``--faults`` string, the middleware)
- hosted pages: ``mandate_signing``, ``card_payments``, ``test_accounts``, ``page_html``
- ``seed``: demo data; ``routes/``: one router per section of the contract, ``pages``
  (``/dd-mandate``, ``/pay``), ``consent`` (``/auth/login``), and the admin API (``/_sandbox``):
  ``admin``, ``admin_customers``, ``admin_faults``, ``admin_webhooks``
"""

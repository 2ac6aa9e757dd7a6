"""The state billops keeps (idempotency records, files seen, bank lines, matches, payouts, pauses,
audit), on SQLAlchemy 2 and Alembic. Filled in by the first-job issue."""

"""Alembic's environment for the ledger: runs on the connection :mod:`ledger.migrate` passes in."""

from __future__ import annotations

from alembic import context

from ledger._models import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None or context.is_offline_mode():
    raise RuntimeError(
        "the ledger's migrations run through ledger.migrate.upgrade_database "
        "(`billops db upgrade`), which passes an open connection"
    )
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=config.attributes["version_table"],
    # SQLite alters tables by copying them; batch mode lets later migrations do that portably.
    render_as_batch=True,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()

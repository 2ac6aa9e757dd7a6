"""Prefect flows: composition only. Each flow reads as its job's story (the work is in ``tasks``),
and its docstring tells that story in the UI. ``nightly`` runs one subflow per job per biller."""

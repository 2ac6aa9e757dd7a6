"""Prefect flows: composition only, each flow's docstring tells the job's story in the UI.
Filled in by the job issues."""

"""Prefect blocks: the biller credentials (rotating refresh token) and the platform credentials.
Filled in by the client issue; registered with ``prefect block register -m blocks``."""

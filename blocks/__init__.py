"""Prefect blocks: the biller credentials (rotating refresh token) and the platform credentials.

Register the types with ``billops setup`` (or ``prefect block register -m blocks``).
"""

from blocks.credentials import BillerCredentials
from blocks.platform import PlatformCredentials

__all__ = ["BillerCredentials", "PlatformCredentials"]

"""Settings of billops itself, read from the environment (``BILLOPS_*``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class BillopsSettings(BaseSettings):
    """Where billops keeps its files. ``BILLOPS_HOME`` moves all of them at once."""

    model_config = SettingsConfigDict(env_prefix="BILLOPS_")

    home: Path = Field(default_factory=lambda: Path.home() / ".billops")

    @property
    def sandbox_database_url(self) -> str:
        return f"sqlite:///{self.home / 'sandbox.db'}"

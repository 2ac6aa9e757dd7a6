"""Simulation step: see sandbox/simulation.py (filled in by the simulation issue)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy.orm import Session


def run_day(session: Session, day: date, moment: datetime) -> None:
    """Nothing happens yet on this step."""


def mark_overdue(session: Session, day: date, moment: datetime) -> None:
    """Nothing happens yet on this step."""

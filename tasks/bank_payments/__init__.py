"""Importing payments from bank statements: read what UK banks export, know what is owed, classify
and match each line, and record each customer payment at the service exactly once.

Pure functions here; the ``@task`` wrappers live in ``tasks/bank_payments/steps.py``, how a run
ends in ``outcome.py``, a biller's choices in ``settings.py``, and the flow in
``flows/bank_payments.py``.
"""

from tasks.bank_payments._classify import ClassifyRules, classify
from tasks.bank_payments._errors import BadLine, StatementRefused, UnknownLayout
from tasks.bank_payments._keys import line_keys
from tasks.bank_payments._profiles import (
    Profile,
    ProfileError,
    available_profiles,
    find_profile,
    load_profile,
    user_profile_folder,
)
from tasks.bank_payments._read import (
    OnBadLines,
    detect_layout,
    read_statement,
    read_statement_bytes,
)
from tasks.bank_payments._statement import SkippedLine, Statement, pounds

__all__ = [
    "BadLine",
    "ClassifyRules",
    "OnBadLines",
    "Profile",
    "ProfileError",
    "SkippedLine",
    "Statement",
    "StatementRefused",
    "UnknownLayout",
    "available_profiles",
    "classify",
    "detect_layout",
    "find_profile",
    "line_keys",
    "load_profile",
    "pounds",
    "read_statement",
    "read_statement_bytes",
    "user_profile_folder",
]

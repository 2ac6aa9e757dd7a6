"""Importing payments from bank statements: read what UK banks export, know what is owed, classify
and match each line, and record each customer payment at the service exactly once.

Pure functions here; the ``@task`` wrappers live in ``tasks/bank_payments/steps.py``, how a run
ends in ``outcome.py``, a biller's choices in ``settings.py``, and the flow in
``flows/bank_payments.py``.

Exports are loaded on first use (PEP 562): ``billops bank profiles`` needs only the profiles, and
importing every module here would load pyarrow, numpy and the ledger with it (README
"Performance").
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tasks.bank_payments._classify import ClassifyRules, classify
    from tasks.bank_payments._errors import BadLine, StatementRefused, UnknownLayout
    from tasks.bank_payments._keys import line_keys
    from tasks.bank_payments._payouts import (
        StatementCredits,
        payout_lines,
        read_statement_credits,
    )
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
    "StatementCredits",
    "StatementRefused",
    "UnknownLayout",
    "available_profiles",
    "classify",
    "detect_layout",
    "find_profile",
    "line_keys",
    "load_profile",
    "payout_lines",
    "pounds",
    "read_statement",
    "read_statement_bytes",
    "read_statement_credits",
    "user_profile_folder",
]

# Each export, and the module of this package that defines it.
_HOMES = {
    "BadLine": "_errors",
    "ClassifyRules": "_classify",
    "OnBadLines": "_read",
    "Profile": "_profiles",
    "ProfileError": "_profiles",
    "SkippedLine": "_statement",
    "Statement": "_statement",
    "StatementCredits": "_payouts",
    "StatementRefused": "_errors",
    "UnknownLayout": "_errors",
    "available_profiles": "_profiles",
    "classify": "_classify",
    "detect_layout": "_read",
    "find_profile": "_profiles",
    "line_keys": "_keys",
    "load_profile": "_profiles",
    "payout_lines": "_payouts",
    "pounds": "_statement",
    "read_statement": "_read",
    "read_statement_bytes": "_read",
    "read_statement_credits": "_payouts",
    "user_profile_folder": "_profiles",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

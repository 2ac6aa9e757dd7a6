"""What kind of money each line is, by whole columns: a customer paying, the payment service's
payout, another credit, or money going out.

- ``debit``: money out (amount below zero);
- ``provider_payout``: the payment service paying the biller its collections (payer name or
  reference patterns; the sandbox and the real service pay out as ``ADFIN`` with references
  ``ADFIN-PO-...``, ``docs/service.md``). A payout never settles an invoice: the payout
  reconciliation job takes it;
- ``other_credit``: refunds, interest, transfers between the biller's own accounts and pots,
  loans, currency conversions, other providers' settlements;
- ``customer_payment``: every other credit.

The patterns are settings (:class:`ClassifyRules`), so a biller paid out by another provider, or
one whose bank words things differently, changes data, not code.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

from tasks.bank_payments._kernels import encoded, mask, per_value

CUSTOMER_PAYMENT = "customer_payment"
PROVIDER_PAYOUT = "provider_payout"
OTHER_CREDIT = "other_credit"
DEBIT = "debit"
CLASSES = (CUSTOMER_PAYMENT, PROVIDER_PAYOUT, OTHER_CREDIT, DEBIT)


class ClassifyRules(BaseModel):
    """Patterns (RE2 regular expressions, case-insensitive) that decide a credit's class."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    payout_payers: str = Field(
        default=r"^(ADFIN|ADFIN LTD|ADFIN PAYOUTS?)\b",
        description="Payer names of the payment service's payouts.",
    )
    payout_references: str = Field(
        default=r"\bADFIN-PO-[A-Z0-9]+",
        description="References the payment service puts on its payouts.",
    )
    other_credit_text: str = Field(
        default=(
            r"\b(INTEREST|GROSS INT|REFUND|REVERSAL|REVERSED|RETURNED|CASHBACK|LOAN|"
            r"FUNDING CIRCLE|IWOCA|HMRC|DVLA|FROM SAVINGS|SAVINGS POT|POT TRANSFER|FROM POT|"
            r"EXCHANGE|CONVERSION|CONVERTED|FX |STRIPE PAYMENTS|STRIPE PAYOUT|PAYPAL|"
            r"GOCARDLESS|SUMUP|ZETTLE|SQUARE UK|DIVIDEND|CAPITAL INJECTION)\b"
        ),
        description=(
            "Words in the payer, reference or description of credits that are not customers paying."
        ),
    )
    other_credit_types: str = Field(
        default=r"^(INT|INTEREST|EXCHANGE|CONVERSION|POT|POT_TRANSFER|REFUND|REV|TFR|CASHBACK|LOAN)$",
        description="Bank transaction types of such credits.",
    )
    own_names: list[str] = Field(
        default_factory=list,
        description="The biller's own account names: a credit from one is an own-account transfer.",
    )


def classify(lines: pa.Table, rules: ClassifyRules | None = None) -> pa.Array:
    """One class per line (see the module docstring), as a dictionary array over
    :data:`CLASSES`. Patterns run once per distinct payer, reference, description and type."""
    rules = rules or ClassifyRules()
    amount = np.asarray(lines.column("amount").to_numpy(), dtype=np.int64)
    searched = [lines.column(name) for name in ("payer", "reference", "text")]
    payer = lines.column("payer")

    def hits(values: pa.ChunkedArray | pa.Array, pattern: str) -> np.ndarray:
        # The pattern runs once per distinct value; its answers reach the lines by a numpy
        # gather on the dictionary's indices (no Arrow take and fill per line).
        codes = encoded(values)
        found = pc.match_substring_regex(codes.dictionary, pattern, ignore_case=True)
        if codes.indices.null_count:  # a line without the text: no hit
            return mask(pc.take(found, codes.indices))
        by_line: np.ndarray = mask(found)[np.asarray(codes.indices.to_numpy(zero_copy_only=False))]
        return by_line

    def anywhere(pattern: str) -> np.ndarray:
        found = np.zeros(len(amount), dtype=bool)
        for column in searched:
            found |= hits(column, pattern)
        return found

    payout = hits(payer, rules.payout_payers) | anywhere(rules.payout_references)
    kind = per_value(lines.column("type"), pc.utf8_trim_whitespace)
    other = anywhere(rules.other_credit_text) | hits(kind, rules.other_credit_types)
    for name in rules.own_names:
        if name.strip():
            other |= hits(payer, f"^{_literal(name.upper())}")
    codes = np.zeros(len(amount), dtype=np.int8)  # CUSTOMER_PAYMENT
    codes[other | (amount == 0)] = CLASSES.index(OTHER_CREDIT)
    codes[payout] = CLASSES.index(PROVIDER_PAYOUT)
    codes[amount < 0] = CLASSES.index(DEBIT)
    return pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(CLASSES))


def class_codes(classes: pa.Array) -> np.ndarray:
    """The index into :data:`CLASSES` of each line's class."""
    codes = encoded(classes)
    order = np.array([CLASSES.index(c) for c in codes.dictionary.to_pylist()], dtype=np.int8)
    return order[np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]


def _literal(text: str) -> str:
    return "".join(f"\\{c}" if not c.isalnum() and c != " " else c for c in text)

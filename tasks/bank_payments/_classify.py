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
    :data:`CLASSES`. Patterns run once per distinct payer, reference, description and type.

    Money going out is a debit whatever its texts say: what the patterns found is looked up
    for the credits only (a third of a statement's lines), not gathered for every line."""
    rules = rules or ClassifyRules()
    amount = np.asarray(lines.column("amount").to_numpy(), dtype=np.int64)
    own = [f"^{_literal(name.upper())}" for name in rules.own_names if name.strip()]
    credits = np.flatnonzero(amount >= 0)
    found = np.zeros(len(credits), dtype=np.uint8)
    found |= _hits(
        lines.column("payer"),
        credits,
        payout=[rules.payout_payers, rules.payout_references],
        other=[rules.other_credit_text, *own],
    )
    for name in ("reference", "text"):
        found |= _hits(
            lines.column(name),
            credits,
            payout=[rules.payout_references],
            other=[rules.other_credit_text],
        )
    kind = per_value(lines.column("type"), pc.utf8_trim_whitespace)
    found |= _hits(kind, credits, payout=[], other=[rules.other_credit_types])
    payout, other = (found & _PAYOUT).astype(bool), (found & _OTHER).astype(bool)
    of_credits = np.zeros(len(credits), dtype=np.int8)  # CUSTOMER_PAYMENT
    of_credits[other | (amount[credits] == 0)] = CLASSES.index(OTHER_CREDIT)
    of_credits[payout] = CLASSES.index(PROVIDER_PAYOUT)
    codes = np.full(len(amount), CLASSES.index(DEBIT), dtype=np.int8)
    codes[credits] = of_credits
    return pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(CLASSES))


_PAYOUT, _OTHER = np.uint8(1), np.uint8(2)


def _hits(
    values: pa.ChunkedArray | pa.Array,
    rows: np.ndarray,
    *,
    payout: list[str],
    other: list[str],
) -> np.ndarray:
    """Per line of ``rows``, :data:`_PAYOUT` where a ``payout`` pattern matches its text and
    :data:`_OTHER` where an ``other`` one does (both bits where both do; none for a line
    without the text).

    The patterns run once per distinct value, and what they found reaches the lines by one
    numpy gather on the dictionary's indices per column (not one per pattern)."""
    codes = encoded(values)
    distinct = codes.dictionary
    by_value = np.zeros(len(distinct), dtype=np.uint8)
    for bit, patterns in ((_PAYOUT, payout), (_OTHER, other)):
        for pattern in patterns:
            by_value[mask(pc.match_substring_regex(distinct, pattern, ignore_case=True))] |= bit
    if codes.indices.null_count:  # a line without the text: no hit
        indices = codes.indices.take(pa.array(rows))
        return np.asarray(pc.fill_null(pc.take(pa.array(by_value), indices), 0))
    if len(distinct) == 1:  # one text for every line (a column the file does not have)
        return np.full(len(rows), by_value[0], dtype=np.uint8)
    indices = np.asarray(codes.indices.to_numpy(zero_copy_only=False))
    by_line: np.ndarray = by_value[indices[rows]]
    return by_line


def payout_hits(
    payer: pa.Array | pa.ChunkedArray,
    reference: pa.Array | pa.ChunkedArray,
    text: pa.Array | pa.ChunkedArray,
    rules: ClassifyRules | None = None,
) -> np.ndarray:
    """Per line, whether a payout pattern matches its payer, reference or description: the
    credits among such lines are the ones :func:`classify` calls ``provider_payout``, whatever
    else matches them. For the payout job, which keeps those credits only (``_payouts``):
    the other patterns are not run. The texts may be plain (each pattern over every line's
    text) or dictionary-encoded (over each distinct text)."""
    rules = rules or ClassifyRules()
    # A pattern that is not a regular expression fails :func:`classify` (Arrow's error), the
    # other patterns' too: each is compiled here, in the order it runs there, to fail alike.
    every = (rules.payout_payers, rules.payout_references, rules.other_credit_text)
    for pattern in (*every, rules.other_credit_types):
        pc.match_substring_regex(_ONE_TEXT, pattern, ignore_case=True)
    found = _matching(payer, [rules.payout_payers, rules.payout_references])
    found |= _matching(reference, [rules.payout_references])
    found |= _matching(text, [rules.payout_references])
    return found


_ONE_TEXT = pa.array([""], pa.string())


def _matching(values: pa.Array | pa.ChunkedArray, patterns: list[str]) -> np.ndarray:
    """Per line, whether one of ``patterns`` matches its text (not for a line without one)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    texts = values.dictionary if isinstance(values, pa.DictionaryArray) else values
    found = np.zeros(len(texts), dtype=bool)
    for pattern in patterns:
        found |= mask(pc.match_substring_regex(texts, pattern, ignore_case=True))
    if not isinstance(values, pa.DictionaryArray):
        return found
    return mask(pc.take(pa.array(found), values.indices))


def class_codes(classes: pa.Array) -> np.ndarray:
    """The index into :data:`CLASSES` of each line's class."""
    codes = encoded(classes)
    order = np.array([CLASSES.index(c) for c in codes.dictionary.to_pylist()], dtype=np.int8)
    if not codes.indices.null_count:
        # Arrow's take reads the 32-bit indices as they are (numpy widened them first); the
        # result copied out of Arrow's read-only buffer, as callers may write to it.
        return np.array(pc.take(pa.array(order), codes.indices).to_numpy())
    return order[np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]


def _literal(text: str) -> str:
    return "".join(f"\\{c}" if not c.isalnum() and c != " " else c for c in text)

"""Cell values as finance types them: amounts, dates, tax rates, currency. Each parser raises
ValueError with the reason a person reads in the report (every job's files use them).

Dates are day first, as in the UK: ``dd/mm/yyyy`` (also with ``-`` or ``.``, and ``d/m/yyyy``),
ISO ``yyyy-mm-dd``, or ``1 Dec 2026`` / ``01-Dec-2026``. ``03/04/2026`` is therefore 3 April,
never March 4: US-style month-first dates are not accepted, and one that cannot be day first
(``12/31/2026``) is rejected with a reason that says so. Two-digit years are rejected as
ambiguous.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal

PENNY = Decimal("0.01")
MAX_AMOUNT_CHARS = 20  # keeps Decimal arithmetic exact; no real bill is near it
_AMOUNT = re.compile(r"^(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$|^\.\d+$")
_ISO = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T]00:00(?::00)?)?$")
# A day-first date, also with the midnight Excel appends when it writes a date cell as text.
_DAY_FIRST = re.compile(r"^(\d{1,2})([/.-])(\d{1,2})\2(\d{2,4})(?: 00:00(?::00)?)?$")
# UK writing shortens September to "Sept"; Python's month names know only "Sep".
_SEPT = re.compile(r"\bsept\b", re.IGNORECASE)
# A rate as people write it, in ASCII digits only: Decimal() also takes "1_0", "1E1", "NaN" and
# other scripts' digits, none of which is a rate anybody typed on purpose.
_TAX_RATE = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)$", re.ASCII)
TAX_RATE_STEP = Decimal("0.0001")  # the contract's TaxRatePercent: multipleOf 0.0001
_NAMED_MONTH_FORMATS = ("%d %b %Y", "%d %B %Y", "%d-%b-%Y", "%d-%B-%Y")
_FOREIGN_CURRENCY = ("$", "€", "USD", "EUR")
DATE_FORMATS_HELP = "dd/mm/yyyy or yyyy-mm-dd"
# Spaces people and exports put inside amounts: ordinary, no-break, thin and narrow no-break.
_SPACES = dict.fromkeys(map(ord, " \u00a0\u2009\u202f"))
# The minus sign of word processors and some exports (U+2212), read as the hyphen-minus.
UNICODE_MINUS = "\u2212"
TWO_SIGNS = "has more than one sign"


def money_text(raw: str) -> str:
    """A money cell as the parsers read it: its spaces (also no-break and thin ones) taken out,
    upper-cased, ``−`` (U+2212) as ``-``."""
    return raw.translate(_SPACES).replace(UNICODE_MINUS, "-").upper()


def money_sign(text: str) -> tuple[bool, str]:
    """``(negative, rest)`` of a cleaned money cell (:func:`money_text`): the one sign people
    write taken off, with ``£`` or ``GBP`` — a leading ``-`` or ``+`` (before or after the
    currency), a trailing ``-``, or brackets round the amount.

    Raises ``ValueError(TWO_SIGNS)`` for more than one sign: ``+-12.50`` and ``-(12.50)`` are
    garbled, not money (``+-12.50`` once had its marks stripped and was charged as £12.50).
    A sign anywhere else stays in ``rest``, for the caller's number pattern to refuse.
    """
    marks = text.count("-") + text.count("+") + max(text.count("("), text.count(")"))
    if marks > 1:
        raise ValueError(TWO_SIGNS)
    rest, negative = text, False
    # Where the one sign may stand, outside in: brackets, a sign, the currency, a sign, brackets
    # ("£(12.50)"), then from the end a sign, "GBP", a sign.
    steps = (_brackets, _leading, _currency, _leading, _brackets, _trailing, _suffix, _trailing)
    for step in steps:
        rest, minus = step(rest)
        negative |= minus
    return negative, rest


def _brackets(text: str) -> tuple[str, bool]:
    if len(text) > 1 and text.startswith("(") and text.endswith(")"):
        return text[1:-1], True
    return text, False


def _leading(text: str) -> tuple[str, bool]:
    if text[:1] in ("+", "-"):
        return text[1:], text[0] == "-"
    return text, False


def _trailing(text: str) -> tuple[str, bool]:
    if text[-1:] in ("+", "-"):
        return text[:-1], text[-1] == "-"
    return text, False


def _currency(text: str) -> tuple[str, bool]:
    return text.removeprefix("£").removeprefix("GBP"), False


def _suffix(text: str) -> tuple[str, bool]:
    return text.removesuffix("GBP"), False


def parse_amount(raw: str) -> Decimal:
    """A positive amount in pounds with at most 2 decimal places: ``£1,234.50``, ``1234.5``."""
    text = money_text(raw)
    if not text:
        raise ValueError("amount is required")
    if text.startswith(_FOREIGN_CURRENCY) or text.endswith(_FOREIGN_CURRENCY):
        raise ValueError("only pounds (GBP) are accepted")
    try:
        negative, text = money_sign(text)
    except ValueError:
        raise ValueError(f"amount {TWO_SIGNS} (write it once: 12.50, or -12.50)") from None
    if negative:
        raise ValueError("amount must be positive (more than £0.00)")
    if len(text) > MAX_AMOUNT_CHARS:
        raise ValueError("amount is too large")
    if not _AMOUNT.match(text):
        raise ValueError("amount is not a number of pounds (e.g. 1234.50 or £1,234.50)")
    amount = Decimal(text.replace(",", ""))
    if amount != amount.quantize(PENNY):
        raise ValueError("amount has more than 2 decimal places")
    if amount <= 0:
        raise ValueError("amount must be positive (more than £0.00)")
    return amount.quantize(PENNY)


def _checked_date(year: int, month: int, day: int, raw: str) -> date:
    try:
        return date(year, month, day)
    except ValueError as exc:
        hint = ""
        if month > 12 and day <= 12:
            hint = " (dates are day first, dd/mm/yyyy; month-first US dates are not accepted)"
        raise ValueError(f"{raw!r} is not a valid date: {exc}{hint}") from exc


def parse_date(raw: str) -> date:
    """A date written ``dd/mm/yyyy``, ``yyyy-mm-dd`` or ``1 Dec 2026`` (see the module doc)."""
    text = raw.strip()
    iso = _ISO.match(text)
    if iso:
        return _checked_date(int(iso[1]), int(iso[2]), int(iso[3]), text)
    day_first = _DAY_FIRST.match(text)
    if day_first:
        if len(day_first[4]) != 4:
            raise ValueError(f"{text!r} has a 2-digit year; write the year in full (dd/mm/yyyy)")
        return _checked_date(int(day_first[4]), int(day_first[3]), int(day_first[1]), text)
    named = _SEPT.sub("Sep", text)
    for pattern in _NAMED_MONTH_FORMATS:
        try:
            return datetime.strptime(named, pattern).date()
        except ValueError:
            continue
    raise ValueError(f"{text!r} is not a date ({DATE_FORMATS_HELP})")


def parse_tax_rate(raw: str) -> Decimal:
    """A tax rate as a percentage from 0 to 100: ``20``, ``20%``, ``5.5 %``.

    A value strictly between 0 and 1 is rejected: UK VAT rates are 0, 5 and 20 per cent, so
    ``0.2`` is almost surely 20 % written as a fraction, and a wrong guess bills the wrong tax.
    """
    text = raw.strip().removesuffix("%").strip()
    if not _TAX_RATE.match(text):
        raise ValueError("tax rate is not a percentage (e.g. 20 or 20%)")
    rate = Decimal(text)
    if not 0 <= rate <= 100:
        raise ValueError("tax rate must be a percentage from 0 to 100")
    if 0 < rate < 1:
        raise ValueError("tax rate looks like a fraction; write it as a percent (20 for 20%)")
    if rate != rate.quantize(TAX_RATE_STEP):
        # The contract's TaxRatePercent (multipleOf 0.0001): the service answers 422 "must have
        # at most 4 decimal places" for a finer rate, so it is refused here, before any sending.
        raise ValueError("tax rate has more than 4 decimal places")
    return abs(rate) if rate == 0 else rate  # "-0" is 0


def parse_currency(raw: str) -> str:
    """``GBP`` (also ``£`` or blank); the service accepts no other currency."""
    text = raw.strip().upper()
    if text in ("", "GBP", "£"):
        return "GBP"
    raise ValueError("only GBP is accepted")


def decimal_text(value: Decimal) -> str:
    """A Decimal in plain notation without trailing zeros (``20``, ``17.5``), never ``2E+1``."""
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text

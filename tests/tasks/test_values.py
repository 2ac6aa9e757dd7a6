"""Amounts, dates and tax rates as finance types them."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from tasks.common.finance_files.cells import cell_text
from tasks.common.finance_files.values import (
    decimal_text,
    parse_amount,
    parse_currency,
    parse_date,
    parse_tax_rate,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("£1,234.50", "1234.50"),
        ("1234.5", "1234.50"),
        ("  £ 12 ", "12.00"),
        ("1,000,000.00", "1000000.00"),
        ("GBP 5.10", "5.10"),
        ("0.01", "0.01"),
        ("12.000", "12.00"),
        ("1\u00a0234.50", "1234.50"),
        ("1\u202f234.50", "1234.50"),
        ("+12.50", "12.50"),
        ("12.50GBP", "12.50"),
    ],
)
def test_amounts_people_write(raw: str, expected: str) -> None:
    amount = parse_amount(raw)
    assert isinstance(amount, Decimal) and str(amount) == expected


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "amount is required"),
        ("-3", "must be positive"),
        ("£-3.00", "must be positive"),
        ("(3.00)", "must be positive"),
        ("\u22123.00", "must be positive"),
        ("3.00-", "must be positive"),
        # "+-3.00" lost both marks and was charged as £3.00.
        ("+-3.00", "more than one sign"),
        ("£+-3", "more than one sign"),
        ("+(3.00)", "more than one sign"),
        ("(3.00", "not a number of pounds"),
        ("3-00", "not a number of pounds"),
        ("0", "must be positive"),
        ("0.00", "must be positive"),
        ("1.234", "more than 2 decimal places"),
        ("12.345", "more than 2 decimal places"),
        ("abc", "not a number of pounds"),
        ("1,23.40", "not a number of pounds"),
        ("1e3", "not a number of pounds"),
        ("$10.00", "only pounds"),
        ("10.00 EUR", "only pounds"),
        ("9" * 25, "too large"),
    ],
)
def test_bad_amounts_say_why(raw: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_amount(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-12-30", date(2026, 12, 30)),
        ("30/12/2026", date(2026, 12, 30)),
        ("3/4/2027", date(2027, 4, 3)),  # day first: 3 April, never 4 March
        ("03-04-2027", date(2027, 4, 3)),
        ("03.04.2027", date(2027, 4, 3)),
        ("1 Dec 2026", date(2026, 12, 1)),
        ("01-Dec-2026", date(2026, 12, 1)),
        ("2026-12-30 00:00:00", date(2026, 12, 30)),
        ("30/12/2026 00:00:00", date(2026, 12, 30)),  # Excel's date cell as text
        ("30/12/2026 00:00", date(2026, 12, 30)),
        ("1 Sept 2026", date(2026, 9, 1)),  # the UK's short September
        ("1 sept 2026", date(2026, 9, 1)),
        ("1 September 2026", date(2026, 9, 1)),
    ],
)
def test_dates_are_day_first_or_iso(raw: str, expected: date) -> None:
    assert parse_date(raw) == expected


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("12/31/2026", "month-first US dates are not accepted"),
        ("31/02/2027", "not a valid date"),
        ("30/12/26", "2-digit year"),
        ("next Friday", "not a date"),
        ("2026-13-01", "not a valid date"),
        ("30/12/2026 13:45", "not a date"),  # a time of day is not a due date
        ("1 Septe 2026", "not a date"),
    ],
)
def test_bad_dates_say_why(raw: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_date(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("20", "20"),
        ("20%", "20"),
        ("5.5 %", "5.5"),
        ("0", "0"),
        ("-0", "0"),
        ("100", "100"),
        ("17.5000", "17.5"),
        ("12.3456", "12.3456"),
    ],
)
def test_tax_rates_are_percentages(raw: str, expected: str) -> None:
    assert decimal_text(parse_tax_rate(raw)) == expected


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("0.2", "looks like a fraction"),
        ("120", "from 0 to 100"),
        ("-5", "from 0 to 100"),
        ("VAT", "not a percentage"),
        ("NaN", "not a percentage"),
        ("Infinity", "not a percentage"),
        # Decimal() read these as 10 (%): not rates anybody typed on purpose.
        ("1_0", "not a percentage"),
        ("1E1", "not a percentage"),
        ("\u0662\u0660", "not a percentage"),
        # The contract allows 4 decimal places; more was sent and refused by the service.
        ("20.00001", "more than 4 decimal places"),
    ],
)
def test_bad_tax_rates_say_why(raw: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_tax_rate(raw)


def test_currency_is_gbp_only() -> None:
    assert [parse_currency(v) for v in ("", "gbp", "£")] == ["GBP"] * 3
    with pytest.raises(ValueError, match="only GBP"):
        parse_currency("EUR")


@pytest.mark.parametrize(
    ("value", "number_format", "expected"),
    [
        (None, None, ""),
        (120.5, "General", "120.5"),
        (30.0, "General", "30"),
        (0.1 + 0.2, "General", "0.3"),
        (1.234, "General", "1.234"),
        (0.175, "0.0%", "17.5%"),
        (1, "0%", "100%"),
        (True, None, "TRUE"),
        (1e16, "General", "10000000000000000"),
    ],
)
def test_spreadsheet_cells_become_the_text_a_person_typed(
    value: object, number_format: str | None, expected: str
) -> None:
    assert cell_text(value, number_format) == expected

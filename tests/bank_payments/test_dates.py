"""Statement dates are business dates in Europe/London (docs/conventions.md §3): a bank that
writes its date-times in UTC (Revolut's "(UTC)" columns) is converted before the date is taken,
through daylight saving; and a two-digit year is refused naming the line, never guessed."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa
import pytest

from tasks.bank_payments import (
    ProfileError,
    StatementRefused,
    available_profiles,
    load_profile,
    read_statement_bytes,
)
from tasks.bank_payments._kernels import parse_dates

DATA = Path(__file__).resolve().parents[1] / "data" / "bank"
TODAY = date(2026, 11, 24)
REVOLUT = (DATA / "revolut_business.csv").read_text(encoding="utf-8").splitlines()[0] + "\n"
FORMATS = ["%Y-%m-%d", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]


def _revolut_line(completed: str, txn: str) -> str:
    return (
        f"{completed},{completed},{txn},TOPUP,COMPLETED,Payment from Acme Services Ltd,INV-0042,"
        "Acme Services Ltd,,,,GBP,10.00,GBP,10.00,10.00,,0.00,GBP,,Main GBP,,,,,,,\n"
    )


# (the bank's UTC date-time, the London date it is): London is UTC in winter (GMT) and an hour
# ahead in summer (BST, from 01:00 UTC on the last Sunday of March to 01:00 UTC on the last
# Sunday of October; in 2026 the 29th of March and the 25th of October).
INSTANTS = [
    ("2026-06-30 23:30:00", date(2026, 7, 1)),  # summer: 00:30 BST on 1 July
    ("2026-06-30 22:59:59", date(2026, 6, 30)),  # summer: 23:59:59 BST
    ("2026-01-15 23:30:00", date(2026, 1, 15)),  # winter: GMT is UTC
    ("2026-03-28 23:30:00", date(2026, 3, 28)),  # the night the clocks go forward: still GMT
    ("2026-03-29 00:59:59", date(2026, 3, 29)),  # the last second of GMT
    ("2026-03-29 23:30:00", date(2026, 3, 30)),  # the first night of BST
    ("2026-10-24 23:30:00", date(2026, 10, 25)),  # the night the clocks go back: 00:30 BST
    ("2026-10-25 00:30:00", date(2026, 10, 25)),  # 01:30 BST, the first of the two 01:30s
    ("2026-10-25 01:30:00", date(2026, 10, 25)),  # 01:30 GMT, the second
    ("2026-10-25 23:30:00", date(2026, 10, 25)),  # the first night of GMT again
    ("2026-12-31 23:59:59", date(2026, 12, 31)),
]
# The other forms Revolut writes (one per file: a file mixing them is refused).
OTHER_FORMS = [
    ("2026-06-30 23:30", date(2026, 7, 1)),
    ("2026-06-30", date(2026, 6, 30)),  # a date without a time is the date the bank says
]


def test_revolut_date_times_in_utc_are_booked_on_their_london_date() -> None:
    data = REVOLUT + "".join(
        _revolut_line(stamp, f"tx-{number}")
        for number, (stamp, _) in enumerate(INSTANTS)
        if date.fromisoformat(stamp[:10]) <= TODAY
    )
    statement = read_statement_bytes(data.encode(), where="r.csv", today=TODAY)
    assert statement.profile.name == "revolut_business"
    assert statement.lines.column("date").to_pylist() == [
        day for stamp, day in INSTANTS if date.fromisoformat(stamp[:10]) <= TODAY
    ]


def test_the_kernel_converts_only_with_a_zone_and_only_times() -> None:
    cases = INSTANTS + OTHER_FORMS
    values = pa.array([stamp for stamp, _ in cases])
    as_written, _ = parse_dates(values, FORMATS)
    assert as_written.to_pylist()[0] == date(2026, 6, 30)
    in_london, used = parse_dates(values, FORMATS, zone="UTC")
    assert in_london.to_pylist() == [day for _, day in cases]
    assert -1 not in used.to_pylist()


def test_a_time_that_is_ambiguous_or_missing_in_the_banks_zone_is_refused() -> None:
    # 01:30 on 25 October happens twice in London, 01:30 on 29 March never: which instant a
    # bank writing London wall-clock time meant cannot be known.
    values = pa.array(["2026-10-25 01:30:00", "2026-03-29 01:30:00", "2026-10-25 03:00:00"])
    dates, used = parse_dates(values, FORMATS, zone="Europe/London")
    assert dates.to_pylist() == [None, None, date(2026, 10, 25)]
    assert used.to_pylist()[:2] == [-2, -2]


def test_only_profiles_whose_export_is_in_utc_convert_their_dates() -> None:
    zoned = {p.name: p.date_zone for p in available_profiles(user_folder=DATA / "none")}
    assert {name: zone for name, zone in zoned.items() if zone} == {"revolut_business": "UTC"}


def test_a_profile_with_an_unknown_zone_is_refused_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "coop.yaml"
    path.write_text(
        "name: coop\nbank: Co-op\nsignature: [Posted]\ncolumns: {date: Posted, amount: 2}\n"
        "date_zone: Mars/Olympus\n",
        encoding="utf-8",
    )
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert str(path) in str(caught.value) and "date_zone" in str(caught.value)


LLOYDS_COMMERCIAL = (
    "Balances and Transactions Report - Lloyds Bank Commercial Banking Online\n"
    "Post Date,Account Number,Account Name,Type,Amount,Customer Reference,Transaction Detail,"
    "Balance\n"
    "02/11/2026,309634-12345678 GBP,WIDGET CO LTD,Faster Payment Received,1250.00,INV-0042,"
    "ACME,\n"
)


@pytest.mark.parametrize("after_a_good_line", [False, True], ids=["alone", "after a good line"])
@pytest.mark.parametrize("written", ["02/11/99", "02/11/69", "2/11/26"])
def test_a_two_digit_year_is_refused_naming_the_line(written: str, after_a_good_line: bool) -> None:
    # "02/11/99" was read as 1999 and "02/11/69" as 1969: which century is a guess.
    good = LLOYDS_COMMERCIAL.splitlines(keepends=True)
    data = "".join(good if after_a_good_line else good[:2])
    data += good[-1].replace("02/11/2026", written)
    with pytest.raises(StatementRefused) as caught:
        read_statement_bytes(data.encode(), where="l.csv", today=TODAY)
    error = caught.value
    assert (error.file, error.line) == ("l.csv", 4 if after_a_good_line else 3), str(error)
    assert "two-digit year" in error.reason and repr(written) in error.reason, error.reason


def test_no_shipped_profile_reads_two_digit_years() -> None:
    for profile in available_profiles(user_folder=DATA / "none"):
        assert not any("%y" in fmt for fmt in profile.date_formats), profile.name


def test_a_user_profile_with_a_two_digit_year_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "coop.yaml"
    path.write_text(
        "name: coop\nbank: Co-op\nsignature: [Posted]\ncolumns: {date: Posted, amount: 2}\n"
        "date_formats: ['%d/%m/%Y', '%d/%m/%y']\n",
        encoding="utf-8",
    )
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert "date_formats" in str(caught.value) and "two-digit" in str(caught.value)

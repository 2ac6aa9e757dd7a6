"""The picture: a PNG with both bar series and the in-transit line where there is money to show,
axis labels in round pounds, written atomically (nothing left beside it)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pandas as pd
from PIL import Image

from tasks.payouts._balance import Balance
from tasks.payouts._chart import BLUE, GREEN, HEIGHT, RED, WIDTH, _Axis, draw_balance, pounds


def _rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def _balance(days: int, *, paid_late: bool) -> Balance:
    first = date(2027, 3, 1)
    collected = [150_00 * (n % 5 + 1) for n in range(days)]
    paid = [0, 0, *collected[:-2]] if paid_late else [0] * days
    transit = pd.Series(collected).cumsum() - pd.Series(paid).cumsum()
    daily = pd.DataFrame(
        {
            "day": [first + timedelta(days=n) for n in range(days)],
            "collected": collected,
            "deductions": [0] * days,
            "paid_out": paid,
            "in_transit": transit,
        }
    )
    return Balance(first, first + timedelta(days=days - 1), 0, daily, 0, 0)


def test_the_picture_shows_payouts_credits_and_money_in_transit(tmp_path: Path) -> None:
    path = draw_balance(_balance(31, paid_late=True), tmp_path / "r.png", title="biller: March")

    with Image.open(path) as image:
        assert image.format == "PNG" and image.size == (WIDTH, HEIGHT)
        counts = {colour: n for n, colour in image.convert("RGB").getcolors(WIDTH * HEIGHT)}
    swatch = 19 * 7  # each colour's square in the legend
    assert all(counts[_rgb(c)] > swatch for c in (BLUE, GREEN, RED))
    assert [p.name for p in tmp_path.iterdir()] == ["r.png"]


def test_nothing_credited_draws_no_credit_bars(tmp_path: Path) -> None:
    path = draw_balance(_balance(5, paid_late=False), tmp_path / "r.png", title="biller")

    with Image.open(path) as image:
        counts = {colour: n for n, colour in image.convert("RGB").getcolors(WIDTH * HEIGHT)}
    assert counts[_rgb(BLUE)] > 19 * 7
    assert counts[_rgb(GREEN)] == 19 * 7  # the legend's swatch only: no credit bar


def test_axis_labels_are_round_pounds() -> None:
    assert [pounds(v) for v in _Axis(0, 1.15).ticks()] == ["0", "0.5", "1"]
    assert [pounds(v) for v in _Axis(0, 2_300_000).ticks()] == ["0", "500k", "1m", "1.5m", "2m"]
    assert (pounds(-25), pounds(1_234)) == ("-25", "1.2k")

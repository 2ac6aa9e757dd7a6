"""The picture of a reconciliation: payouts and bank credits by day, with the money in transit.

Bars: what the payouts of each day carried (their items, net of deductions) and what the bank
credited for payouts that day; a line: the in-transit balance at the end of each day, held until
the end of the next. A PNG drawn with Pillow's ImageDraw (no display needed: workers and CI have
none) and written atomically. Pillow, not a plotting library: the chart is two bar series and a
step line, and importing matplotlib cost a year's run more CPU (about 0.4 s) than reconciling it.
"""

from __future__ import annotations

import io
import os
import tempfile
from datetime import date
from math import floor, log10
from pathlib import Path
from typing import Any

import numpy as np

from tasks.payouts._balance import Balance

WIDTH, HEIGHT = 1100, 528
LEFT, RIGHT, TOP, BOTTOM = 78, 92, 40, 62  # margins around the plot, pixels
BLUE, GREEN, RED = "#4c72b0", "#55a868", "#c44e52"
INK, GRID = "#222222", "#e5e5e5"
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def draw_balance(balance: Balance, path: Path, *, title: str) -> Path:
    """Write the picture of ``balance`` to ``path`` (PNG); returns ``path``."""
    from PIL import Image, ImageDraw

    daily = balance.daily
    carried = (daily["collected"] - daily["deductions"]).to_numpy(dtype=np.int64) / 100
    paid = daily["paid_out"].to_numpy(dtype=np.int64) / 100
    transit = daily["in_transit"].to_numpy(dtype=np.int64) / 100
    days = list(daily["day"])
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    draw = ImageDraw.Draw(image)
    font, small = _font(12), _font(10)
    box = (LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM)
    bars = _Axis(0.0, max(1.0, float(max(carried.max(initial=0), paid.max(initial=0)))) * 1.05)
    line = _Axis(
        min(0.0, float(transit.min(initial=0))), max(1.0, float(transit.max(initial=0))) * 1.15
    )
    _grid_and_ticks(draw, box, bars, line, small)
    _date_ticks(draw, box, days, small)
    step = (box[2] - box[0]) / max(1, len(days))
    width = max(1, min(3, int(step / 3)))
    for i in range(len(days)):
        middle = box[0] + (i + 0.5) * step
        for x, value, colour in (
            (middle - width, carried[i], BLUE),
            (middle + width, paid[i], GREEN),
        ):
            if value > 0:
                top = bars.y(box, value)
                draw.rectangle((x - width / 2, top, x + width / 2, box[3]), fill=colour)
    # The balance at the end of each day, held until the end of the next (a step line).
    points: list[tuple[float, float]] = []
    for i, value in enumerate(transit):
        end, y = box[0] + (i + 1) * step, line.y(box, float(value))
        points += [(end, points[-1][1]), (end, y)] if points else [(end, y)]
    if len(points) > 1:
        draw.line(points, fill=RED, width=2, joint="curve")
    draw.rectangle(box, outline=INK)
    _legend(draw, box, small)
    draw.text((WIDTH / 2, TOP / 2), title, fill=INK, font=font, anchor="mm")
    _vertical(image, "GBP per day", (14, (box[1] + box[3]) / 2), font)
    _vertical(image, "GBP in transit (end of day)", (WIDTH - 14, (box[1] + box[3]) / 2), font)
    _save(image, path)
    return path


class _Axis:
    """A vertical scale from ``low`` to ``high`` pounds."""

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high if high > low else low + 1

    def y(self, box: tuple[int, int, int, int], value: float) -> float:
        share = (value - self.low) / (self.high - self.low)
        return box[3] - share * (box[3] - box[1])

    def ticks(self) -> list[float]:
        """Round values (1, 2 or 5 times a power of ten apart), about five of them."""
        raw = (self.high - self.low) / 5
        power = 10 ** floor(log10(raw))
        step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
        first = np.ceil(self.low / step) * step
        return [float(v) for v in np.arange(first, self.high + step / 1e6, step)]


def pounds(value: float) -> str:
    """An axis label in pounds: ``0``, ``500``, ``25k``, ``1.5m`` (the axis says GBP: Pillow's
    own font has no pound sign)."""
    sign, size = ("-" if value < 0 else ""), abs(value)
    if size >= 1_000_000:
        text = f"{size / 1_000_000:.1f}".removesuffix(".0") + "m"
    elif size >= 1_000:
        text = f"{size / 1_000:.1f}".removesuffix(".0") + "k"
    else:
        text = f"{size:.2f}".rstrip("0").rstrip(".")  # 0.5 on a scale of a pound or two
    return f"{sign}{text}"


def _grid_and_ticks(
    draw: Any, box: tuple[int, int, int, int], bars: _Axis, line: _Axis, font: Any
) -> None:
    for value in bars.ticks():
        y = bars.y(box, value)
        draw.line((box[0], y, box[2], y), fill=GRID)
        draw.line((box[0] - 4, y, box[0], y), fill=INK)
        draw.text((box[0] - 7, y), pounds(value), fill=INK, font=font, anchor="rm")
    for value in line.ticks():
        y = line.y(box, value)
        draw.line((box[2], y, box[2] + 4, y), fill=INK)
        draw.text((box[2] + 7, y), pounds(value), fill=INK, font=font, anchor="lm")


def _date_ticks(draw: Any, box: tuple[int, int, int, int], days: list[date], font: Any) -> None:
    """The first of each month under a long period, else every seventh day."""
    if not days:
        return
    step = (box[2] - box[0]) / len(days)
    long = (days[-1] - days[0]).days > 62
    for i, day in enumerate(days):
        if (day.day == 1) if long else (i % 7 == 0):
            x = box[0] + (i + 0.5) * step
            draw.line((x, box[3], x, box[3] + 4), fill=INK)
            label = f"{MONTHS[day.month - 1]} {day.year}" if long else day.isoformat()
            draw.text((x, box[3] + 7), label, fill=INK, font=font, anchor="ma")


def _legend(draw: Any, box: tuple[int, int, int, int], font: Any) -> None:
    entries = (
        (BLUE, "payouts (items, net)"),
        (GREEN, "bank credits for payouts"),
        (RED, "in transit"),
    )
    x, y = box[0] + 10, box[1] + 10
    draw.rectangle((x - 4, y - 4, x + 180, y + 16 * len(entries)), fill="white", outline=GRID)
    for n, (colour, text) in enumerate(entries):
        top = y + 16 * n
        draw.rectangle((x, top + 3, x + 18, top + 9), fill=colour)
        draw.text((x + 24, top + 6), text, fill=INK, font=font, anchor="lm")


def _vertical(image: Any, text: str, centre: tuple[float, float], font: Any) -> None:
    """``text`` written upwards, centred on ``centre``."""
    from PIL import Image, ImageDraw

    left, top, right, bottom = font.getbbox(text)
    label = Image.new("RGBA", (int(right - left) + 4, int(bottom - top) + 4), (255, 255, 255, 0))
    ImageDraw.Draw(label).text((2 - left, 2 - top), text, fill=INK, font=font)
    turned = label.rotate(90, expand=True)
    where = (int(centre[0] - turned.width / 2), int(centre[1] - turned.height / 2))
    image.paste(turned, where, turned)


def _font(size: int) -> Any:
    """Pillow's own font (Aileron, shipped inside Pillow since 10.1) at ``size`` pixels."""
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def _save(image: Any, path: Path) -> None:
    """Write the PNG atomically (a temporary name, then a rename), readable by the team."""
    data = io.BytesIO()
    image.save(data, format="PNG", optimize=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.getvalue())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

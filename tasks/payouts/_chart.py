"""The picture of a reconciliation: payouts and bank credits by day, with the money in transit.

Bars: what the payouts of each day carried (their items, net of deductions) and what the bank
credited for payouts that day; a line: the in-transit balance at the end of each day. Drawn with
matplotlib's Agg canvas (no display needed: workers and CI have none) and written atomically.
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime, time
from pathlib import Path
from typing import Any

from tasks.payouts._balance import Balance

WIDTH, HEIGHT, DPI = 10.0, 4.8, 110
BAR = 3.0  # points
BLUE, GREEN, RED = "#4c72b0", "#55a868", "#c44e52"


def draw_balance(balance: Balance, path: Path, *, title: str) -> Path:
    """Write the picture of ``balance`` to ``path`` (PNG); returns ``path``."""
    # The figure is drawn on Agg directly: pyplot (its backends, its global state) is not needed
    # to write a file, and importing it costs more than drawing.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import date2num
    from matplotlib.figure import Figure

    daily = balance.daily
    noons = date2num([datetime.combine(d, time(12)) for d in daily["day"]])  # type: ignore[no-untyped-call]
    shift = 5 / 24  # days: the two bars of a day side by side
    figure = Figure(figsize=(WIDTH, HEIGHT), dpi=DPI)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    axes.xaxis_date()
    # Bars as vertical lines: one collection for a year of days, not a shape per day.
    carried = (daily["collected"] - daily["deductions"]) / 100
    axes.vlines(noons - shift, 0, carried, colors=BLUE, linewidth=BAR, label="payouts (items, net)")
    axes.vlines(
        noons + shift,
        0,
        daily["paid_out"] / 100,
        colors=GREEN,
        linewidth=BAR,
        label="bank credits for payouts",
    )
    axes.set_ylabel("£ per day")
    axes.set_ylim(bottom=0)
    line_axes = axes.twinx()
    transit = daily["in_transit"] / 100
    # The balance at the end of each day, held until the end of the next.
    ends = noons + 0.5
    line_axes.plot(ends, transit, color=RED, label="in transit", drawstyle="steps-post")
    line_axes.set_ylabel("£ in transit (end of day)")
    line_axes.set_ylim(
        bottom=min(0.0, float(transit.min())), top=max(1.0, float(transit.max())) * 1.15
    )
    handles, labels = axes.get_legend_handles_labels()
    more, more_labels = line_axes.get_legend_handles_labels()
    axes.legend(handles + more, labels + more_labels, loc="upper left", fontsize=8)
    axes.set_title(title, fontsize=10)
    figure.autofmt_xdate()
    figure.tight_layout()
    _save(figure, path)
    return path


def _save(figure: Any, path: Path) -> None:
    """Write the PNG atomically (a temporary name, then a rename), readable by the team."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        figure.savefig(temporary, format="png")
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

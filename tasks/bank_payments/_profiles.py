"""Bank export profiles: how one bank's statement file is laid out, as data a person can edit.

A profile is a small YAML file (the shipped ones are in ``profiles/`` beside this module; a
user's go in ``$BILLOPS_HOME/bank-profiles/``, or one is named with ``--profile FILE``). It says
which header cells identify the layout, where each field is (by column name or 1-based position),
the date formats, the decimal and thousands marks, how money is signed (one signed column, or
separate money-in and money-out columns, or unsigned amounts with a direction column: ``sign:
direction`` reads ``credit`` on lines whose ``direction`` is one of ``credit_directions`` and
``debit`` as money out on those of ``debit_directions``), the encoding, and how many lines may
come before the header or after the data. ``footer_patterns`` are regular expressions for
lines after the data that are not rows of the table (another number of cells, such as
midata's "Arranged overdraft limit;03/11/2026;+£0.00;"): such a line is left out, not
refused. Each shipped profile says where its layout came from.

Dates: ``date_formats`` are ``strptime`` formats, tried in order (a file uses one of them); a
two-digit year (``%y``, ``%D``) is refused, as everywhere in billops (``docs/conventions.md §3``:
which century is meant is a guess). ``date_zone`` (an IANA name such as ``UTC``) is for banks
whose date-times are in another zone than London's, as Revolut's "Date completed (UTC)": each
date-time is converted from that zone to Europe/London before its date is taken, since business
dates are London dates (§3); a date without a time is taken as written. Without it, the date is
the one written.

User profiles override shipped ones of the same name; ``billops bank profiles`` lists them all.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

SHIPPED = Path(__file__).resolve().parent / "profiles"
FIELDS = (
    "date",
    "amount",
    "credit",
    "debit",
    "payer",
    "reference",
    "text",
    "type",
    "id",
    "balance",
    "account",
    "currency",
    "state",
    "direction",
)
ColumnRef = str | int | list[str | int]


class ProfileError(ValueError):
    """A profile file that cannot be used, with the file and the reason."""


class Shape(BaseModel):
    """How a file without a header row is recognised: its width and where date and amount are."""

    model_config = ConfigDict(extra="forbid")
    columns: int = Field(ge=2, description="Number of cells in every line.")
    date_column: int = Field(ge=1, description="1-based position of the date.")
    amount_column: int = Field(ge=1, description="1-based position of the amount.")


class Profile(BaseModel):
    """One bank export layout (see the module docstring for the YAML keys)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9_][a-z0-9_-]*$")
    bank: str
    description: str = ""
    source: str = ""
    format: Literal["csv", "labelled"] = "csv"
    delimiter: str = ","
    encoding: str = "auto"
    header: bool = True
    signature: list[str] = []
    signature_any: list[list[str]] = []
    exact_header: bool = False
    header_strip: str = ""
    preamble_lines: int = Field(default=0, ge=0, le=50)
    preamble_patterns: list[str] = []
    footer_lines: int = Field(default=0, ge=0, le=50)
    footer_patterns: list[str] = []
    shape: Shape | None = None
    columns: dict[str, ColumnRef] = {}
    labels: dict[str, str] = {}
    memo_slots: dict[str, int] = {}
    date_formats: list[str] = ["%d/%m/%Y"]
    date_zone: str | None = None
    decimal: str = "."
    thousands: str | None = ","
    sign: Literal["signed", "inverted", "in_out", "direction"] = "signed"
    credit_directions: list[str] = []
    debit_directions: list[str] = []
    currency: str = "GBP"
    account_currency_suffix: bool = False
    skip_rows_where: dict[str, str] = {}
    balance_summary_rows: bool = False
    booked_states: list[str] = []
    balance_check: bool = True
    origin: str = Field(default="shipped", exclude=True)

    @field_validator("columns")
    @classmethod
    def _known_fields(cls, value: dict[str, ColumnRef]) -> dict[str, ColumnRef]:
        unknown = sorted(set(value) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown field(s) {unknown}; fields are {', '.join(FIELDS)}")
        return value

    @field_validator("date_formats")
    @classmethod
    def _four_digit_years(cls, value: list[str]) -> list[str]:
        # docs/conventions.md §3: two-digit years are refused, never given a century.
        for fmt in value:
            if any(d in ("%y", "%D") for d in re.findall(r"%.", fmt)):
                raise ValueError(
                    f"{fmt!r} reads a two-digit year; billops refuses two-digit years "
                    "(which century is a guess): use %Y"
                )
        return value

    @field_validator("date_zone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(
                f"{value!r} is not a time zone (an IANA name such as UTC or Europe/Paris)"
            ) from exc
        return value

    @field_validator("delimiter")
    @classmethod
    def _one_char(cls, value: str) -> str:
        if value == "\\t":
            return "\t"
        if len(value) != 1:
            raise ValueError("delimiter must be one character (use \\t for tab)")
        return value

    def model_post_init(self, _context: Any) -> None:
        if self.format == "labelled":
            if "date" not in self.labels.values() or "amount" not in self.labels.values():
                raise ValueError("a labelled profile needs labels for date and amount")
            return
        if "date" not in self.columns:
            raise ValueError("columns.date is required")
        money = {
            "in_out": {"credit", "debit"},
            "direction": {"credit", "debit", "direction"},
        }.get(self.sign, {"amount"})
        missing = sorted(money - set(self.columns))
        if missing:
            raise ValueError(f"sign {self.sign!r} needs columns {missing}")
        if self.sign == "direction" and not (self.credit_directions and self.debit_directions):
            raise ValueError(
                "sign 'direction' needs credit_directions and debit_directions (the direction "
                "column's words for money in and money out, such as [IN] and [OUT])"
            )
        if self.header and not self.signature:
            raise ValueError("a profile with a header row needs a signature (its header cells)")
        if not self.header and self.shape is None:
            raise ValueError("a profile without a header row needs a shape")
        patterns = [("preamble_patterns", p) for p in self.preamble_patterns]
        patterns += [("footer_patterns", p) for p in self.footer_patterns]
        patterns += [(f"skip_rows_where.{k}", p) for k, p in self.skip_rows_where.items()]
        for key, pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{key}: {pattern!r} is not a regular expression ({exc})") from exc

    def column_names(self, field: str) -> list[str | int]:
        """The names (or 1-based positions) a field may be found under, most preferred first."""
        if self.format == "labelled":
            return [label for label, name in self.labels.items() if name == field]
        ref = self.columns.get(field)
        if ref is None:
            return []
        return list(ref) if isinstance(ref, list) else [ref]

    def known_headers(self) -> set[str]:
        """Every header cell this profile names (normalised), for closeness scores."""
        names = {normalise_header(s, self.header_strip) for s in self.signature}
        for field in self.columns:
            names.update(
                normalise_header(n, self.header_strip)
                for n in self.column_names(field)
                if isinstance(n, str)
            )
        return names


def normalise_header(cell: str, strip: str = "") -> str:
    """A header cell as compared: no BOM, quotes, apostrophes or ``strip`` marks; casefolded."""
    text = cell.replace("\ufeff", "").strip().strip('"').strip("'").strip()
    if strip:
        text = text.strip(strip).strip()
    return " ".join(text.split()).casefold()


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_profile(path: Path, *, origin: str = "user") -> Profile:
    """One profile from a YAML file, or :class:`ProfileError` naming the file and the problem."""
    try:
        stamp = path.stat()
        return _load_cached(path, origin, stamp.st_mtime_ns, stamp.st_size)
    except OSError as exc:
        raise ProfileError(f"{path}: cannot be read as a YAML profile ({exc})") from exc


@functools.lru_cache(maxsize=256)
def _load_cached(path: Path, origin: str, _mtime: int, _size: int) -> Profile:
    """A profile file read once per content (its change time and size are part of the key)."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)  # noqa: S506 - safe
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" line {mark.line + 1}:" if mark is not None else ""
        raise ProfileError(f"{path}:{where} not valid YAML ({exc.problem})") from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ProfileError(f"{path}: cannot be read as a YAML profile ({exc})") from exc
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: a profile is a YAML mapping (name, bank, columns, ...)")
    try:
        return Profile.model_validate({**data, "origin": origin})
    except ValidationError as exc:  # each problem by its key, as the settings files say them
        problems = "; ".join(_problem(error) for error in exc.errors())
        raise ProfileError(f"{path}: not a valid bank profile: {problems}") from exc
    except (ValueError, re.error) as exc:
        raise ProfileError(f"{path}: not a valid bank profile: {exc}") from exc


def _problem(error: Any) -> str:
    """One validation problem as ``key: what is wrong`` (the whole profile's own say their key)."""
    key = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{key}: {message}" if key else message


def _from_folder(folder: Path, origin: str) -> list[Profile]:
    if not folder.is_dir():
        return []
    return [load_profile(p, origin=origin) for p in sorted(folder.glob("*.y*ml"))]


def user_profile_folder() -> Path:
    """``$BILLOPS_HOME/bank-profiles`` (may not exist)."""
    from ledger.settings import BillopsSettings

    return BillopsSettings().home / "bank-profiles"


def available_profiles(
    *, user_folder: Path | None = None, extra: Sequence[Path] = ()
) -> list[Profile]:
    """Shipped profiles, then the user's (same name replaces), then ``extra`` files, by name."""
    found: dict[str, Profile] = {}
    folder = user_profile_folder() if user_folder is None else user_folder
    loaded: Iterable[Profile] = [
        *_from_folder(SHIPPED, "shipped"),
        *_from_folder(folder, f"user ({folder})"),
        *(load_profile(path, origin=f"file ({path})") for path in extra),
    ]
    for profile in loaded:
        found[profile.name] = profile
    return sorted(found.values(), key=lambda p: p.name)


def find_profile(name_or_path: str, *, user_folder: Path | None = None) -> Profile:
    """A profile by name (shipped or user), or from a YAML file path."""
    path = Path(name_or_path)
    if path.suffix.lower() in (".yaml", ".yml") or path.is_file():
        return load_profile(path, origin=f"file ({path})")
    profiles = {p.name: p for p in available_profiles(user_folder=user_folder)}
    if name_or_path not in profiles:
        raise ProfileError(
            f"no bank profile named {name_or_path!r}; known: {', '.join(sorted(profiles))}"
        )
    return profiles[name_or_path]

"""A user's bank profile or bank settings file with a mistake: refused with an error naming the
file and the key (or the YAML line), one test per kind of mistake; a good file beside it is fine."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.bank_payments import ProfileError, find_profile, load_profile
from tasks.bank_payments.settings import BankSettingsError, read_settings

BASE = "name: coop\nbank: Co-operative Bank\nsignature: [Posted, Details]\n"
COLUMNS = "columns: {date: Posted, text: Details, amount: 3}\n"

PROFILES = [
    ("not yaml", "name: [coop\n", ("line 2", "not valid YAML")),
    ("not a mapping", "- coop\n- barclays\n", ("a profile is a YAML mapping",)),
    ("unknown key", BASE + COLUMNS + "colour: red\n", ("colour:", "Extra inputs")),
    (
        "unknown field",
        BASE + "columns: {date: Posted, amount: 3, colour: 4}\n",
        ("columns:", "unknown field(s) ['colour']"),
    ),
    ("no date column", BASE + "columns: {amount: 3}\n", ("columns.date is required",)),
    (
        "in and out without both columns",
        BASE + "sign: in_out\n" + COLUMNS,
        ("sign 'in_out' needs columns ['credit', 'debit']",),
    ),
    (
        "header without signature",
        "name: coop\nbank: Co-op\n" + COLUMNS,
        ("needs a signature",),
    ),
    (
        "no header and no shape",
        "name: coop\nbank: Co-op\nheader: false\ncolumns: {date: 1, amount: 3}\n",
        ("needs a shape",),
    ),
    (
        "bad pattern",
        BASE + COLUMNS + "preamble_patterns: ['(unclosed']\n",
        ("preamble_patterns: '(unclosed' is not a regular expression",),
    ),
    (
        "bad footer pattern",
        BASE + COLUMNS + "footer_patterns: ['(unclosed']\n",
        ("footer_patterns: '(unclosed' is not a regular expression",),
    ),
    ("long delimiter", BASE + COLUMNS + "delimiter: ';;'\n", ("delimiter:", "one character")),
    ("bad name", BASE.replace("coop", "My Bank", 1) + COLUMNS, ("name:", "pattern")),
    ("not a number", BASE + COLUMNS + "preamble_lines: lots\n", ("preamble_lines:", "integer")),
    ("too many lines", BASE + COLUMNS + "footer_lines: 5000\n", ("footer_lines:", "50")),
    ("bad sign", BASE + COLUMNS + "sign: backwards\n", ("sign:", "'signed'")),
    (
        "direction without its words",
        BASE + "columns: {date: Date, credit: In, debit: Out, direction: Way}\nsign: direction\n",
        ("needs credit_directions and debit_directions",),
    ),
]


@pytest.mark.parametrize(("kind", "text", "words"), PROFILES, ids=[p[0] for p in PROFILES])
def test_a_profile_with_a_mistake_names_the_file_and_the_key(
    tmp_path: Path, kind: str, text: str, words: tuple[str, ...]
) -> None:
    path = tmp_path / "coop.yaml"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(ProfileError) as caught:
        load_profile(path)

    message = str(caught.value)
    assert message.startswith(f"{path}:"), message
    for word in words:
        assert word in message, message
    good = tmp_path / "good.yaml"
    good.write_text(BASE + COLUMNS, encoding="utf-8")
    assert load_profile(good).name == "coop"


def test_a_missing_profile_file_or_an_unknown_name_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(ProfileError, match="nowhere.yaml: cannot be read"):
        find_profile(str(missing))
    with pytest.raises(ProfileError, match=r"no bank profile named 'coop'; known: .*barclays"):
        find_profile("coop", user_folder=tmp_path)


SETTINGS = [
    ("not yaml", "auto_apply_exact: [true\n", ("line 2", "not valid YAML")),
    ("not a mapping", "- true\n", ("a YAML mapping",)),
    ("unknown key", "auto_aply_exact: true\n", ("auto_aply_exact:", "Extra inputs")),
    ("not a boolean", "auto_apply_exact: perhaps\n", ("auto_apply_exact:", "boolean")),
    ("unknown rule", "classify: {own_nams: [X]}\n", ("classify.own_nams:",)),
    ("aliases not a list", "reference_aliases: {INV: 3}\n", ("reference_aliases.INV:", "list")),
]


@pytest.mark.parametrize(("kind", "text", "words"), SETTINGS, ids=[s[0] for s in SETTINGS])
def test_bank_settings_with_a_mistake_name_the_file_and_the_key(
    tmp_path: Path, kind: str, text: str, words: tuple[str, ...]
) -> None:
    path = tmp_path / "acme.yaml"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(BankSettingsError) as caught:
        read_settings(path)

    message = str(caught.value)
    assert message.startswith(f"{path}:"), message
    for word in words:
        assert word in message, message

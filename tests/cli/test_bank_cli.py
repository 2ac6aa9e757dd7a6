"""``billops bank ...`` and ``billops run import-bank-payments`` in process (typer's runner),
against the session's sandbox and Prefect API: the preview is read-only, a dry run sends nothing,
recording needs a person's approval unless the biller allows exact full matches unattended, a
refused file exits 3 (``--format jsonl`` prints the error as one object and exits 1)."""

from __future__ import annotations

import csv
import io
import json
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from billops.cli import app
from tests.support.bank_statements import BankBiller, make_bank_biller
from tests.support.sandbox_admin import SandboxAdmin

runner = CliRunner()
HEADER = "Date,Counter Party,Reference,Type,Amount (GBP),Balance (GBP),Spending Category,Notes\n"


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def biller(prefect: None, admin: SandboxAdmin) -> BankBiller:
    return make_bank_biller(admin, seed=31, invoices=3, requests=0, customers=2)


def _due(doc: dict[str, object]) -> Decimal:
    return Decimal(str(doc["dueAmount"]))


def _statement(path: Path, biller: BankBiller) -> Path:
    """A Starling statement: the first invoice paid in full, the second in part, a payout, a
    coffee, and a credit with no reference."""
    first, second, _third = (biller.documents[f"INV-{n}"] for n in (1, 2, 3))
    day = (date.today() - timedelta(days=1)).strftime("%d/%m/%Y")
    customer = str(first["customer"]["name"]).upper()[:18]
    other = str(second["customer"]["name"]).upper()[:18]
    part = (_due(second) / 2).quantize(Decimal("0.01"))
    typed = f"inv {str(second['invoiceNo']).split('-')[1]}"  # as people type it
    rows = [
        f"{day},{customer},{first['invoiceNo']},FASTER PAYMENT,{_due(first)},1000.00,INCOME,",
        f"{day},{other},{typed},FASTER PAYMENT,{part},1000.00,INCOME,",
        f"{day},ADFIN,ADFIN-PO-7QK2ZD,BACS,310.55,1000.00,INCOME,",
        f"{day},COSTA,CARD 1234,CHIP AND PIN,-3.20,1000.00,GENERAL,",
        f"{day},SOMEONE ELSE,,FASTER PAYMENT,12.00,1000.00,INCOME,",
    ]
    path.write_text(HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def _paid(biller: BankBiller) -> dict[str, Decimal]:
    return biller.paid()


def test_the_preview_is_read_only_and_prints_one_object_per_line(
    biller: BankBiller, ledger_home: Path, tmp_path: Path
) -> None:
    path = _statement(tmp_path / "june.csv", biller)
    before = _paid(biller)

    code, out = _invoke("bank", "preview", str(path), "--biller", biller.block, "--format", "jsonl")

    assert code == 0, out
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [r["line"] for r in records] == [2, 3, 4, 5, 6]
    assert [r["outcome"] for r in records] == ["full", "partial", "n/a", "n/a", "unmatched"]
    assert records[0]["matches"][0]["number"] == "INV-1"
    assert records[0]["matches"][0]["kind"] == "invoice"
    assert records[2]["class"] == "provider_payout" and records[3]["class"] == "debit"
    assert records[1]["references"] == ["INV-2"] and records[1]["amount"] == str(
        (_due(biller.documents["INV-2"]) / 2).quantize(Decimal("0.01"))
    )
    assert _paid(biller) == before
    assert not (tmp_path / "june.report.csv").exists()


def test_a_refused_file_is_one_error_object_in_jsonl(ledger_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + "31/02/2026,X,R,T,1.00,1.00,,\n", encoding="utf-8")

    code, out = _invoke("bank", "preview", str(path), "--format", "jsonl")

    assert code == 1
    (error,) = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert error["line"] == 2 and "31/02/2026" in error["error"]


def test_dry_run_then_approval_then_recording(
    biller: BankBiller, ledger_home: Path, tmp_path: Path
) -> None:
    path = _statement(tmp_path / "june.csv", biller)
    before = _paid(biller)
    command = ("run", "import-bank-payments", str(path), "--biller", biller.block)

    code, out = _invoke(*command)
    assert code == 0, out
    assert "Dry run" in out and (tmp_path / "june.report.csv").exists()
    assert _paid(biller) == before

    code, out = _invoke(*command, "--apply")
    assert code == 1 and "needs an approval" in out, out
    assert _paid(biller) == before

    code, out = _invoke(*command, "--apply", "--approve-as", "Dana Finance", "--reason", "June")
    assert code == 0, out
    assert "Completed" in out and "june.review.csv" in out
    paid = _paid(biller)
    assert paid["INV-1"] - before["INV-1"] == _due(biller.documents["INV-1"])
    assert paid["INV-2"] - before["INV-2"] == (_due(biller.documents["INV-2"]) / 2).quantize(
        Decimal("0.01")
    )
    assert paid["INV-3"] == before["INV-3"]

    code, out = _invoke(*command, "--apply", "--approve-as", "Dana Finance", "--reason", "again")
    assert code == 0 and "Nothing to record" in out, out
    assert _paid(biller) == paid

    # The preview plans as a run would: what the ledger holds as recorded is a duplicate.
    code, out = _invoke("bank", "preview", str(path), "--biller", biller.block, "--format", "jsonl")
    assert code == 0, out
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [r["outcome"] for r in records] == ["duplicate", "duplicate", "n/a", "n/a", "unmatched"]


def test_exact_only_runs_alone_where_the_biller_allows_it(
    biller: BankBiller, ledger_home: Path, tmp_path: Path
) -> None:
    path = _statement(tmp_path / "june.csv", biller)
    before = _paid(biller)
    command = ("run", "import-bank-payments", str(path), "--biller", biller.block, "--apply")

    code, out = _invoke(*command, "--exact-only")
    assert code == 1 and "needs an approval" in out, out

    settings = ledger_home / "bank-settings" / f"{biller.block}.yaml"
    settings.parent.mkdir()
    settings.write_text("auto_apply_exact: true\n", encoding="utf-8")
    code, out = _invoke(*command, "--exact-only")

    assert code == 0, out
    paid = _paid(biller)
    assert paid["INV-1"] - before["INV-1"] == _due(biller.documents["INV-1"])
    assert paid["INV-2"] == before["INV-2"]  # a part payment waits for a person


def test_a_settings_file_with_a_mistake_names_the_file_and_the_key(
    biller: BankBiller, ledger_home: Path, tmp_path: Path
) -> None:
    path = _statement(tmp_path / "june.csv", biller)
    settings = ledger_home / "bank-settings" / f"{biller.block}.yaml"
    settings.parent.mkdir()
    settings.write_text("auto_apply_exact: true\nclassify: {own_nams: [X]}\n", encoding="utf-8")

    code, out = _invoke("run", "import-bank-payments", str(path), "--biller", biller.block)

    assert code == 1
    assert str(settings) in out and "classify.own_nams" in out


def test_a_refused_file_records_nothing_and_the_next_file_is_fine(
    biller: BankBiller, ledger_home: Path, tmp_path: Path
) -> None:
    good = _statement(tmp_path / "june.csv", biller)
    lines = good.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "june-bad.csv"  # one impossible date among good lines
    bad.write_text("\n".join([*lines[:3], "31/02/2026,X,R,T,1.00,1.00,,", *lines[3:]]) + "\n")
    before = _paid(biller)
    approved = ("--biller", biller.block, "--apply", "--approve-as", "Dana", "--reason", "June")

    code, out = _invoke("run", "import-bank-payments", str(bad), *approved)

    assert code == 3, out
    flat = " ".join(out.split())
    assert "Rejected" in flat and "line 4" in flat and "31/02/2026" in flat, out
    assert "nothing was recorded" in flat
    assert _paid(biller) == before
    unknown = tmp_path / "coop.csv"  # a layout no profile knows: refused, with one to edit
    unknown.write_text(UNKNOWN, encoding="utf-8")
    code, out = _invoke("run", "import-bank-payments", str(unknown), *approved)
    assert code == 3, out
    assert "no bank profile matches" in out and (tmp_path / "coop.profile.yaml").is_file()
    assert _paid(biller) == before

    code, out = _invoke("run", "import-bank-payments", str(good), *approved)
    assert code == 0 and "Completed" in out, out
    assert _paid(biller)["INV-1"] - before["INV-1"] == _due(biller.documents["INV-1"])


UNKNOWN = (
    "Posted,Details,Paid in,Paid out,Running\n"
    "02/11/2026,ACME INV-0042,1250.00,,1250.00\n03/11/2026,SHELL,,45.60,1204.40\n"
)


def test_an_unknown_layout_leaves_a_profile_to_edit_that_then_reads_it(
    ledger_home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "coop.csv"
    path.write_text(UNKNOWN, encoding="utf-8")
    starter = tmp_path / "coop.profile.yaml"

    code, out = _invoke("bank", "detect", str(path))

    assert code == 1
    assert "no bank profile matches" in out and "closest" in out and str(starter) in out
    edited = ("--profile", str(starter), "--format", "jsonl")  # as written: usable already
    code, out = _invoke("bank", "preview", str(path), *edited)
    assert code == 0, out
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [(r["line"], r["amount"]) for r in records] == [(2, "1250.00"), (3, "-45.60")]


def test_detect_names_the_layout_and_why(ledger_home: Path) -> None:
    data = Path(__file__).resolve().parents[1] / "data" / "bank"

    code, out = _invoke("bank", "detect", str(data / "hsbc_noheader.csv"))

    assert code == 0, out
    flat = " ".join(out.split())
    assert ": hsbc (HSBC" in flat and "encoding" in flat


def test_profiles_lists_the_shipped_and_the_users_and_names_a_broken_one(
    ledger_home: Path,
) -> None:
    folder = ledger_home / "bank-profiles"
    folder.mkdir()
    (folder / "coop.yaml").write_text(
        "name: coop\nbank: Co-operative Bank\nsignature: [Posted, Details]\n"
        "columns: {date: Posted, text: Details, amount: 3}\n",
        encoding="utf-8",
    )

    code, out = _invoke("bank", "profiles")

    assert code == 0, out
    names = [line.split()[0] for line in out.splitlines() if line and not line[0].isspace()]
    assert {"barclays", "monzo", "santander", "xero_template", "coop"} <= set(names)
    assert "Co-operative Bank [user" in out

    (folder / "broken.yaml").write_text("name: broken\nbank: X\ncolumns: [1, 2]\n")
    code, out = _invoke("bank", "profiles")
    assert code == 1
    assert str(folder / "broken.yaml") in " ".join(out.split())


def test_the_csv_preview_neutralises_formulas(ledger_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "june.csv"
    day = (date.today() - timedelta(days=1)).strftime("%d/%m/%Y")
    path.write_text(
        HEADER + f'{day},"=HYPERLINK(""http://x"")",@SUM(A1),FASTER PAYMENT,-12.00,1.00,,\n',
        encoding="utf-8",
    )

    code, out = _invoke("bank", "preview", str(path), "--format", "csv")

    assert code == 0, out
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert row["payer"].startswith("'=HYPERLINK") and row["reference"] == "'@SUM(A1)"
    assert row["amount"] == "-12.00"  # a plain negative number is kept


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("bank", "preview", "{file}", "--format", "xml"), 2, "--format is table, jsonl or csv"),
        (("bank", "preview", "{file}", "--on-bad-lines", "maybe"), 2, "reject_file or skip"),
        (("bank", "preview", "{file}", "--profile", "coop"), 2, "no bank profile named 'coop'"),
        (("bank", "preview", "{missing}"), 1, "nowhere.csv: cannot be read"),
        (("bank", "detect", "{missing}"), 1, "nowhere.csv: cannot be read"),
        (
            ("run", "import-bank-payments", "{file}", "--biller", "b", "--on-bad-lines", "maybe"),
            2,
            "must be reject_file or skip",
        ),
        (
            ("run", "import-bank-payments", "{file}", "--biller", "b", "--approve-as", "Dana"),
            2,
            "--reason",
        ),
    ],
    ids=["format", "on-bad-lines", "profile", "missing", "detect-missing", "run-mode", "reason"],
)
def test_bad_command_line_input_is_named(
    ledger_home: Path, tmp_path: Path, args: tuple[str, ...], code: int, words: str
) -> None:
    file = tmp_path / "june.csv"
    file.write_text(HEADER + "02/11/2026,A,R,T,1.00,1.00,,\n", encoding="utf-8")
    filled = [a.format(file=file, missing=tmp_path / "nowhere.csv") for a in args]

    exit_code, out = _invoke(*filled)

    assert exit_code == code, out
    assert words in " ".join(out.split()), out

"""Each result state from the sandbox's own downloads, edited the way real files go wrong: a
payout's credit removed from the bank file, an amount changed by a penny, two payouts on one
credit, a credit with no payout, a reference the bank dropped, an item the service never paid.
Each test reconciles on a fresh ledger; a broken report is refused and nothing of it is kept.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

from tasks.common.working_days import working_days_between
from tasks.payouts import (
    IN_TRANSIT,
    ITEM_MISMATCH,
    MATCHED,
    MISSING,
    SUGGESTED,
    UNEXPECTED,
    WITH_DIFFERENCE,
)
from tests.payouts.scenario import Month, Rows, yesterday


def run(
    month: Month, report: Path, bank: Path | None
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    state, result = month.scenario.run(report, bank)
    assert state.is_completed(), state.message
    return result, month.scenario.results("payout"), month.scenario.results("credit")


def by_reference(month: Month, results: dict[str, Any]) -> dict[str, str]:
    return {p["Bank reference"]: results[p["Payout ID"]].state for p in month.payouts()}


def test_the_months_files_as_downloaded_are_matched(month: Month, fresh_ledger: Path) -> None:
    result, payouts, credits = run(month, month.report, month.bank)

    states = set(by_reference(month, payouts).values())
    assert states <= {MATCHED, IN_TRANSIT} and MATCHED in states
    assert result.state == "Reconciled" and result.exit_code == 0
    assert {c.state for c in credits.values()} == {MATCHED}
    journal = month.rows(Path(result.files["journal"]))[1]
    debits = sum(float(r["debit"] or 0) for r in journal)
    assert journal and abs(debits - sum(float(r["credit"] or 0) for r in journal)) < 0.001
    assert Path(result.files["picture"]).read_bytes().startswith(b"\x89PNG")
    assert month.rows(Path(result.files["rollup"]))[1][-1]["period"] == "month"


def test_a_payout_removed_from_the_bank_file(month: Month, fresh_ledger: Path) -> None:
    first, last = month.payouts()[0], month.payouts()[-1]
    gone = {first["Bank reference"], last["Bank reference"]}
    bank = month.edited(
        month.bank, "no-credit.csv", lambda rows: [r for r in rows if r["Reference"] not in gone]
    )

    result, payouts, _ = run(month, month.report, bank)

    states = by_reference(month, payouts)
    assert states[first["Bank reference"]] == MISSING
    statement_end = yesterday(month.scenario.today())
    age = working_days_between(date.fromisoformat(last["Arrival date"]), statement_end)
    assert states[last["Bank reference"]] == (IN_TRANSIT if age <= 3 else MISSING)
    assert result.state == "Exceptions found" and result.exit_code == 3
    exceptions = month.rows(Path(result.files["exceptions"]))[1]
    assert any(
        r["state"] == MISSING and r["reference"] == first["Bank reference"] for r in exceptions
    )


def test_an_amount_changed_by_a_penny(month: Month, fresh_ledger: Path) -> None:
    target = month.payouts()[1]["Bank reference"]

    def penny_less(rows: Rows) -> Rows:
        for row in rows:
            if row["Reference"] == target:
                row["Amount"] = f"{float(row['Amount']) - 0.01:.2f}"
        return rows

    bank = month.edited(month.bank, "penny.csv", penny_less)
    result, payouts, credits = run(month, month.report, bank)

    payout_id = month.payouts()[1]["Payout ID"]
    assert payouts[payout_id].state == WITH_DIFFERENCE
    assert payouts[payout_id].difference_pennies == -1
    assert "£0.01 less" in " ".join(payouts[payout_id].reasons)
    assert result.state == "Exceptions found"


def test_an_item_changed_by_a_penny(month: Month, fresh_ledger: Path) -> None:
    """The items no longer add up to the payout, nor agree with the service."""
    payout_id = month.payouts()[1]["Payout ID"]
    report = month.edited(
        month.report, "item-penny.csv", lambda rows: _item_plus_penny(rows, payout_id)
    )
    _, payouts, _ = run(month, report, month.bank)
    assert payouts[payout_id].state == ITEM_MISMATCH
    reasons = " ".join(payouts[payout_id].reasons)
    assert "(difference -£0.01)" in reasons and "shows" in reasons


def _item_plus_penny(rows: Rows, payout_id: str) -> Rows:
    for row in rows:
        if row["Payout ID"] == payout_id and row["Item type"] == "PAYMENT":
            row["Item amount"] = f"{float(row['Item amount']) + 0.01:.2f}"
            break
    return rows


def _combined(month: Month, name: str, reference: str | None) -> tuple[Path, str, str]:
    """The bank file with the first two payouts paid as one credit (naming both, or
    ``reference``)."""
    a, b = month.payouts()[0], month.payouts()[1]

    def combined(rows: Rows) -> Rows:
        kept = [r for r in rows if r["Reference"] not in (a["Bank reference"], b["Bank reference"])]
        total = float(a["Payout amount"]) + float(b["Payout amount"])
        line = dict(next(r for r in rows if r["Reference"] == b["Bank reference"]))
        text = reference or f"{a['Bank reference']} {b['Bank reference']}"
        line.update(Reference=text, Amount=f"{total:.2f}")
        return [*kept, line]

    return month.edited(month.bank, name, combined), a["Payout ID"], b["Payout ID"]


def test_two_payouts_on_one_credit(month: Month, fresh_ledger: Path) -> None:
    bank, a, b = _combined(month, "both.csv", None)

    result, payouts, credits = run(month, month.report, bank)

    assert payouts[a].state == payouts[b].state == MATCHED
    assert "2 payouts on one credit" in " ".join(payouts[a].reasons)
    assert result.state == "Reconciled"


def test_two_payouts_on_a_credit_naming_neither_are_suggested(
    month: Month, fresh_ledger: Path
) -> None:
    bank, a, b = _combined(month, "unnamed.csv", "ADFIN PAYOUTS")

    result, payouts, _ = run(month, month.report, bank)

    assert payouts[a].state == payouts[b].state == SUGGESTED
    assert result.state == "Exceptions found"


def test_a_credit_with_no_payout_and_a_reference_the_bank_dropped(
    month: Month, fresh_ledger: Path
) -> None:
    target = month.payouts()[0]

    def changed(rows: Rows) -> Rows:
        extra = dict(next(r for r in rows if r["Reference"].startswith("ADFIN-PO-")))
        extra.update(Reference="ADFIN-PO-ZZZZZZ", Amount="12.34")
        for row in rows:
            if row["Reference"] == target["Bank reference"]:
                row["Reference"] = "PAYOUT"
        return [*rows, extra]

    result, payouts, credits = run(
        month, month.report, month.edited(month.bank, "extra.csv", changed)
    )

    assert payouts[target["Payout ID"]].state == SUGGESTED
    assert sorted(c.state for c in credits.values()).count(UNEXPECTED) == 1
    exceptions = month.rows(Path(result.files["exceptions"]))[1]
    assert {r["state"] for r in exceptions} >= {UNEXPECTED, SUGGESTED}


def test_an_item_the_service_never_paid(month: Month, fresh_ledger: Path) -> None:
    payout_id = month.payouts()[0]["Payout ID"]

    def renamed(rows: Rows) -> Rows:
        for row in rows:
            if row["Payout ID"] == payout_id:
                row["Payment request number"] = "PR-99999"
                break
        return rows

    report = month.edited(month.report, "unknown-item.csv", renamed)
    result, payouts, _ = run(month, report, month.bank)

    assert payouts[payout_id].state == ITEM_MISMATCH
    exceptions = month.rows(Path(result.files["exceptions"]))[1]
    assert any("PR-99999 is not found at the service" in r["reason"] for r in exceptions)


def test_a_broken_report_is_refused_and_nothing_is_kept(month: Month, fresh_ledger: Path) -> None:
    def broken(rows: Rows) -> Rows:
        rows[-1]["Arrival date"] = "31/02/2027"
        return rows

    report = month.edited(month.report, "broken.csv", broken)
    state, result = month.scenario.run(report, month.bank)

    assert state.name == "Rejected" and result.exit_code == 1
    assert "column 'Arrival date'" in state.message
    assert month.scenario.ledger_counts()["ledger_payouts"] == 0


def test_a_broken_bank_statement_is_refused_and_neither_file_is_kept(
    month: Month, fresh_ledger: Path
) -> None:
    def broken(rows: Rows) -> Rows:
        rows[-1]["Date"] = "2026-02-30"
        return rows

    bank = month.edited(month.bank, "broken-bank.csv", broken)
    state, result = month.scenario.run(month.report, bank)

    assert state.name == "Rejected" and result.exit_code == 1, state.message
    assert "broken-bank.csv: line" in state.message and "nothing was kept" in state.message
    assert set(month.scenario.ledger_counts().values()) == {0}


def test_the_bank_imports_payout_credits_are_the_bank_side(
    month: Month, fresh_ledger: Path
) -> None:
    """A statement previewed by the bank import (as the inbox does) leaves its payout credits in
    the ledger: a reconciliation given only the payout report matches them."""
    from flows.bank_payments import import_bank_payments

    bank_state = import_bank_payments(
        file=month.bank,
        biller=month.scenario.base.block,
        dry_run=True,
        as_of=month.scenario.today(),
        return_state=True,
    )
    assert bank_state.is_completed(), bank_state.message

    result, payouts, credits = run(month, month.report, None)

    assert result.state == "Reconciled"
    assert {c.state for c in credits.values()} == {MATCHED}
    assert MATCHED in {p.state for p in payouts.values()}


def test_the_nightly_run_takes_reports_waiting_in_the_inbox(
    month: Month, fresh_ledger: Path
) -> None:
    """The bank statement and the payout report dropped in the biller's inbox folder are taken
    by the nightly run (the statement first), reconciled and put away with their reports; the
    next night, with nothing waiting, the ledger's payouts are reconciled again."""
    import os
    import shutil

    from flows.nightly import nightly
    from flows.payouts_inbox import reconcile_waiting_payout_reports

    block = month.scenario.base.block
    inbox = fresh_ledger / "inbox" / block
    for kind, source in (("bank", month.bank), ("payouts", month.report)):
        (inbox / kind).mkdir(parents=True)
        dropped = inbox / kind / source.name
        shutil.copy(source, dropped)
        os.utime(dropped, (0, 0))  # long finished: the inbox takes complete files only

    first: Any = nightly(billers=[block])[0]  # type: ignore[index]
    # The next night's payout step (the nightly runs it alone as it did above).
    second = reconcile_waiting_payout_reports(
        biller=block, root=fresh_ledger / "inbox", return_state=True
    )

    assert first.ok and first.payouts == f"{month.report.name}: reconciled", first
    processed = list((inbox / "processed").rglob(f"{month.report.stem}.reconciliation.csv"))
    assert len(processed) == 1
    assert second.is_completed() and second.result() == [("(the ledger)", "reconciled")]
    assert {r.state for r in month.scenario.results("credit").values()} == {MATCHED}


# --- the command line (in process, against the session's Prefect API) ------------------------


def invoke(*args: str) -> tuple[int, str]:
    from typer.testing import CliRunner

    from billops.cli import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_the_command_line_reconciled_is_exit_0(month: Month, fresh_ledger: Path) -> None:
    block = month.scenario.base.block
    common = ("run", "reconcile-payouts", "--biller", block)

    code, out = invoke(*common, "--payouts", str(month.report), "--bank", str(month.bank))

    assert code == 0, out
    text = " ".join(out.split())
    assert "Reconciled" in text and "in transit £0.00 + collected £" in text
    assert "reconciliation.png" in out.replace("\n", "")


def test_the_command_line_exceptions_are_exit_3_and_stay_reported(
    month: Month, fresh_ledger: Path
) -> None:
    block = month.scenario.base.block
    common = ("run", "reconcile-payouts", "--biller", block)
    first = month.payouts()[0]["Bank reference"]
    bank = month.edited(
        month.bank, "cli-gone.csv", lambda rows: [r for r in rows if r["Reference"] != first]
    )

    for files in (("--payouts", str(month.report), "--bank", str(bank)), ()):
        code, out = invoke(*common, *files, "--format", "jsonl")
        assert code == 3, out
        *rows, summary = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert summary["summary"]["state"] == "Exceptions found"
        assert summary["summary"]["exit_code"] == 3
        assert {r["reference"]: r["state"] for r in rows}[first] == MISSING


def test_the_command_line_failures_are_exit_1_and_usage_errors_2(
    month: Month, fresh_ledger: Path
) -> None:
    common = ("run", "reconcile-payouts", "--biller", month.scenario.base.block)
    broken = month.edited(
        month.report, "cli-broken.csv", lambda rows: [{**rows[0], "Item amount": "x"}]
    )

    code, out = invoke(*common, "--payouts", str(broken))
    assert code == 1 and "column 'Item amount'" in out.replace("\n", "")
    assert invoke(*common, "--from", "01/03/2027")[0] == 2
    assert invoke(*common, "--from", "2027-03-02", "--to", "2027-03-01")[0] == 2
    code, out = invoke("run", "reconcile-payouts", "--biller", "no-such-block")
    assert code == 1 and "billops auth login --block no-such-block" in out.replace("\n", "")

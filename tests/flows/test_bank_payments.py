"""Importing a bank statement end to end against the sandbox: a simulated month in each of the
sandbox's bank layouts records exactly the payments the statement holds, by the sandbox's own
truth (tests/support/bank_statements.py); payouts settle nothing; the same file again, and a file
overlapping an earlier one, record nothing twice; a crash at each crash point of the write-once
protocol, or a service that fails and drops answers, still ends with each payment recorded once."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from billing_api import TransportError
from flows.bank_payments import import_bank_payments
from tasks.common.approval import approved_from_cli
from tasks.common.crash_points import CRASH_ENV, SimulatedCrash
from tests.support.bank_statements import (
    BankBiller,
    Truth,
    expected_payments,
    make_bank_biller,
    recording_truth,
    statement,
)
from tests.support.faults import clear_faults, fault_counts, plan_faults
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox

LAYOUTS = ("generic", "barclays", "hsbc", "lloyds", "natwest", "starling", "monzo")
# The default suite imports a month in three layouts (no header row; several accounts; the bank's
# transaction ids); the overlap, fault and crash tests below read Starling, Lloyds and Barclays.
# `make soak` runs every layout.
EVERY_DAY = ("hsbc", "natwest", "monzo")
LAYOUT_PARAMS = [
    pytest.param(name, marks=() if name in EVERY_DAY else pytest.mark.slow) for name in LAYOUTS
]
CRASHES = ("after_intent", "after_send", "after_outcome")
# A crash test needs a few payments on each side of the crash, not a month of every style.
SIZES = {f"crash-{point}": {"invoices": 8, "requests": 2} for point in CRASHES}
OPEN = ("UNPAID", "OVERDUE", "SCHEDULED")
CLOCK_START = date.today() - timedelta(days=70)
DAYS = 45


@pytest.fixture(scope="module")
def bank_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxAdmin]:
    """A sandbox of its own (its clock moves): started 70 days ago, so a month of statement is
    in the past by billops' calendar too."""
    database = tmp_path_factory.mktemp("bank") / "sandbox.db"
    # The test's own token outlives the simulated weeks (billops refreshes its own as it must).
    with running_sandbox(
        f"sqlite:///{database}", clock_start=CLOCK_START, accessTokenTtl=400 * 86400
    ) as admin:
        yield admin


Test = TypeVar("Test", bound=Callable[..., None])


def month_biller(name: str) -> Callable[[Test], Test]:
    """Names the biller of :func:`month` a test uses (parametrised tests: their layout or crash
    point)."""

    def mark(test: Test) -> Test:
        setattr(test, "month_biller", name)  # noqa: B010 - an attribute a function lacks
        return test

    return mark


def _biller_of(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    if "layout" in params:
        return str(params["layout"])
    if "point" in params:
        return f"crash-{params['point']}"
    return getattr(getattr(item, "function", None), "month_biller", None)


@pytest.fixture(scope="module")
def month(
    bank_sandbox: SandboxAdmin, prefect: None, request: pytest.FixtureRequest
) -> dict[str, BankBiller]:
    """One biller for each selected test of this module that uses one (a soak test left out
    costs nothing), then 45 simulated days in which their customers pay. Each keeps the seed of
    its name, whichever tests run."""
    names = [*LAYOUTS, "overlap", "faults", *(f"crash-{point}" for point in CRASHES)]
    here = request.module
    wanted = {_biller_of(i) for i in request.session.items if getattr(i, "module", 0) is here}
    billers = {
        name: make_bank_biller(bank_sandbox, seed=seed, **SIZES.get(name, {}))
        for seed, name in enumerate(names)
        if name in wanted
    }
    bank_sandbox.advance_clock(days=DAYS)
    return billers


def _today(admin: SandboxAdmin) -> date:
    now = admin.http.get("/_sandbox/clock").json()["now"]
    return date.fromisoformat(now[:10])


def _open_due(biller: BankBiller) -> dict[str, Decimal]:
    due = {}
    for number, doc in biller.refresh().items():
        if doc["status"] in OPEN:
            due[number] = Decimal(str(doc.get("dueAmount") or doc["totalAmount"]))
    return due


def _export(
    admin: SandboxAdmin,
    biller: BankBiller,
    layout: str,
    path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    start: date = CLOCK_START,
    end: date | None = None,
) -> Truth:
    with recording_truth(monkeypatch) as truth:
        path.write_bytes(statement(admin, biller.biller_id, layout, start, end or _today(admin)))
    return truth


def _import(path: Path, biller: BankBiller, **options: Any) -> Any:
    with approved_from_cli("Test Operator", "bank import test"):
        return import_bank_payments(file=path, biller=biller.block, dry_run=False, **options)


STOPPED = "Stopped"


def _outcome(path: Path, biller: BankBiller) -> str:
    """The run's outcome; ``Stopped`` when the service dropped every try of an idempotent write
    (the client's retries spent: the run stops, and a rerun resumes it, as an operator would).
    At 70 % faults per request a write fails four times in a row about one time in four."""
    try:
        return str(_import(path, biller).outcome)
    except TransportError:
        return STOPPED


def _recorded_now(biller: BankBiller, before: dict[str, Decimal]) -> dict[str, Decimal]:
    return {n: v - before[n] for n, v in biller.paid().items() if v != before[n]}


def _task_runs(flow_run_id: str) -> list[str]:
    """The names of a flow run's task runs (without Prefect's ``-<n>`` suffix)."""
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[UUID(flow_run_id)]))
        )
    return [run.name.rsplit("-", 1)[0] for run in runs]


def _report(path: Path) -> list[dict[str, str]]:
    report = path.with_name(f"{path.stem}.report.csv")
    with report.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("layout", LAYOUT_PARAMS)
def test_a_month_in_each_layout_records_exactly_what_the_statement_pays(
    layout: str,
    month: dict[str, BankBiller],
    bank_sandbox: SandboxAdmin,
    ledger_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    biller = month[layout]
    before, open_due = biller.paid(), _open_due(biller)
    path = tmp_path / f"statement-{layout}.csv"
    truth = _export(bank_sandbox, biller, layout, path, monkeypatch)
    expected = expected_payments(truth.quotes, open_due, lines=truth.transfers())
    assert expected, "the simulated month holds transfers billops can match"

    result = _import(path, biller)

    assert result.outcome == "Completed", result.message
    assert _recorded_now(biller, before) == expected
    # Every paid document got at least one payment recorded (a statement's month can hold as few
    # as one or two: the count depends on the seeded simulation, never a fixed floor).
    assert len(result.recorded) >= len(expected)
    # Batch-sized tasks: one to read and plan, one per chunk of 200 payments, one for the reports
    # (never one per line or payment).
    assert sorted(_task_runs(result.run_id)) == [
        "bank-reports",
        "read-and-plan-statement",
        "record-bank-payments",
    ]
    rows = _report(path)
    payouts = [r for r in rows if r["class"] == "provider_payout"]
    assert len(payouts) == truth.payouts()
    assert all(r["matches"] == "" and r["recorded"] == "0.00" for r in payouts)
    after = biller.paid()

    again = _import(path, biller)  # the same file dropped again
    assert biller.paid() == after
    assert not [r for r in again.recorded if r.sent_now]


@month_biller("overlap")
def test_an_overlapping_file_records_only_the_lines_the_earlier_one_lacked(
    month: dict[str, BankBiller],
    bank_sandbox: SandboxAdmin,
    ledger_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    biller = month["overlap"]
    before, open_due = biller.paid(), _open_due(biller)
    end = _today(bank_sandbox)
    middle = CLOCK_START + (end - CLOCK_START) * 2 // 3
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    early = _export(bank_sandbox, biller, "starling", first, monkeypatch, end=middle)
    assert _import(first, biller).outcome == "Completed"
    assert _recorded_now(biller, before) == expected_payments(
        early.quotes, open_due, lines=early.transfers()
    )
    # The second file starts on the day of the last payment the first one recorded.
    recorded = [r["date"] for r in _report(first) if r["recorded"] not in ("", "0.00")]
    overlap_from = date.fromisoformat(max(recorded))
    everything = _export(bank_sandbox, biller, "starling", second, monkeypatch, start=overlap_from)

    _import(second, biller)

    lines = early.transfers() | everything.transfers()
    assert _recorded_now(biller, before) == expected_payments(
        everything.quotes, open_due, lines=lines
    )
    shared = [r for r in _report(second) if r["outcome"] == "duplicate"]
    assert shared and all(r["date"] <= middle.isoformat() for r in shared)


@pytest.mark.parametrize("point", CRASHES)
def test_a_crash_then_a_rerun_records_each_payment_once(
    point: str,
    month: dict[str, BankBiller],
    bank_sandbox: SandboxAdmin,
    ledger_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    biller = month[f"crash-{point}"]
    before, open_due = biller.paid(), _open_due(biller)
    path = tmp_path / "statement.csv"
    truth = _export(bank_sandbox, biller, "barclays", path, monkeypatch)
    expected = expected_payments(truth.quotes, open_due, lines=truth.transfers())
    # Without a payment to send the crash point is never reached ("DID NOT RAISE" below).
    assert expected, "the simulated month holds transfers billops can match"
    monkeypatch.setenv(CRASH_ENV, point)
    with pytest.raises(BaseException) as crashed:
        _import(path, biller)
    assert isinstance(crashed.value, SimulatedCrash) or point in str(crashed.value)
    assert CRASH_ENV not in __import__("os").environ  # the crash happened at that point

    result = _import(path, biller)

    assert result.outcome == "Completed", result.message
    assert _recorded_now(biller, before) == expected
    if point == "after_send":
        assert any(not r.sent_now and r.state == "confirmed" for r in result.recorded)


@month_biller("faults")
def test_failing_and_dropped_answers_still_record_each_payment_once(
    month: dict[str, BankBiller],
    bank_sandbox: SandboxAdmin,
    ledger_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    biller = month["faults"]
    before, open_due = biller.paid(), _open_due(biller)
    path = tmp_path / "statement.csv"
    truth = _export(bank_sandbox, biller, "lloyds", path, monkeypatch)
    rules = [
        {"pathPrefix": "/api/payments:import", "method": "POST", "errorRate": 0.3,
         "errorStatus": 503, "dropAfterCommit": 0.4},
        {"pathPrefix": "/api/payment_requests", "method": "PUT", "errorRate": 0.3,
         "errorStatus": 503, "dropAfterCommit": 0.4},
    ]  # fmt: skip
    plan_faults(bank_sandbox, *rules, seed=5)
    outcomes: list[str] = []
    again = ("Pending", STOPPED)
    try:
        while len(outcomes) < 6 and (not outcomes or outcomes[-1] in again):
            outcomes.append(_outcome(path, biller))  # a rerun settles what is in doubt
        injected = fault_counts(bank_sandbox)
    finally:
        clear_faults(bank_sandbox)
    settled = outcomes[-1] if outcomes[-1] not in again else _import(path, biller).outcome

    assert settled in ("Completed", "Nothing to record"), outcomes
    assert injected["error"] + injected["dropAfterCommit"] > 0, injected
    assert _recorded_now(biller, before) == expected_payments(
        truth.quotes, open_due, lines=truth.transfers()
    )


def test_a_payment_in_doubt_holds_back_the_next_one_to_the_same_invoice(
    bank_sandbox: SandboxAdmin,
    month: dict[str, BankBiller],
    ledger_home: Path,
    tmp_path: Path,
) -> None:
    biller = make_bank_biller(bank_sandbox, seed=99, invoices=1, requests=0, customers=1)
    invoice = biller.documents["INV-1"]
    due = Decimal(str(invoice["dueAmount"]))
    payer = str(invoice["customer"]["name"]).upper()[:18]
    day = (_today(bank_sandbox) - timedelta(days=1)).strftime("%d/%m/%Y")
    first, second = (due / 4).quantize(Decimal("0.01")), (due / 2).quantize(Decimal("0.01"))
    path = tmp_path / "two-parts.csv"
    path.write_text(
        "Date,Counter Party,Reference,Type,Amount (GBP),Balance (GBP),Spending Category,Notes\n"
        f"{day},{payer},INV-1,FASTER PAYMENT,{first},1.00,INCOME,\n"
        f"{day},{payer},INV-1,FASTER PAYMENT,{second},1.00,INCOME,\n",
        encoding="utf-8",
    )
    before = biller.paid()["INV-1"]
    # Every send answers 503: its outcome is unknown (a 5xx may come after the write).
    plan_faults(bank_sandbox, {"pathPrefix": "/api/payments:import", "errorRate": 1.0})
    try:
        held = _import(path, biller)
    finally:
        clear_faults(bank_sandbox)

    assert held.outcome == "Pending", held.message
    assert [r.state for r in held.recorded] == ["unknown", "waiting"]
    assert biller.paid()["INV-1"] == before
    # Asking the service fails too: the run goes on, the payment stays in doubt, nothing sent.
    asking = f"/api/invoices/{invoice['id']}"  # the look-up, not the list of what is open
    plan_faults(bank_sandbox, {"pathPrefix": asking, "method": "GET", "errorRate": 1.0})
    try:
        unasked = _import(path, biller)
    finally:
        clear_faults(bank_sandbox)
    assert unasked.outcome == "Pending", unasked.message
    assert [r.state for r in unasked.recorded] == ["unknown", "waiting"]
    assert "could not be asked" in unasked.recorded[0].note

    settled = _import(path, biller)  # asks the service first, then sends each part once

    assert settled.outcome == "Completed", settled.message
    assert biller.paid()["INV-1"] - before == first + second

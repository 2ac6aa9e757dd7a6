"""Schemathesis hooks for ``scripts/fuzz.py``, loaded into the schemathesis process through
``SCHEMATHESIS_HOOKS``. They act on the stateful phase only; the other phases fuzz unsteered.

* **Recording**: every request of the stateful phase (which link led to it, whether the link's
  values were used, what the sandbox answered) is appended as a JSON line to the file named by
  ``BILLOPS_FUZZ_STEPS``, so ``scripts/fuzz.py`` can say which links and operations the run really
  reached with a usable id.
* **Steering** (``scripts/fuzz_steering.py``): a stateful sequence only goes on when its creates
  succeed, and some rules of the service cannot be said in JSON Schema (a due date not before the
  issue date, a known time zone, an invoice total in range, ids that must name existing records).
  Positive-mode bodies of the stateful phase are repaired to keep those rules; negative-mode
  bodies are left as generated.
* **The payer**: signing a mandate and saving a card happen on the service's hosted pages, never
  through the API. After a stateful step invites the payer (a mandate created, a card requested),
  the payer's part is played through the sandbox's admin API, so the operations that need a
  signed mandate or a saved card can be reached too.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import schemathesis
from schemathesis.cli import EventHandler, handler
from schemathesis.core.transport import Response
from schemathesis.engine import events
from schemathesis.engine.recorder import ScenarioRecorder
from schemathesis.engine.run import PhaseName
from schemathesis.generation import GenerationMode
from schemathesis.generation.case import Case
from schemathesis.generation.meta import TestPhase

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_steering import QUERY_REPAIRS, REPAIRS  # noqa: E402

STEPS_FILE_VARIABLE = "BILLOPS_FUZZ_STEPS"
# The sandbox's documented test account whose mandates activate (its README, test accounts).
TEST_ACCOUNT = {"account_holder": "Jane Doe", "sort_code": "10-88-00", "account_number": "00012345"}
_MANDATES = itertools.count()


def _operation_id(case: Case) -> str | None:
    operation_id = case.operation.definition.raw.get("operationId")
    return operation_id if isinstance(operation_id, str) else None


def _in_stateful_phase(case: Case) -> bool:
    meta = case.meta
    return meta is not None and meta.phase.name is TestPhase.STATEFUL


@schemathesis.hook
def map_case(context: schemathesis.HookContext, case: Case) -> Case:
    """Positive stateful bodies (and list queries) repaired to keep the rules the schema cannot
    state."""
    meta = case.meta
    if (
        meta is None
        or meta.phase.name is not TestPhase.STATEFUL
        or meta.generation.mode is not GenerationMode.POSITIVE
    ):
        return case
    operation_id = _operation_id(case) or ""
    repair = REPAIRS.get(operation_id)
    if repair is not None and isinstance(case.body, dict):
        body = copy.deepcopy(case.body)
        repair(body)
        case.body = body
    repair_query = QUERY_REPAIRS.get(operation_id)
    if repair_query is not None:
        query = dict(case.query or {})
        repair_query(query)
        case.query = query
    return case


@schemathesis.hook
def after_call(context: schemathesis.HookContext, case: Case, response: Response) -> None:
    """The payer's part after a stateful step that invites it (see the module's docstring)."""
    if not _in_stateful_phase(case) or not 200 <= response.status_code < 300:
        return
    try:
        _play_the_payer(case, response)
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        print(f"fuzz_hooks: the payer's part after {case.operation.label} failed: {exc!r}")
        raise


def _play_the_payer(case: Case, response: Response) -> None:
    operation_id = _operation_id(case)
    if operation_id == "mandates.create":
        mandate = response.json()
        # Every other new mandate is signed, so unsigned ones stay in the sequences too.
        if mandate.get("status") == "CREATED" and mandate.get("url") and next(_MANDATES) % 2 == 0:
            form = {**TEST_ACCOUNT, "confirm": "yes"}
            signed = httpx.post(mandate["url"], data=form, timeout=30)
            # The page answers 200, or 303 to the mandate's redirectUrl when it has one.
            if signed.status_code not in (200, 303):
                raise ValueError(f"the signing page answered {signed.status_code}")
    elif operation_id == "cards_on_file.request":
        root = str(case.operation.base_url or "").removesuffix("/api")
        customer_id = response.json()["customerId"]
        # The sandbox has no card-saving page: its admin API saves the card the payer entered.
        saved = httpx.post(f"{root}/_sandbox/customers/{customer_id}/cards", json={}, timeout=30)
        saved.raise_for_status()


def _errors(body: bytes | None) -> list[list[str | None]]:
    """``[type, field, detail]`` of each element of an error answer's ``errors``: why a step
    was refused, for the report."""
    try:
        errors = json.loads(body or b"").get("errors")
        return [[e.get("type"), e.get("field"), str(e.get("detail"))[:160]] for e in errors]
    except (ValueError, AttributeError, TypeError):
        return []


def scenario_steps(recorder: ScenarioRecorder) -> list[dict[str, Any]]:
    """One record per request the scenario sent: operation, link, link used or not, answer."""
    steps = []
    for case_id, node in recorder.cases.items():
        interaction = recorder.interactions.get(case_id)
        response = interaction.response if interaction is not None else None
        meta = node.value.meta
        steps.append(
            {
                "operation": node.value.operation.label,
                "operationId": _operation_id(node.value),
                "link": node.transition.id if node.transition is not None else None,
                "applied": node.is_transition_applied,
                "mode": meta.generation.mode.value if meta is not None else None,
                "status": response.status_code if response is not None else None,
                "errors": _errors(response.content)
                if response and response.status_code >= 400
                else [],
            }
        )
    return steps


@handler()
class StatefulStepRecorder(EventHandler):  # type: ignore[type-arg]
    """Appends the stateful phase's steps to the steps file as each scenario finishes."""

    def __init__(self, *args: Any, **params: Any) -> None:
        self.path = os.environ.get(STEPS_FILE_VARIABLE)
        self.lock = threading.Lock()

    def handle_event(self, ctx: Any, event: events.EngineEvent) -> None:
        if self.path is None or not isinstance(event, events.ScenarioFinished):
            return
        if event.phase is not PhaseName.STATEFUL_TESTING:
            return
        lines = [json.dumps(step) + "\n" for step in scenario_steps(event.recorder)]
        with self.lock, open(self.path, "a", encoding="utf-8") as steps:
            steps.writelines(lines)

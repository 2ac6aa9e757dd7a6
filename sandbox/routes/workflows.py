"""``PUT /workflows``: create a workflow, or update the one its ``id`` names."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from sandbox.billing import workflows
from sandbox.core import state
from sandbox.core.bodies import JsonBody
from sandbox.core.deps import BillerId, SessionDep

router = APIRouter(tags=["workflows"])


@router.put("/workflows", operation_id="workflows.upsert", summary="Create (or update) a workflow")
def upsert(biller_id: BillerId, session: SessionDep, body: JsonBody) -> dict[str, Any]:
    """200 with the workflow; an ``id`` that names no workflow of the biller is 404."""
    workflow = workflows.upsert(session, biller_id, body, state.now(session))
    return workflows.public(workflow)

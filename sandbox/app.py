"""``create_app(settings)``: the sandbox as an ASGI app. No globals, so tests can run several."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from fastapi import APIRouter, FastAPI
from fastapi.responses import JSONResponse

from sandbox.bulk_import.worker import BulkImportWorker
from sandbox.config import SandboxSettings
from sandbox.core.contract import load_contract
from sandbox.core.db import init_schema, make_engine, make_session_factory
from sandbox.core.deps import SandboxContext
from sandbox.core.errors import install_error_handlers
from sandbox.core.middleware import RequestIdMiddleware
from sandbox.core.stats import CounterFlusher
from sandbox.faults import FaultMiddleware, FaultState, SandboxFastAPI
from sandbox.routes import (
    admin,
    admin_customers,
    admin_faults,
    admin_secrets,
    admin_webhooks,
    biller,
    bulk_import,
    catalogs,
    collection,
    consent,
    customer_extras,
    customers,
    invoices,
    mandates,
    oauth,
    pages,
    payment_requests,
    payments,
    schedules,
    webhooks,
    workflows,
)
from sandbox.routes import exports as export_routes
from sandbox.simulation.clock import pin_clock
from sandbox.webhooks.delivery import WebhookDeliveryWorker

API_PREFIX = "/api"
# The routers that answer the contract's operations (paths relative to API_PREFIX); each route's
# operation_id is the contract's operationId (tests/test_contract.py holds them to it).
# Order matters where paths overlap: a path parameter matches any segment ("/customers/{id}"
# would take "/customers/directdebitmandates"), so the routers with literal paths come first,
# and inside a router ":action" and literal routes are declared before "/{id}"; the collection
# router (":pause_collection" of invoices and payment requests) comes before both of theirs.
API_ROUTERS: tuple[APIRouter, ...] = (
    oauth.router,
    biller.router,
    mandates.router,
    customers.router,
    customer_extras.router,
    collection.router,
    invoices.router,
    bulk_import.router,
    payment_requests.router,
    schedules.recurring_invoices,
    schedules.recurring_payment_requests,
    payments.router,
    catalogs.router,
    workflows.router,
    webhooks.router,
)


def _api_router() -> APIRouter:
    api = APIRouter(prefix=API_PREFIX)
    for router in API_ROUTERS:
        api.include_router(router)

    @api.get("/openapi.json", include_in_schema=False)
    def contract() -> JSONResponse:
        """The contract (``billing_api/openapi.yaml``) as JSON."""
        return JSONResponse(load_contract())

    return api


def create_app(settings: SandboxSettings) -> FastAPI:
    engine = make_engine(settings.database_url)
    init_schema(engine)
    context = SandboxContext(settings=settings, sessions=make_session_factory(engine))
    if settings.clock_start is not None:
        pin_clock(context.sessions, settings.clock_start)
    # Bulk import jobs are processed by this background thread, never inside a request.
    bulk_worker = BulkImportWorker(context.sessions)
    # Webhook events are delivered by background threads too (sandbox.webhooks.delivery).
    webhook_worker = WebhookDeliveryWorker(context.sessions, settings.runtime)
    # Request counters are written to the database off the requests' transactions.
    counters = CounterFlusher(context.request_counts, context.sessions)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        bulk_worker.start()
        webhook_worker.start()
        counters.start()
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(bulk_worker.stop)
            await anyio.to_thread.run_sync(webhook_worker.stop)
            await anyio.to_thread.run_sync(counters.stop)
            engine.dispose()

    # FastAPI's generated schema is off: the contract document is the one the sandbox serves.
    # SandboxFastAPI: lets the fault middleware close a connection without an answer.
    app = SandboxFastAPI(
        title="billops sandbox",
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.sandbox = context
    install_error_handlers(app)
    app.include_router(_api_router())
    app.include_router(consent.router)
    app.include_router(pages.router)
    app.include_router(admin.router)
    app.include_router(admin_customers.router)
    app.include_router(admin_webhooks.router)
    app.include_router(admin_secrets.router)
    app.include_router(export_routes.router)
    app.state.faults = FaultState(settings.faults)
    app.include_router(admin_faults.router)
    # Inside RequestIdMiddleware (added after it), so injected answers carry X-Request-Id too.
    app.add_middleware(FaultMiddleware, faults=app.state.faults)
    app.add_middleware(RequestIdMiddleware, context=context)
    return app

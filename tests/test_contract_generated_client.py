"""A client generated from the contract by a tool nobody here wrote works against the sandbox.

``openapi-python-client`` (installed by ``make install`` into ``.venv-codegen``: its typer pin
conflicts with billops') generates a client from ``billing_api/openapi.yaml`` into a temporary
folder. The only warning allowed is the invoice PDF (``application/pdf`` is not modelled). The
scenario then drives that client over HTTP: customers paged, an invoice created, activated and
read back, a payment request paused and resumed (and both of the contract's pause/resume error
types), ``payments:import``, a bulk import polled to the end with its items, and webhooks with a
platform token. Every answer must parse into the generated models (an answer the contract does
not describe raises ``UnexpectedStatus``).
"""

from __future__ import annotations

import importlib
import io
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.sandbox_admin import BillerTokens, PlatformToken, SandboxAdmin

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "billing_api" / "openapi.yaml"
CODEGEN_BIN = ROOT / ".venv-codegen" / "bin"
PACKAGE = "adfin_client"
ALLOWED_WARNINGS = ["GET /invoices/{id}/file"]  # the PDF download: application/pdf is not modelled


@pytest.fixture(scope="module")
def generation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The generator's output text and the folder holding the generated package."""
    tool = CODEGEN_BIN / "openapi-python-client"
    if not tool.is_file():
        pytest.skip(f"{tool} is missing: `make install` installs openapi-python-client there")
    out = tmp_path_factory.mktemp("generated")
    env = {**os.environ, "PATH": f"{CODEGEN_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run(
        [str(tool), "generate", "--path", str(CONTRACT), "--meta", "none"]
        + ["--output-path", str(out / PACKAGE)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    sys.path.insert(0, str(out))
    try:
        yield output, out
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def test_the_generator_warns_only_about_the_pdf(generation: tuple[str, Path]) -> None:
    output, out = generation
    warned = re.findall(r"WARNING parsing (\S+ \S+) within", output)
    assert warned == ALLOWED_WARNINGS, output
    assert "Unable to process schema" not in output, output
    models = {path.stem for path in (out / PACKAGE / "models").glob("*.py")}
    assert {"invoice", "invoice_item", "invoice_list", "customer", "workflow"} <= models


class _Api:
    """``api.customers.customers_create`` style access to the generated operation modules."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def __getattr__(self, name: str) -> ModuleType:
        return importlib.import_module(f"{PACKAGE}.api.{self.tag}.{name}")


def _api(tag: str) -> _Api:
    return _Api(tag)


def _models() -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.models")


def _client(root: str, token: str) -> Any:
    client_module = importlib.import_module(f"{PACKAGE}.client")
    return client_module.AuthenticatedClient(
        base_url=f"{root}/api", token=token, raise_on_unexpected_status=True, timeout=None
    )


def _ok(response: Any, status: int) -> Any:
    assert response.status_code == status, response.content
    return response.parsed


def _error_type(response: Any, status: int) -> str:
    parsed = _ok(response, status)
    return str(parsed.errors[0].type_)


def test_a_generated_client_runs_the_scenario(
    generation: tuple[str, Path],
    admin: SandboxAdmin,
    biller_token: BillerTokens,
    platform_token: PlatformToken,
) -> None:
    m = _models()
    client = _client(admin.root, biller_token.access_token)
    run = uuid.uuid4().hex[:8]
    pay_by = date.today() + timedelta(days=30)

    # Customers, paged two at a time.
    customers = _api("customers")
    created = [
        _ok(
            customers.customers_create.sync_detailed(
                client=client, body=m.CustomerCreate(name=f"Gen {n}", external_id=f"gen-{run}-{n}")
            ),
            201,
        )
        for n in range(3)
    ]
    seen, page = [], 0
    while True:
        listing = _ok(customers.customers_list.sync_detailed(client=client, page=page, size=2), 200)
        seen += [customer.id for customer in listing.customers]
        if page >= listing.page.total_pages - 1:
            break
        page += 1
    assert sorted(seen) == sorted(customer.id for customer in created)
    assert listing.page.total_elements == 3 and page == 1

    # An invoice: created, activated, read back with its computed line.
    invoices = _api("invoices")
    line = m.InvoiceItemInput(description="Widget", quantity=3, unit_amount=19.99, tax_rate=20)
    body = m.InvoiceCreate(
        customer=m.CustomerIdRef(id=created[0].id),
        items=[line],
        invoice_no=f"GEN-{run}",
        due_date=pay_by,
    )
    invoice = _ok(invoices.invoices_create.sync_detailed(client=client, body=body), 201)
    activation = m.ActivationRequest(collection_method=m.ActivationCollectionMethod.NONE)
    activated = _ok(
        invoices.invoices_activate.sync_detailed(invoice.id, client=client, body=activation), 200
    )
    assert str(activated.status) == "UNPAID"
    again = _ok(invoices.invoices_retrieve.sync_detailed(invoice.id, client=client), 200)
    assert again.id == invoice.id and str(again.total_amount) == "71.96"
    assert float(again.items[0].tax_rate) == 20 and again.items[0].tax_amount == 11.99
    assert again.creation_time.endswith("Z")  # a Timestamp stays text (see its schema)

    # A payment request: paused and resumed, and the two errors of pause and resume.
    requests = _api("payment_requests")
    body = m.PaymentRequestCreate(
        customer=m.CustomerIdRef(id=created[1].id),
        description="Generated",
        total_amount=25.5,
        currency_code=m.CurrencyCode.GBP,
        pay_by_date=pay_by,
    )
    request = _ok(requests.payment_requests_create.sync_detailed(client=client, body=body), 201)
    request_id = uuid.UUID(request.id)
    on_demand = m.CollectionPause(collection_methods=[m.CollectionMethod.ON_DEMAND])
    pause = requests.payment_requests_pause_collection.sync_detailed
    resume = requests.payment_requests_resume_collection.sync_detailed
    assert pause(request_id, client=client, body=on_demand).status_code == 204
    again = _ok(requests.payment_requests_retrieve.sync_detailed(request.id, client=client), 200)
    states = {str(state.method): state for state in again.collection.methods}
    assert states["ON_DEMAND"].paused is True and str(states["ON_DEMAND"].override) == "PAUSED"
    on_demand_resume = m.CollectionResume(collection_methods=[m.CollectionMethod.ON_DEMAND])
    assert resume(request_id, client=client, body=on_demand_resume).status_code == 204
    auto_pause = m.CollectionPause(collection_methods=[m.CollectionMethod.AUTO_COLLECT])
    auto_resume = m.CollectionResume(collection_methods=[m.CollectionMethod.AUTO_COLLECT])
    refused = pause(request_id, client=client, body=auto_pause)
    assert _error_type(refused, 400) == "COLLECTION_METHOD_NOT_ELIGIBLE"
    refused = resume(request_id, client=client, body=auto_resume)
    assert _error_type(refused, 400) == "DIRECT_DEBIT_NOT_AVAILABLE"

    # A payment made outside the service, recorded against the invoice.
    payment = m.PaymentImportRequest(invoice_id=invoice.id, amount=10, reference=f"BACS {run}")
    imported = _ok(
        _api("payments").payments_import_payment.sync_detailed(client=client, body=payment), 200
    )
    assert [p.amount for p in imported.payments] == [10]

    # A bulk import, polled to the end, with its items.
    csv = (
        "externalId,customerExternalId,description,totalAmount,currencyCode,payByDate\n"
        f"gen-{run}-a,gen-{run}-2,First,12.50,GBP,{pay_by}\n"
        f"gen-{run}-b,gen-{run}-2,Second,7,GBP,{pay_by}\n"
    ).encode()
    types_module = importlib.import_module(f"{PACKAGE}.types")
    upload = m.PaymentRequestsBulkImportBody(
        input_file=types_module.File(io.BytesIO(csv), file_name="june.csv", mime_type="text/csv")
    )
    job = _ok(
        requests.payment_requests_bulk_import.sync_detailed(
            client=client,
            body=upload,
            collection_method=m.PaymentRequestsBulkImportCollectionMethod.NONE,
            delete_missing_payment_requests=False,
        ),
        202,
    )
    assert job.file_name == "june.csv"
    deadline = time.monotonic() + 30
    while str(job.status) not in ("COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED"):
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
        job = _ok(
            requests.payment_requests_retrieve_bulk_import.sync_detailed(job.job_id, client=client),
            200,
        )
    assert str(job.status) == "COMPLETED"
    items = _ok(
        requests.payment_requests_list_bulk_import_items.sync_detailed(job.job_id, client=client),
        200,
    )
    assert sorted((item.row_number, str(item.status)) for item in items.items) == [
        (1, "CREATED"),
        (2, "CREATED"),
    ]

    # Webhooks, with a platform token of the app.
    hooks = _api("webhooks")
    platform = _client(admin.root, platform_token.access_token)
    app_id = platform_token.app.client_id
    body = m.WebhookCreate(url="https://example.com/hook", events=[m.WebhookEventKind.INVOICE])
    hook = _ok(hooks.webhooks_create.sync_detailed(app_id, client=platform, body=body), 201)
    listed = _ok(hooks.webhooks_list.sync_detailed(app_id, client=platform), 200)
    assert [w.id for w in listed.webhooks_response] == [hook.id]
    assert _ok(hooks.webhooks_retrieve.sync_detailed(app_id, hook.id, client=platform), 200).enabled
    assert hooks.webhooks_delete.sync_detailed(app_id, hook.id, client=platform).status_code == 204

"""Billers and files for the import benchmark (a connected biller, customers, a finance file)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import httpx

CUSTOMERS = 20


@dataclass
class BenchBiller:
    """A biller with a bearer token (for the bare script) and a credential block (for billops)."""

    api: str
    headers: dict[str, str]
    block: str
    biller_id: str
    customers: list[tuple[str, str]]

    def parse(self, file: Path) -> list[object]:
        """The file's rows as billops validates them (the bare script uploads the same bytes)."""
        from tasks.payment_requests import CustomerDirectory, parse_payment_request_file

        parsed = parse_payment_request_file(
            file,
            customers=CustomerDirectory.from_records((i, None, n) for i, n in self.customers),
            today=date.today(),
            biller=self.biller_id,
        )
        if parsed.problems:
            raise SystemExit(f"benchmark file has problems: {parsed.problems[:3]}")
        return list(parsed.rows)


def connect_biller(root: str, label: str) -> BenchBiller:
    """App + biller via the sandbox admin API, a token, customers, and a credential block."""
    from blocks import BillerCredentials

    with httpx.Client(base_url=root, timeout=60) as admin:
        app = admin.post("/_sandbox/apps", json={"name": f"bench {label}"}).json()
        biller_id = admin.post("/_sandbox/billers", json={"name": f"Bench {label} Ltd"}).json()[
            "billerId"
        ]
        code = admin.post(
            f"/_sandbox/apps/{app['clientId']}/authorization_codes", json={"billerId": biller_id}
        ).json()["code"]
        tokens = admin.post(
            "/api/oauth2/token",
            auth=(app["clientId"], app["clientSecret"]),
            data={"grant_type": "authorization_code", "code": code},
        ).json()
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    customers = []
    with httpx.Client(base_url=f"{root}/api", headers=headers, timeout=60) as api:
        for n in range(CUSTOMERS):
            body = {"name": f"Bench {label} customer {n}", "people": [{"firstName": "Pat"}]}
            made = api.post("/customers", json=body)
            made.raise_for_status()
            customers.append((made.json()["id"], body["name"]))
    block = f"bench-{label}"
    BillerCredentials(
        environment="sandbox",
        base_url=f"{root}/api",
        client_id=app["clientId"],
        client_secret=app["clientSecret"],
        refresh_token=tokens["refresh_token"],
    ).save(block, overwrite=True)
    return BenchBiller(f"{root}/api", headers, block, biller_id, customers)


def local_customers(count: int = CUSTOMERS) -> list[tuple[str, str]]:
    """Customers ``(id, name)`` for a file checked without a service (the dry-run benchmark)."""
    return [(f"cus-{n:04d}", f"Bench customer {n}") for n in range(count)]


def write_finance_file(path: Path, biller: BenchBiller | list[tuple[str, str]], rows: int) -> Path:
    """A finance-shaped CSV: customer names, £ amounts, dd/mm/yyyy pay-by dates."""
    customers = biller if isinstance(biller, list) else biller.customers
    pay_by = (date.today() + timedelta(days=30)).strftime("%d/%m/%Y")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Customer", "Amount", "Description", "Reference", "Pay by"])
        for n in range(rows):
            name = customers[n % len(customers)][1]
            writer.writerow(
                [name, f"£{10 + n % 900}.{n % 100:02d}", f"Item {n}", f"B-{n:07d}", pay_by]
            )
    return path

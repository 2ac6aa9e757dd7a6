"""Demo data: ``POST /_sandbox/seed`` and ``billops sandbox serve --seed-demo``."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from collections import Counter

from tests.support.sandbox_admin import AppCredentials, SandboxAdmin

BILLOPS = os.path.join(os.path.dirname(sys.executable), "billops")


def _seed(admin: SandboxAdmin, **body) -> dict:
    response = admin.http.post("/_sandbox/seed", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _login(admin: SandboxAdmin, demo: dict, biller_id: str) -> dict[str, str]:
    app = AppCredentials(demo["clientId"], demo["clientSecret"], demo["redirectUri"])
    code = admin.authorization_code(app, biller_id)
    tokens = admin.token(app, grant_type="authorization_code", code=code).json()
    return {"Authorization": f"Bearer {tokens['access_token']}"}


def _statuses(admin: SandboxAdmin, headers: dict[str, str], path: str, key: str) -> Counter:
    page = admin.api.get(path, headers=headers, params={"size": 200}).json()
    return Counter(row["status"] for row in page[key])


def test_seed_gives_a_biller_something_in_every_state(admin: SandboxAdmin) -> None:
    demo = _seed(admin, billers=1, customers=8, seed=7)

    (biller,) = demo["billers"]
    headers = _login(admin, demo, biller["billerId"])
    customers = admin.api.get("/customers", headers=headers, params={"size": 200}).json()
    assert customers["page"]["totalElements"] == 8 == biller["customers"]
    invoices = _statuses(admin, headers, "/invoices", "invoices")
    assert {"DRAFT", "PAID", "VOID"} <= set(invoices)
    assert invoices["SCHEDULED"] + invoices["UNPAID"] == 8
    cards = admin.api.get(
        f"/customers/{customers['customers'][2]['id']}/cards_on_file", headers=headers
    ).json()
    assert len(cards["cardsOnFile"]) == 1  # the card payer kept its card
    requests = _statuses(admin, headers, "/payment_requests", "paymentRequests")
    assert {"DRAFT", "UNPAID", "PAID"} <= set(requests)
    mandates = _statuses(admin, headers, "/customers/directdebitmandates", "mandates")
    assert {"ACTIVE", "CREATED", "CANCELLED", "PENDING"} <= set(mandates)
    assert admin.api.get("/catalogs/tax_rates", headers=headers).json()["taxRates"]


def test_the_same_seed_gives_the_same_data(admin: SandboxAdmin) -> None:
    def shape(demo: dict) -> tuple:
        headers = _login(admin, demo, demo["billers"][0]["billerId"])
        names = [
            c["name"] for c in admin.api.get("/customers", headers=headers).json()["customers"]
        ]
        totals = [
            i["totalAmount"]
            for i in admin.api.get("/invoices", headers=headers, params={"size": 200}).json()[
                "invoices"
            ]
        ]
        return demo["billers"][0]["name"], names, totals

    assert shape(_seed(admin, billers=1, customers=2, seed=99)) == shape(
        _seed(admin, billers=1, customers=2, seed=99)
    )


def test_seed_checks_its_input(admin: SandboxAdmin) -> None:
    for body in ({"billers": 0}, {"customers": 1000}, {"colour": "blue"}):
        assert admin.http.post("/_sandbox/seed", json=body).status_code == 422, body


def test_serve_seed_demo_keeps_the_secret_out_of_the_terminal(tmp_path) -> None:
    home = tmp_path / "home"
    process = subprocess.Popen(
        [
            BILLOPS,
            "sandbox",
            "serve",
            "--port",
            "0",
            "--seed-demo",
            "--db",
            f"sqlite:///{tmp_path}/s.db",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "BILLOPS_HOME": str(home)},
    )
    try:
        ready = process.stdout.readline()
        demo_line = process.stdout.readline()
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    credentials = home / "sandbox-demo.json"
    demo = json.loads(credentials.read_text())
    assert ready.startswith("sandbox ready: ")
    assert demo_line.startswith(f"sandbox demo: app {demo['clientId']}, billers ")
    assert str(credentials) in demo_line
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert demo["clientSecret"] not in ready + demo_line + out + err
    assert process.returncode == 0, err


def test_seed_can_pin_the_clock_of_a_new_sandbox_only(tmp_path) -> None:
    from tests.support.sandbox_admin import running_sandbox

    with running_sandbox(f"sqlite:///{tmp_path}/s.db") as own:
        _seed(own, billers=1, customers=1, clockStart="2027-04-05")
        assert own.http.get("/_sandbox/clock").json()["now"].startswith("2027-04-05T06:0")
        again = own.http.post("/_sandbox/seed", json={"clockStart": "2027-05-01"})
        assert again.status_code == 422
        assert again.json()["errors"][0]["field"] == "clockStart"

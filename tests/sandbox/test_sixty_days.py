"""Sixty days of a small seeded biller, asserted over HTTP as the simulation issue's "done when"
asks: invoices move through their statuses, failed collections are retried then stop, a paused
collection waits and a resumed one runs, payouts sum exactly to their items, settled means paid
out, every payout credit on the bank statement matches a payout, and webhooks arrive signed and
are retried after a failing receiver."""

from __future__ import annotations

import base64
import csv
import hashlib
import hmac
import io
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.support.sandbox_admin import AppCredentials, SandboxAdmin, running_sandbox

START = date(2027, 3, 1)  # a Monday


class _Receiver:
    """A webhook receiver that answers 500 to its first ``fail_first`` deliveries."""

    def __init__(self, fail_first: int) -> None:
        self.fail_first = fail_first
        self.received: list[tuple[dict[str, str], bytes, int]] = []
        self.lock = threading.Lock()


@pytest.fixture
def receiver() -> Iterator[tuple[_Receiver, str]]:
    state = _Receiver(fail_first=2)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            with state.lock:
                status = 500 if len(state.received) < state.fail_first else 200
                state.received.append(
                    ({k.lower(): v for k, v in self.headers.items()}, body, status)
                )
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            """Keep the test output clean: no access log."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}/hooks"
    server.shutdown()
    server.server_close()


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


def _csv(admin: SandboxAdmin, name: str, **params: str) -> list[dict[str, str]]:
    answer = admin.http.get(f"/_sandbox/exports/{name}", params=params)
    assert answer.status_code == 200, answer.text
    return list(csv.DictReader(io.StringIO(answer.text)))


def test_sixty_days_of_a_seeded_biller(tmp_path, receiver) -> None:
    state, hook_url = receiver
    runtime = {"webhookRetryBaseSeconds": 0.05, "webhookTimeoutSeconds": 2}
    with running_sandbox(f"sqlite:///{tmp_path}/s.db", clock_start=START, **runtime) as admin:
        demo = _ok(
            admin.http.post("/_sandbox/seed", json={"billers": 1, "customers": 8, "seed": 11}), 201
        )
        app = AppCredentials(demo["clientId"], demo["clientSecret"], demo["redirectUri"])
        biller_id = demo["billers"][0]["billerId"]
        code = admin.authorization_code(app, biller_id)
        token = _ok(admin.token(app, grant_type="authorization_code", code=code))
        me = {"Authorization": f"Bearer {token['access_token']}"}
        platform = admin.platform_token(app)
        kinds = [
            "payment",
            "dd-mandate",
            "invoice",
            "biller",
            "customer",
            "payment-request",
            "payout",
        ]
        _ok(
            admin.api.post(
                f"/apps/{app.client_id}/webhooks",
                headers=platform.headers,
                json={"url": hook_url, "events": kinds, "name": "all"},
            ),
            201,
        )
        secret = _ok(
            admin.api.put(f"/apps/{app.client_id}/webhooks/digest", headers=platform.headers)
        )["secretKey"]

        customers = _ok(
            admin.api.get("/customers", headers=me, params={"size": 50, "sort": "creationTime,asc"})
        )
        ids = [c["id"] for c in customers["customers"]]

        def sent_invoice(customer_id: str) -> dict[str, Any]:
            rows = _ok(
                admin.api.get(
                    "/invoices", headers=me, params={"customerId": customer_id, "size": 50}
                )
            )["invoices"]
            return next(i for i in rows if i["status"] == "SCHEDULED")

        steady = sent_invoice(ids[0])  # an established mandate: collected
        failing = sent_invoice(ids[1])  # insufficient funds: fails, retried, stops
        paused = sent_invoice(ids[7])  # collected only once resumed
        _ok(
            admin.api.put(
                "/customers/payment_settings",
                headers=me,
                json={"customerId": ids[1], "ddRetryCount": 2},
            )
        )
        pause = {"collectionMethods": ["AUTO_COLLECT"]}
        assert (
            admin.api.put(
                f"/invoices/{paused['id']}:pause_collection", headers=me, json=pause
            ).status_code
            == 204
        )

        seen: dict[str, list[str]] = defaultdict(list)
        for day in range(5, 65, 5):
            admin.advance_clock(until=(START + timedelta(days=day)).isoformat())
            # A day's access token has expired: rotate, as a client keeping the refresh token does.
            token = _ok(
                admin.token(app, grant_type="refresh_token", refresh_token=token["refresh_token"])
            )
            me["Authorization"] = f"Bearer {token['access_token']}"
            for invoice in (steady, failing, paused):
                status = _ok(admin.api.get(f"/invoices/{invoice['id']}", headers=me))["status"]
                if not seen[invoice["id"]] or seen[invoice["id"]][-1] != status:
                    seen[invoice["id"]].append(status)
            if day == 30:
                assert seen[paused["id"]] == ["SCHEDULED"], "a paused collection must wait"
                assert (
                    admin.api.put(
                        f"/invoices/{paused['id']}:resume_collection", headers=me, json=pause
                    ).status_code
                    == 204
                )

        # Invoices move through the documented statuses.
        assert seen[steady["id"]] == ["SCHEDULED", "SUBMITTED", "PAID", "SETTLED"] or seen[
            steady["id"]
        ] == ["SUBMITTED", "PAID", "SETTLED"]
        assert seen[paused["id"]][-1] in ("PAID", "SETTLED")
        # Failed collections are retried (ddRetryCount 2: three attempts), then stop.
        failures = _ok(
            admin.http.get(
                "/_sandbox/webhooks/events",
                params={"billerId": biller_id, "eventType": "DD_PAYMENT_FAILED"},
            )
        )["events"]
        request_id = failing["paymentRequests"][0]["id"]
        assert sum(1 for e in failures if e["payload"].get("paymentRequestId") == request_id) == 3
        assert seen[failing["id"]][-1] in ("UNPAID", "OVERDUE")

        # Payouts sum exactly to their items; settled means paid out.
        window = {
            "billerId": biller_id,
            "from": START.isoformat(),
            "to": (START + timedelta(days=60)).isoformat(),
        }
        items = _csv(admin, "payouts.csv", **window)
        assert items, "sixty days of collections must produce payouts"
        by_payout: dict[str, list[dict[str, str]]] = defaultdict(list)
        for row in items:
            by_payout[row["Payout ID"]].append(row)
        for rows in by_payout.values():
            assert sum(Decimal(r["Item amount"]) for r in rows) == Decimal(rows[0]["Payout amount"])
        paid_out_requests = {r["Payment request number"] for r in items}
        settled = _ok(
            admin.api.get(
                "/payment_requests", headers=me, params={"statuses": "SETTLED", "size": 200}
            )
        )
        assert settled["paymentRequests"], "paid-out requests must be SETTLED"
        for request in settled["paymentRequests"]:
            assert request["paymentRequestNo"] in paid_out_requests

        # Every payout credit on the bank statement is a payout.
        payouts = {r["Bank reference"]: Decimal(r["Payout amount"]) for r in items}
        statement = _csv(admin, "bank_statement.csv", layout="generic", **window)
        credits = [r for r in statement if r["Reference"].startswith("ADFIN-PO-")]
        assert credits
        for credit in credits:
            assert payouts[credit["Reference"]] == Decimal(credit["Amount"])

        # Webhooks arrived signed, and the failing receiver's first answers were retried.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(s == 200 for *_, s in state.received):
            time.sleep(0.05)
        assert [s for *_, s in state.received[:2]] == [500, 500]
        for headers, body, _status in state.received:
            mac = hmac.new(
                secret.encode(),
                body + headers["adfin-webhook-signature-timestamp"].encode(),
                hashlib.sha256,
            ).digest()
            assert hmac.compare_digest(
                base64.b64encode(mac).decode(), headers["adfin-webhook-signature"]
            )
        retried = _ok(
            admin.http.get(
                "/_sandbox/webhooks/deliveries", params={"clientId": app.client_id, "limit": 1000}
            )
        )
        assert any(
            d["attemptCount"] > 1 and d["status"] == "SUCCEEDED" for d in retried["deliveries"]
        )


def _seeded_exports(database_url: str) -> list[bytes]:
    with running_sandbox(database_url, clock_start=START) as admin:
        demo = _ok(
            admin.http.post("/_sandbox/seed", json={"billers": 1, "customers": 8, "seed": 5}), 201
        )
        admin.advance_clock(days=25)
        window = {
            "billerId": demo["billers"][0]["billerId"],
            "from": START.isoformat(),
            "to": (START + timedelta(days=25)).isoformat(),
        }
        return [
            admin.http.get("/_sandbox/exports/payouts.csv", params=window).content,
            *(
                admin.http.get(
                    "/_sandbox/exports/bank_statement.csv", params={**window, "layout": layout}
                ).content
                for layout in ("generic", "lloyds", "monzo")
            ),
        ]


def test_the_same_seed_and_clock_start_give_byte_identical_exports(tmp_path) -> None:
    first = _seeded_exports(f"sqlite:///{tmp_path}/a.db")
    time.sleep(1.1)  # a different wall-clock second must not show in the files
    second = _seeded_exports(f"sqlite:///{tmp_path}/b.db")
    assert first[0].count(b"\n") > 1, "the payout export must not be empty"
    assert first == second

"""A burst of 2,000 webhook deliveries to the receiver on loopback: answer times (p50, p99) as a
ratio to a floor (a bare ASGI endpoint under the same server, answering 200 to the same burst),
and the receiver's promises checked: none lost, none emitted twice.

    .venv/bin/python bench/bench_webhooks.py [--deliveries 2000] [--concurrency 50]

The receiver is ``billops webhooks serve`` in its own process (SQLite ledger, a platform block
on a Prefect test server, events emitted to that server). Deliveries are signed as the service
signs them; 5% are sent twice (a retry) and must be acknowledged without a second event. The goal
is p99 <= 50 ms on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="billops-bench-prefect-"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "60")

BILLER = "b-bench"
API_KEY_HEADER = "x-billops-webhook-key"


def deliveries(count: int, secret: str, api_key: str) -> list[tuple[bytes, dict[str, str]]]:
    """Signed deliveries of ``count`` distinct events, 5% of them repeated (retries)."""
    made = []
    for number in range(count):
        event_id = str(uuid.uuid4())
        body = json.dumps(
            {
                "type": "PAYMENT_REQUEST_PAID",
                "eventId": event_id,
                "billerId": BILLER,
                "paymentRequestId": f"pr-{number}",
            },
            separators=(",", ":"),
        ).encode()
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        mac = hmac.new(secret.encode(), body + stamp.encode(), hashlib.sha256).digest()
        headers = {
            "content-type": "application/json; charset=utf-8",
            "adfin-webhook-id": event_id,
            "adfin-webhook-type": "payment-request",
            "adfin-webhook-signature": base64.b64encode(mac).decode(),
            "adfin-webhook-signature-timestamp": stamp,
            API_KEY_HEADER: api_key,
        }
        made.append((body, headers))
    made += made[: count // 20]
    return made


async def burst(
    url: str, sent: list[tuple[bytes, dict[str, str]]], concurrency: int
) -> tuple[list[float], dict[int, int]]:
    """POST everything at once over ``concurrency`` keep-alive connections (a minimal HTTP/1.1
    client, so the load generator costs little of the machine); answer times in ms, statuses."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    pending: asyncio.Queue[tuple[bytes, dict[str, str]]] = asyncio.Queue()
    for item in sent:
        pending.put_nowait(item)
    times: list[float] = []
    statuses: dict[int, int] = {}

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while not pending.empty():
                body, headers = pending.get_nowait()
                head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
                request = (
                    f"POST {parts.path} HTTP/1.1\r\nhost: {host}:{port}\r\n{head}"
                    f"content-length: {len(body)}\r\n\r\n"
                ).encode() + body
                started = time.perf_counter()
                writer.write(request)
                await writer.drain()
                status = int((await reader.readline()).split()[1])
                length = 0
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                times.append((time.perf_counter() - started) * 1000)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(connection() for _ in range(concurrency)))
    return times, statuses


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used (Linux ``/proc``), children excluded."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def bare_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The floor: reads the body and answers 200, nothing else."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    body = b'{"stored":true}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def serve_floor() -> None:
    """``--floor``: the bare app under uvicorn in this process, as the receiver is served."""
    import uvicorn

    from billops.listen import tcp_listener

    listener = tcp_listener("127.0.0.1", 0)  # bound as the receiver binds its own
    print(f"ready: http://127.0.0.1:{listener.getsockname()[1]}/webhooks", flush=True)
    config = uvicorn.Config(bare_app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[listener])


def start(
    command: list[str], env: dict[str, str], prefix: str
) -> tuple[subprocess.Popen[str], str]:
    """A server in its own process; returns it and the URL it printed."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith(prefix):
        process.kill()
        raise SystemExit(f"{command[2:4]} did not start: {line!r}")
    return process, line.removeprefix(prefix)


def start_receiver(block: str, home: Path, api_url: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "BILLOPS_HOME": str(home), "PREFECT_API_URL": api_url}
    command = [sys.executable, "-m", "billops.cli", "webhooks", "serve", "--platform", block]
    return start([*command, "--port", "0"], env, "webhook receiver ready: ")


def prefect_count(api_url: str, name: str) -> int:
    import httpx

    body = {"filter": {"event": {"name": [name]}}, "time_unit": "day", "time_interval": 1}
    answer = httpx.post(f"{api_url}/events/count-by/event", json=body, timeout=60)
    answer.raise_for_status()
    return sum(int(row["count"]) for row in answer.json())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        serve_floor()
        return

    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness
    from pydantic import SecretStr

    from blocks import PlatformCredentials
    from blocks.webhook_settings import WebhookReceiverSettings
    from ledger import Ledger

    secret, api_key = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    sent = deliveries(args.deliveries, secret, api_key)
    with prefect_test_harness(server_startup_timeout=60), tempfile.TemporaryDirectory() as tmp:
        api_url = str(PREFECT_API_URL.value())
        settings = WebhookReceiverSettings(
            signing_secret=SecretStr(secret),
            api_key_header=API_KEY_HEADER,
            api_key_value=SecretStr(api_key),
        )
        PlatformCredentials(
            environment="sandbox",
            base_url="http://127.0.0.1:9/api",
            client_id="bench",
            client_secret=SecretStr("bench-secret"),
            webhooks=settings,
        ).save("bench-platform", overwrite=True)

        floor, floor_url = start([sys.executable, __file__, "--floor"], dict(os.environ), "ready: ")
        try:
            asyncio.run(burst(floor_url, sent[:200], args.concurrency))  # warm-up
            floor_cpu = cpu_seconds(floor.pid)
            floor_times, _ = asyncio.run(burst(floor_url, sent, args.concurrency))
            floor_cpu = cpu_seconds(floor.pid) - floor_cpu
        finally:
            floor.terminate()
            floor.wait(30)

        with Ledger(f"sqlite:///{tmp}/ledger.db") as made:  # what `billops setup` does
            made.set_biller_block(BILLER, "bench-biller")
        process, url = start_receiver("bench-platform", Path(tmp), api_url)
        try:
            asyncio.run(burst(url, sent[:1] * 1, 1))  # first request loads the keys
            load_before = os.getloadavg()[0]
            receiver_cpu = cpu_seconds(process.pid)
            started = time.perf_counter()
            times, statuses = asyncio.run(burst(url, sent, args.concurrency))
            elapsed = time.perf_counter() - started
            answer_cpu = cpu_seconds(process.pid) - receiver_cpu
            deadline = time.monotonic() + 120
            ledger = Ledger(f"sqlite:///{tmp}/ledger.db")
            while True:
                stored = ledger.webhook_events()
                if all(e.emissions >= 1 for e in stored) or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            # The server persists events in batches; wait until all are there (or 120 s).
            name = "billops.service.payment-request.payment_request_paid"
            waited = time.monotonic()
            while (in_prefect := prefect_count(api_url, name)) < len(stored):
                if time.monotonic() - waited > 120:
                    break
                time.sleep(1)
            waited = time.monotonic() - waited
        finally:
            process.terminate()
            process.wait(30)

    lost = args.deliveries - len(stored)
    twice = sum(1 for e in stored if e.emissions > 1)
    repeated = sum(1 for e in stored if e.deliveries > 1)
    retries = len(sent) - args.deliveries
    print(
        f"deliveries sent: {len(sent)} ({args.deliveries} events, {retries} retries), "
        f"concurrency {args.concurrency}, {elapsed:.1f} s ({len(sent) / elapsed:.0f}/s)"
    )
    print(f"answers: {dict(sorted(statuses.items()))}")
    print(f"machine load average (1 min) at the burst: {load_before:.1f} on {os.cpu_count()} cores")
    print(
        f"CPU per delivery: receiver {answer_cpu / len(sent) * 1000:.2f} ms (answers, storage and "
        f"what emission ran during the burst), floor {floor_cpu / len(sent) * 1000:.2f} ms"
    )
    floor_p50, floor_p99 = percentile(floor_times, 0.5), percentile(floor_times, 0.99)
    print(f"floor    p50 {floor_p50:6.1f} ms  p99 {floor_p99:6.1f} ms")
    print(
        f"receiver p50 {percentile(times, 0.5):6.1f} ms  p99 {percentile(times, 0.99):6.1f} ms  "
        f"(goal p99 <= 50 ms)"
    )
    print(
        f"ratio p99 receiver/floor: {percentile(times, 0.99) / percentile(floor_times, 0.99):.2f}x"
    )
    print(
        f"stored {len(stored)}, lost {lost}, retried deliveries deduplicated {repeated}, "
        f"emitted twice {twice}, events at Prefect {in_prefect} "
        f"(all there {waited:.0f} s after the last was emitted)"
    )


if __name__ == "__main__":
    main()

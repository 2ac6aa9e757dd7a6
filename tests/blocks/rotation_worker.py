"""One worker process of the rotation tests: loads a shared ``BillerCredentials`` block and calls
``GET /biller`` through the block's refreshing auth for a number of seconds.

Usage: ``python -m tests.blocks.rotation_worker BLOCK_NAME SECONDS [PAUSE]``. Prints one JSON
line ``{"requests", "statuses", "errors"}`` (never a token) and exits 1 if anything failed.
The Prefect API comes from ``PREFECT_API_URL`` in the environment.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter

import httpx

from billing_api import RefreshingAuth
from blocks import BillerCredentials


def run(name: str, seconds: float, pause: float) -> dict[str, object]:
    block = BillerCredentials.load(name)
    auth = RefreshingAuth(block.get_token_manager())
    statuses: Counter[int] = Counter()
    errors: list[str] = []
    requests = 0
    deadline = time.monotonic() + seconds
    with httpx.Client(base_url=block.api_url, auth=auth, timeout=30) as http:
        while time.monotonic() < deadline:
            try:
                response = http.get("/biller")
                statuses[response.status_code] += 1
            except Exception as exc:  # reported, and the run counts as failed
                errors.append(f"{type(exc).__name__}: {exc}")
                break
            requests += 1
            time.sleep(pause)
    return {"requests": requests, "statuses": dict(statuses), "errors": errors}


def main() -> int:
    name, seconds = sys.argv[1], float(sys.argv[2])
    pause = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    result = run(name, seconds, pause)
    print(json.dumps(result), flush=True)
    failed = result["errors"] or set(result["statuses"]) - {200}  # type: ignore[operator]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

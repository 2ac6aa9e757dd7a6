"""The sandbox's fault plan, driven through its admin API (``/_sandbox/faults``).

Fault plans are sandbox-wide: tests that plan faults use a sandbox of their own, never the
session's shared one.
"""

from __future__ import annotations

from typing import Any

from tests.support.sandbox_admin import SandboxAdmin


def plan_faults(admin: SandboxAdmin, *rules: dict[str, Any], seed: int = 7) -> None:
    """Replace the sandbox's fault plan (rules use the admin API's camelCase names)."""
    response = admin.http.post("/_sandbox/faults", json={"seed": seed, "rules": list(rules)})
    assert response.status_code == 200, response.text


def clear_faults(admin: SandboxAdmin) -> None:
    """Remove every fault rule."""
    response = admin.http.delete("/_sandbox/faults")
    assert response.status_code == 204, response.text


def fault_counts(admin: SandboxAdmin) -> dict[str, Any]:
    """``requests`` matched by a rule and ``injected`` per kind, since the plan was set."""
    shown = admin.http.get("/_sandbox/faults").json()
    return {"requests": shown["requests"], **shown["injected"]}

"""Fault injection: the sandbox misbehaving on demand, so clients can prove they cope.

A :class:`FaultPlan` is a seed and a list of :class:`FaultRule`; it comes from
``billops sandbox serve --faults "latency=50ms,error_rate=0.1,seed=7"`` (one global rule, parsed by
:func:`parse_faults`) or from ``POST /_sandbox/faults`` at run time. Faults touch the contract API
(paths under ``/api``) only, never ``/_sandbox``: the admin API must stay reliable.

Per request the first rule whose ``pathPrefix`` and ``method`` match decides, with ONE draw
``u`` from the plan's ``random.Random(seed)`` (plus one for jitter when the rule has some):
``u < rateLimit`` answers 429 ``RATE_LIMITED`` with ``Retry-After``; the next ``errorRate`` answers
500 ``INTERNAL_ERROR`` (or 503 with ``Retry-After``); the next ``dropAfterCommit`` runs the
request (its transaction commits) and closes the connection without an answer. Latency is added
first, whatever the outcome. The draws follow the order in which requests reach the sandbox, so a
sequence is reproducible for a seed when requests are sent one at a time; concurrent clients
make the order (and so the outcome per request) depend on timing.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

API_PREFIX = "/api"
_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
KINDS = ("latency", "rateLimit", "error", "dropAfterCommit")


class FaultRule(BaseModel):
    """Which requests (``pathPrefix``, ``method``) get which faults, with what probability."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    path_prefix: str = Field(API_PREFIX, alias="pathPrefix", min_length=1)
    method: str | None = None
    latency_ms: float = Field(0, alias="latencyMs", ge=0, le=60_000)
    jitter_ms: float = Field(0, alias="jitterMs", ge=0, le=60_000)
    rate_limit: float = Field(0, alias="rateLimit", ge=0, le=1)
    retry_after: int = Field(1, alias="retryAfter", ge=0, le=3600)
    error_rate: float = Field(0, alias="errorRate", ge=0, le=1)
    # 500 is what the contract declares on every operation; 503 (with Retry-After) is what a
    # gateway in front of the real service may answer, outside the contract.
    error_status: Literal[500, 503] = Field(500, alias="errorStatus")
    drop_after_commit: float = Field(0, alias="dropAfterCommit", ge=0, le=1)

    @field_validator("path_prefix")
    @classmethod
    def _under_api(cls, value: str) -> str:
        """As the client sends it (``/api/customers``); ``/customers`` means the same."""
        if not value.startswith("/"):
            raise ValueError("must start with '/'")
        if value == API_PREFIX or value.startswith(API_PREFIX + "/"):
            return value
        return API_PREFIX + value

    @field_validator("method")
    @classmethod
    def _known_method(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value.upper() not in _METHODS:
            raise ValueError(f"must be one of {', '.join(sorted(_METHODS))}")
        return value.upper()

    @model_validator(mode="after")
    def _rates_fit(self) -> Self:
        total = self.rate_limit + self.error_rate + self.drop_after_commit
        if total > 1 + 1e-9:
            raise ValueError(f"rateLimit + errorRate + dropAfterCommit is {total:g}; at most 1")
        return self

    def matches(self, method: str, path: str) -> bool:
        return path.startswith(self.path_prefix) and self.method in (None, method)


class FaultPlan(BaseModel):
    """The body of ``POST /_sandbox/faults``; no seed means a random one (shown by GET)."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    seed: int | None = None
    rules: list[FaultRule] = Field(default_factory=list)


# --- the --faults string ------------------------------------------------------------------------


class FaultSpecError(ValueError):
    """A bad ``--faults`` string; the message names the offending part."""


_RATES = {
    "error_rate": "errorRate",
    "rate_limit": "rateLimit",
    "drop_after_commit": "dropAfterCommit",
}
_DURATIONS = {"latency": "latencyMs", "jitter": "jitterMs"}
_KEYS = (*_DURATIONS, *_RATES, "error_status", "retry_after", "path_prefix", "method", "seed")


def parse_faults(text: str) -> FaultPlan:
    """``"latency=50ms,error_rate=0.1,rate_limit=0.05,drop_after_commit=0.05,seed=7"`` → a plan
    with one rule (every ``/api`` path unless ``path_prefix=`` / ``method=`` narrow it).

    Durations take ``ms`` or ``s`` (a bare number is milliseconds); rates are probabilities.
    An empty string is no faults.
    """
    rule: dict[str, Any] = {}
    seed: int | None = None
    seen: set[str] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not value:
            raise FaultSpecError(f"'{part}': expected key=value")
        if key not in _KEYS:
            raise FaultSpecError(f"'{part}': unknown fault '{key}' (known: {', '.join(_KEYS)})")
        if key in seen:
            raise FaultSpecError(f"'{part}': '{key}' given twice")
        seen.add(key)
        if key == "seed":
            seed = _integer(part, value)
        else:
            field, parsed = _rule_value(part, key, value)
            rule[field] = parsed
    if not rule:
        return FaultPlan(seed=seed)
    total = sum(rule.get(field, 0.0) for field in _RATES.values())
    if total > 1 + 1e-9:
        parts = ", ".join(f"'{k}'" for k in _RATES if k in seen)
        raise FaultSpecError(f"{parts}: the rates add up to {total:g}; at most 1")
    try:
        return FaultPlan(seed=seed, rules=[FaultRule.model_validate(rule)])
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise FaultSpecError(f"--faults '{text}': {exc}") from exc


def _rule_value(part: str, key: str, value: str) -> tuple[str, Any]:
    if key in _DURATIONS:
        return _DURATIONS[key], _milliseconds(part, value)
    if key in _RATES:
        return _RATES[key], _probability(part, value)
    if key == "retry_after":
        return "retryAfter", _integer(part, value.removesuffix("s"), minimum=0)
    if key == "error_status":
        if value not in ("500", "503"):
            raise FaultSpecError(f"'{part}': error_status is 500 or 503")
        return "errorStatus", int(value)
    if key == "method":
        if value.upper() not in _METHODS:
            raise FaultSpecError(f"'{part}': method is one of {', '.join(sorted(_METHODS))}")
        return "method", value.upper()
    if not value.startswith("/"):
        raise FaultSpecError(f"'{part}': path_prefix starts with '/'")
    return "pathPrefix", value


def _milliseconds(part: str, value: str) -> float:
    number, scale = value, 1.0
    if value.endswith("ms"):
        number = value[:-2]
    elif value.endswith("s"):
        number, scale = value[:-1], 1000.0
    try:
        ms = float(number) * scale
    except ValueError:
        raise FaultSpecError(f"'{part}': expected a duration such as 50ms or 0.5s") from None
    if not 0 <= ms <= 60_000:
        raise FaultSpecError(f"'{part}': a duration between 0 and 60s")
    return ms


def _probability(part: str, value: str) -> float:
    try:
        rate = float(value)
    except ValueError:
        raise FaultSpecError(f"'{part}': expected a probability such as 0.05") from None
    if not 0 <= rate <= 1:
        raise FaultSpecError(f"'{part}': a probability is between 0 and 1")
    return rate


def _integer(part: str, value: str, minimum: int | None = None) -> int:
    try:
        number = int(value)
    except ValueError:
        raise FaultSpecError(f"'{part}': expected a whole number") from None
    if minimum is not None and number < minimum:
        raise FaultSpecError(f"'{part}': at least {minimum}")
    return number


# --- decisions ----------------------------------------------------------------------------------

Outcome = Literal["pass", "rateLimit", "error", "dropAfterCommit"]


@dataclass(frozen=True)
class Decision:
    delay: float  # seconds to wait first
    outcome: Outcome
    rule: FaultRule


class FaultState:
    """The active plan, its random generator and what was injected; one per sandbox app.

    Decisions are drawn in the event loop, reads come from the admin API's worker threads: a lock
    keeps the generator and the counters consistent.
    """

    def __init__(self, plan: FaultPlan) -> None:
        self._lock = threading.Lock()
        self.configure(plan)

    def configure(self, plan: FaultPlan) -> None:
        """Replace the plan; the generator restarts from the seed and the counters from zero."""
        seed = plan.seed if plan.seed is not None else random.SystemRandom().randrange(2**31)
        with self._lock:
            self._plan = plan.model_copy(update={"seed": seed})
            self._random = random.Random(seed)
            self._requests = 0
            self._injected = dict.fromkeys(KINDS, 0)

    def decide(self, method: str, path: str) -> Decision | None:
        """What to do with one request; None when no rule matches (no draw is made)."""
        if not (path == API_PREFIX or path.startswith(API_PREFIX + "/")):
            return None
        with self._lock:
            rule = next((r for r in self._plan.rules if r.matches(method, path)), None)
            if rule is None:
                return None
            self._requests += 1
            draw = self._random.random()
            jitter = self._random.uniform(0, rule.jitter_ms) if rule.jitter_ms else 0.0
            outcome = _outcome(rule, draw)
            delay = (rule.latency_ms + jitter) / 1000
            if delay > 0:
                self._injected["latency"] += 1
            if outcome != "pass":
                self._injected[outcome] += 1
        return Decision(delay, outcome, rule)

    def snapshot(self) -> dict[str, Any]:
        """``{"seed", "rules", "requests", "injected": {kind: count}}`` (GET /_sandbox/faults)."""
        with self._lock:
            body = self._plan.model_dump(by_alias=True)
            body["requests"] = self._requests
            body["injected"] = dict(self._injected)
        return body


def _outcome(rule: FaultRule, draw: float) -> Outcome:
    bound = rule.rate_limit
    if draw < bound:
        return "rateLimit"
    bound += rule.error_rate
    if draw < bound:
        return "error"
    bound += rule.drop_after_commit
    if draw < bound:
        return "dropAfterCommit"
    return "pass"

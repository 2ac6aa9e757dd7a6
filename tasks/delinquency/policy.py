"""A biller's delinquency policy: ordered states, who is in scope, and how far a run may go.

The policy is a YAML file a finance person can read (README, "Pausing collection for delinquent
customers"); the default ships beside this module (``default_policy.yaml``). :func:`load_policy`
reads and validates it; every error names the file, the line and the key. A policy is identified
in the ledger and the audit by its name and a digest of its content (:attr:`Policy.digest`), so
each pause records the exact rules that caused it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from tasks.delinquency.conditions import LEAVE_ONLY, ConditionGroup, Number, parse_pounds

DEFAULT_POLICY = Path(__file__).with_name("default_policy.yaml")
EnterAction = Literal["pause_auto_collect", "cancel_collection_on_failure", "report"]
LeaveAction = Literal["resume_collection", "report"]
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_RESERVED = {"none", "good", "good_standing"}


class PolicyError(ValueError):
    """A policy file that cannot be used; the message names the file, line and key."""


class Scope(BaseModel):
    """Customers by id or external id, and the service's customer tag ids."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    customers: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @field_validator("customers", "tags", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> Any:
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
            raise ValueError("a list of ids, e.g. [cust-1, cust-2]")
        return tuple(str(v).strip() for v in value)

    @property
    def empty(self) -> bool:
        return not self.customers and not self.tags


class ApplySettings(BaseModel):
    """How far a run may go on its own.

    ``automatic``: the nightly schedule applies the plan without a person (otherwise it only plans).
    ``max_customers`` / ``max_amount``: the blast-radius cap of one run — customers whose collection
    a run changes, and the pounds of the debts it pauses or resumes. Over the cap a run stops and
    asks for an approval, even where ``automatic`` is set.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    automatic: bool = False
    max_customers: Number = 25
    max_amount: Decimal = Decimal("5000.00")

    @field_validator("max_amount", mode="before")
    @classmethod
    def _amount(cls, value: Any) -> Decimal:
        return parse_pounds(value)


class State(BaseModel):
    """One state of the ladder: when a customer enters it, what happens, when it is left."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    enter: ConditionGroup
    leave: ConditionGroup | None = None
    min_days: Number = 0
    cooldown_days: Number = 0
    on_enter: tuple[EnterAction, ...] = ("report",)
    on_leave: tuple[LeaveAction, ...] = ("report",)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.fullmatch(value) or value in _RESERVED:
            raise ValueError(
                f"{value!r}: a state name is lower case letters, digits, '_' or '-' (at most 40), "
                f"and not one of {', '.join(sorted(_RESERVED))}"
            )
        return value

    @model_validator(mode="after")
    def _enter_has_no_stay_conditions(self) -> State:
        for condition in self.enter.conditions:
            if condition.kind in LEAVE_ONLY:
                raise ValueError(
                    f"state {self.name!r}: {condition.kind} describes a stay in the state, so it "
                    "can only be a leave condition"
                )
        return self

    @property
    def pauses(self) -> bool:
        """While a customer is in this state billops keeps its debts' AUTO_COLLECT paused."""
        return "pause_auto_collect" in self.on_enter

    @property
    def cancels_on_failure(self) -> bool:
        return "cancel_collection_on_failure" in self.on_enter

    @property
    def resumes(self) -> bool:
        """Leaving this state resumes what billops paused (unless the next state pauses too)."""
        return "resume_collection" in self.on_leave


class Policy(BaseModel):
    """The whole policy. ``states`` go from the mildest to the most severe."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: Literal[1] = 1
    description: str = ""
    states: tuple[State, ...]
    include: Scope = Scope()
    exclude: Scope = Scope()
    apply: ApplySettings = ApplySettings()
    failure_reason_codes: tuple[str, ...] = ("COLLECTION_FAILED",)

    @model_validator(mode="after")
    def _consistent(self) -> Policy:
        if not self.states:
            raise ValueError("states: give at least one state")
        names = [state.name for state in self.states]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"states: the name {', '.join(repeated)} is used twice")
        if any(s.resumes for s in self.states) and not any(s.pauses for s in self.states):
            raise ValueError(
                "a state resumes collection on leaving, but no state pauses it (pause_auto_collect)"
            )
        return self

    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(state.name for state in self.states)

    @property
    def failure_windows(self) -> tuple[int | None, ...]:
        """Every window (days; None: ever) a condition counts failed collections over."""
        return tuple(
            c.value.within_days
            for s in self.states
            for group in (s.enter, s.leave)
            if group is not None
            for c in group.conditions
            if c.kind == "failed_attempts"
        )

    def state(self, name: str) -> State:
        """The state called ``name``."""
        for state in self.states:
            if state.name == name:
                return state
        raise KeyError(f"policy {self.name!r} has no state {name!r}")

    @property
    def digest(self) -> str:
        """A short digest of the rules (same rules, same digest), recorded with every change."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def warnings(self) -> list[str]:
        """What is allowed but likely a mistake (``billops policy check`` prints these)."""
        found = []
        for lower, higher in zip(self.states, self.states[1:], strict=False):
            if lower.pauses and lower.resumes and not higher.pauses:
                found.append(
                    f"state {higher.name!r} does not pause collection but {lower.name!r} below it "
                    "does: a customer escalating from one to the other gets collection resumed"
                )
        for state in self.states:
            if state.leave is None and state.min_days == 0:
                found.append(
                    f"state {state.name!r}: no leave conditions and no min_days, so a customer "
                    "whose figures hover at the threshold enters and leaves it run after run"
                )
            if state.pauses and not state.resumes:
                found.append(
                    f"state {state.name!r} pauses collection but does not resume it on leaving: "
                    "billops then leaves its pauses for a person to resume"
                )
        return found


# --- reading the file -----------------------------------------------------------------------


class _Unreadable(yaml.constructor.ConstructorError):
    """A well-formed value that cannot be read (an impossible date, an infinite number)."""


class _Loader(yaml.SafeLoader):
    """YAML with numbers like ``50.00`` read exactly (as ``Decimal``), never through a float."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        # A value the YAML readers choke on ("on_date: 2027-02-30") raises a bare ValueError
        # without a line; say which value, where.
        try:
            return super().construct_object(node, deep=deep)
        except yaml.YAMLError:
            raise
        except (ValueError, ArithmeticError, TypeError) as exc:
            raise _Unreadable(
                None, None, f"{node.value!r} cannot be read: {exc}", node.start_mark
            ) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # YAML readers keep the last of two equal keys without a word: a second max_customers
        # would silently replace the cap. Refuse it, naming both lines.
        seen: dict[tuple[str, Any], yaml.Mark] = {}
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                continue
            first = seen.setdefault((key.tag, key.value), key.start_mark)
            if first is not key.start_mark:
                raise _Unreadable(
                    None,
                    None,
                    f"{key.value!r} is given twice (first on line {first.line + 1}): keep one",
                    key.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


def _decimal(loader: yaml.SafeLoader, node: yaml.Node) -> Decimal:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    try:
        value = Decimal(text.replace("_", ""))
    except ArithmeticError:
        value = Decimal("NaN")
    if not value.is_finite():  # .inf, .nan
        raise _Unreadable(
            None,
            None,
            f'{text!r} is not a number (e.g. 30, or "50.00" for pounds)',
            node.start_mark,
        )
    return value


_Loader.add_constructor("tag:yaml.org,2002:float", _decimal)
_DECIMAL_DIGITS = re.compile(r"[-+]?[0-9]+")


def _integer(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    """A whole number in decimal digits only: YAML 1.1 also reads ``1:30`` (base 60, as 90),
    ``0x1e``, ``017`` (octal, as 15) and ``1_0``, none of which a policy means."""
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if not _DECIMAL_DIGITS.fullmatch(text):
        reason = f"{text!r} is not a whole number in decimal digits (e.g. 30)"
        raise _Unreadable(None, None, reason, node.start_mark)
    return int(text)


_Loader.add_constructor("tag:yaml.org,2002:int", _integer)

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class _Mark:
    line: int
    column: int


def _marks(
    node: yaml.Node, path: Path_ = (), found: dict[Path_, _Mark] | None = None
) -> dict[Path_, _Mark]:
    """Where each key and list item of the document starts (1-based line and column)."""
    found = {} if found is None else found
    found[path] = _Mark(node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = str(key.value)
            _marks(value, (*path, name), found)
            # An error about a key's value points at the key: that is where people look.
            found[(*path, name)] = _Mark(key.start_mark.line + 1, key.start_mark.column + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _marks(item, (*path, index), found)
    return found


def _where(marks: dict[Path_, _Mark], loc: Path_) -> str:
    """``line L, column C`` of the deepest part of ``loc`` the document has."""
    for depth in range(len(loc), -1, -1):
        mark = marks.get(tuple(loc[:depth]))
        if mark is not None:
            return f"line {mark.line}, column {mark.column}"
    return "line 1"


def _key(loc: Path_) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(the document)"


def _readable_loc(loc: tuple[Any, ...]) -> Path_:
    # pydantic adds the names of validators and union members to a location; the file has none.
    return tuple(p for p in loc if isinstance(p, int) or not str(p).startswith("function-"))


def parse_policy(text: str, *, source: str = "<policy>") -> Policy:
    """The policy in ``text`` (YAML), or :class:`PolicyError` naming ``source``, line and key."""
    try:
        node = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        what = "" if isinstance(exc, _Unreadable) else "not valid YAML: "
        raise PolicyError(f"{source}{where}: {what}{problem}") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{source}: a policy is a YAML mapping (name:, states:, ...)")
    marks = _marks(node) if node is not None else {}
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors(include_url=False):
            loc = _readable_loc(error["loc"])
            message = str(error["msg"]).removeprefix("Value error, ")
            lines.append(f"{source}, {_where(marks, loc)}: {_key(loc)}: {message}")
        raise PolicyError("\n".join(lines)) from None


def load_policy(path: Path | None = None) -> Policy:
    """The policy in the file at ``path`` (the shipped default when None)."""
    path = path or DEFAULT_POLICY
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise PolicyError(f"{path}: no such policy file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{path}: cannot read the policy: {exc}") from None
    return parse_policy(text, source=str(path))

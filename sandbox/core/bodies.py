"""Reading JSON bodies exactly, and checking their fields with the contract's error terms.

Bodies are parsed from the raw bytes with ``parse_float=Decimal``: money arrives as the decimal the
client wrote, never through float (the contract's convention 7). An unreadable body is 400
``BAD_REQUEST``; a readable one that breaks a rule is 422 ``VALIDATION_ERROR`` whose ``field`` is a
dotted path with indexes (``items[0].quantity``), raised by :class:`Fields`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from typing import Annotated, Any, NoReturn

from fastapi import Depends, Request

from sandbox.core.errors import BAD_REQUEST, VALIDATION_ERROR, ApiError
from sandbox.core.money import PENNY

# Largest absolute amount of money the sandbox takes in one field [I]: far above any invoice, and
# small enough that sums of many lines still fit the exact penny columns.
MAX_MONEY = Decimal("999999999.99")
_HUGE = Decimal(10) ** 12
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


async def read_json(request: Request) -> Any:
    """The request's JSON body (``None`` when there is none); 400 when it is not readable."""
    raw = await request.body()
    if not raw.strip():
        return None
    content_type = request.headers.get("content-type", "").lower()
    if content_type and "json" not in content_type:
        raise ApiError(400, BAD_REQUEST, "send the body as application/json")
    try:
        value = json.loads(raw, parse_float=Decimal, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, BAD_REQUEST, "the request body is not valid JSON") from exc
    if value is None:  # a literal `null`: no operation of the contract takes one as its body
        raise ApiError(400, BAD_REQUEST, "the request body must not be null")
    if _has_nul(value):
        raise ApiError(400, BAD_REQUEST, "text in the body must not contain NUL characters")
    return value


JsonBody = Annotated[Any, Depends(read_json)]


def json_default(value: Any) -> Any:
    """For ``json.dumps``: a body's ``Decimal`` back as the JSON number the client wrote
    (``30`` an int, ``30.0`` a float), so stored documents and body digests hold plain JSON."""
    if isinstance(value, Decimal):
        return int(value) if value.as_tuple().exponent >= 0 else float(value)  # type: ignore[operator]
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` that takes bodies read by :func:`read_json` (see :func:`json_default`)."""
    return json.dumps(value, default=json_default, **options)


def refuse_nul(**values: Any) -> None:
    """400 for a query value holding NUL (PostgreSQL cannot compare text with it)."""
    for name, value in values.items():
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(text, str) and "\x00" in text for text in texts):
            raise ApiError(400, BAD_REQUEST, "must not contain NUL characters", field=name)


def json_object(body: Any, *, required: bool = True) -> dict[str, Any]:
    """The body as an object: 400 when it is missing (and required) or not an object."""
    if body is None and not required:
        return {}
    if body is None:
        raise ApiError(400, BAD_REQUEST, "this operation needs a JSON object body")
    if not isinstance(body, dict):
        raise ApiError(400, BAD_REQUEST, "the request body must be a JSON object")
    return body


def date_value(value: Any, field: str) -> date:
    """A ``YYYY-MM-DD`` string as a date, or 422 naming ``field``."""
    if not isinstance(value, str) or not _DATE.match(value):
        raise ApiError(422, VALIDATION_ERROR, "must be a date YYYY-MM-DD", field=field)
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ApiError(422, VALIDATION_ERROR, "is not a valid calendar date", field=field) from exc


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, Decimal)) and not isinstance(value, bool)


class Fields:
    """Typed access to the fields of one JSON object; each getter raises 422 naming the field."""

    def __init__(self, data: dict[str, Any], prefix: str = "") -> None:
        self.data = data
        self.prefix = prefix

    def path(self, name: str | int) -> str:
        if isinstance(name, int):
            return f"{self.prefix}[{name}]"
        return f"{self.prefix}.{name}" if self.prefix else name

    def fail(self, name: str | int, detail: str) -> NoReturn:
        raise ApiError(422, VALIDATION_ERROR, detail, field=self.path(name))

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def _get(self, name: str, required: bool) -> Any:
        value = self.data.get(name)
        if value is None and required:
            self.fail(name, "is required")
        return value

    def text(
        self, name: str, *, required: bool = False, max_length: int = 255, blank: bool = True
    ) -> str | None:
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, str):
            self.fail(name, "must be a string")
        if not blank and not value.strip():
            self.fail(name, "must not be blank")
        if len(value) > max_length:
            self.fail(name, f"must be at most {max_length} characters")
        return value

    def decimal(
        self,
        name: str,
        *,
        required: bool = False,
        places: int,
        minimum: Decimal | None = None,
        maximum: Decimal = MAX_MONEY,
        above: Decimal | None = None,
    ) -> Decimal | None:
        """A JSON number with at most ``places`` decimals, at least ``minimum``, more than
        ``above`` and at most ``maximum``."""
        value = self._get(name, required)
        if value is None:
            return None
        if not _is_number(value):
            self.fail(name, "must be a JSON number")
        number = Decimal(value)
        # Bounds before quantize: an enormous exponent would overflow the decimal context.
        if not number.is_finite() or abs(number) > _HUGE:
            self.fail(name, f"must be at most {maximum}")
        if number != number.quantize(Decimal(1).scaleb(-places)):
            self.fail(name, f"must have at most {places} decimal places")
        if minimum is not None and number < minimum:
            self.fail(name, f"must be at least {minimum}")
        if above is not None and number <= above:
            self.fail(name, f"must be greater than {above}")
        if number > maximum:
            self.fail(name, f"must be at most {maximum}")
        return number

    def money(self, name: str, *, required: bool = False, positive: bool = True) -> Decimal | None:
        """Pounds as a JSON number with at most 2 decimals; ``positive``: more than 0."""
        kwargs: dict[str, Any] = {"above": Decimal(0)} if positive else {"minimum": -MAX_MONEY}
        amount = self.decimal(name, required=required, places=2, **kwargs)
        return None if amount is None else amount.quantize(PENNY)

    def tax_rate(self, name: str) -> Decimal | None:
        """A percentage 0..100 (at most 4 decimals [I]) or null."""
        return self.decimal(name, places=4, minimum=Decimal(0), maximum=Decimal(100))

    def date(self, name: str, *, required: bool = False) -> date | None:
        value = self._get(name, required)
        return None if value is None else date_value(value, self.path(name))

    def choice(self, name: str, choices: Iterable[str], *, required: bool = False) -> str | None:
        value = self._get(name, required)
        if value is None:
            return None
        allowed = list(choices)
        if value not in allowed:
            self.fail(name, f"must be one of {', '.join(allowed)}")
        return str(value)

    def boolean(self, name: str, default: bool) -> bool:
        value = self.data.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(name, "must be true or false")
        return value

    def integer(self, name: str, *, minimum: int, maximum: int) -> int | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not _is_number(value) or Decimal(value) != Decimal(value).to_integral_value():
            self.fail(name, "must be an integer")
        number = int(value)
        if not minimum <= number <= maximum:
            self.fail(name, f"must be between {minimum} and {maximum}")
        return number

    def obj(self, name: str, *, required: bool = False) -> Fields | None:
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, dict):
            self.fail(name, "must be an object")
        return Fields(value, self.path(name))

    def array(self, name: str, *, required: bool = False, max_items: int = 500) -> list[Any]:
        value = self._get(name, required)
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(name, "must be an array")
        if len(value) > max_items:
            self.fail(name, f"must have at most {max_items} elements")
        return value

    def objects(self, name: str, *, required: bool = False, max_items: int = 500) -> list[Fields]:
        """An array of objects, each as :class:`Fields` with its indexed path."""
        out = []
        for index, element in enumerate(self.array(name, required=required, max_items=max_items)):
            path = f"{self.path(name)}[{index}]"
            if not isinstance(element, dict):
                raise ApiError(422, VALIDATION_ERROR, "must be an object", field=path)
            out.append(Fields(element, path))
        return out

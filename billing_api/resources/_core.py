"""The machinery every resource namespace shares: a request is built ONCE per operation.

Each operation is a *builder*: a plain function taking the method's arguments and returning a
:class:`Call` (operation id, path/query/body, and how to decode the answer) or a :class:`ListCall`
(for paged lists). The namespaces' methods are made from the builders by :func:`sync_op` /
:func:`sync_list`, which keep the builder's signature and docstring for type checkers and
``help()``.

Money sent to the service (contract convention 7): payment-request, payment and item
amounts are JSON numbers. A ``Decimal`` is sent as an ``int`` when whole, otherwise as the
``float`` whose shortest repr (what ``json.dumps`` writes) is exactly the Decimal's digits; an
amount that a float cannot carry exactly (more than ~15 significant digits) is refused instead of
being rounded silently.
Amount arguments must be ``Decimal``, ``int`` or a decimal string, never ``float``, and have at
most 2 decimal places (pounds to the penny).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

import httpx
from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.alias_generators import to_camel

from billing_api._base_client import SyncAPIClient
from billing_api._base_request import operation_for, parse_json_body
from billing_api._exceptions import UnexpectedResponse
from billing_api._pagination import SyncPager

__all__ = [
    "Call",
    "ListCall",
    "SyncResource",
    "body",
    "bytes_call",
    "camel_keys",
    "json_value",
    "list_call",
    "model_call",
    "money",
    "no_content_call",
    "query",
    "sync_list",
    "sync_op",
]

P = ParamSpec("P")
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])
_PENNY = Decimal("0.01")


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request of an operation and the decoder of its 2xx answer."""

    operation_id: str
    decode: Callable[[httpx.Response], T]
    path_params: Mapping[str, str] | None = None
    params: Mapping[str, Any] | None = None
    json: Any = None
    data: Mapping[str, Any] | None = None
    files: Any = None
    headers: Mapping[str, str] | None = None

    def request_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``SyncAPIClient.request``."""
        return {
            "path_params": self.path_params,
            "params": self.params,
            "json": self.json,
            "data": self.data,
            "files": self.files,
            "headers": self.headers,
        }


@dataclass(frozen=True, slots=True)
class ListCall(Generic[T]):
    """A paged list operation: where the items are and how to parse one."""

    operation_id: str
    items_key: str
    parse: Callable[[Any], T]
    path_params: Mapping[str, str] | None = None
    params: Mapping[str, Any] | None = None
    page_size: int | None = None


def _validation_message(error: ValidationError) -> str:
    # Never the input values: an answer may hold tokens or personal data.
    parts = [
        f"{'.'.join(str(part) for part in entry['loc']) or '(body)'}: {entry['msg']}"
        for entry in error.errors(include_input=False, include_url=False)
    ]
    return "; ".join(parts[:5]) + (f" (and {len(parts) - 5} more)" if len(parts) > 5 else "")


def parse_model(model: type[M], value: Any, where: str) -> M:
    """``model`` validated from decoded JSON, or :class:`UnexpectedResponse` naming ``where``."""
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise UnexpectedResponse(
            f"{where}: the answer does not match {model.__name__}: {_validation_message(error)}"
        ) from None


def model_call(operation_id: str, model: type[M], **request: Any) -> Call[M]:
    """An operation whose answer is one ``model``."""

    def decode(response: httpx.Response) -> M:
        value = parse_json_body(operation_for(operation_id), response)
        return parse_model(model, value, operation_id)

    return Call(operation_id, decode, **request)


def no_content_call(operation_id: str, **request: Any) -> Call[None]:
    """An operation answering 204 (or a body nobody needs)."""
    return Call(operation_id, lambda response: None, **request)


def bytes_call(operation_id: str, **request: Any) -> Call[bytes]:
    """An operation whose answer is a file (the raw bytes)."""
    return Call(operation_id, lambda response: response.content, **request)


def list_call(
    operation_id: str,
    items_key: str,
    model: type[M],
    *,
    page_size: int | None,
    path_params: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | None = None,
) -> ListCall[M]:
    """A paged list of ``model`` under ``items_key``."""

    def parse(item: Any) -> M:
        return parse_model(model, item, f"{operation_id} item")

    return ListCall(operation_id, items_key, parse, path_params, params, page_size)


# --- turning Python values into the contract's JSON ----------------------------------------------


def _decimal_json(value: Decimal, where: str) -> int | float:
    if not value.is_finite():
        raise ValueError(f"{where}: {value} is not a finite number")
    if value == value.to_integral_value():
        return int(value)
    number = float(value)
    if Decimal(repr(number)) != value:
        raise ValueError(f"{where}: {value} cannot be sent as an exact JSON number")
    return number


def json_value(value: Any, where: str = "body") -> Any:
    """``value`` as JSON-ready data: models by alias without ``None``, Decimal as an exact number,
    dates ISO 8601 (timestamps in UTC with ``Z``), enums by value, secrets revealed (only
    into the request body)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True, exclude_none=True)
    if isinstance(value, Mapping):
        # An explicit None inside a mapping the caller built is kept: it may clear a field.
        return {str(k): json_value(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Decimal):
        return _decimal_json(value, where)
    if isinstance(value, datetime):
        return timestamp_text(value, where)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return value


def timestamp_text(value: datetime, where: str) -> str:
    """An aware datetime as ISO 8601 UTC with ``Z``; a naive one is refused (it is ambiguous)."""
    if value.tzinfo is None:
        raise ValueError(f"{where}: timestamp {value.isoformat()} has no time zone (use UTC)")
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def camel_keys(fields: Mapping[str, Any]) -> dict[str, Any]:
    """snake_case keyword names as the contract's camelCase, ``None`` values left out."""
    return {to_camel(name): value for name, value in fields.items() if value is not None}


def body(**fields: Any) -> dict[str, Any]:
    """A JSON body from keyword arguments (snake_case names -> camelCase, ``None`` left out)."""
    return {key: json_value(value, key) for key, value in camel_keys(fields).items()}


def _param(value: Any, where: str) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        return [_param(item, where) for item in value]
    return json_value(value, where)


def query(*, sort: str | Sequence[str] | None = None, **filters: Any) -> dict[str, Any]:
    """Query parameters: camelCase names, lists repeated, booleans ``true``/``false``."""
    params = {key: _param(value, key) for key, value in camel_keys(filters).items()}
    if sort is not None:
        params["sort"] = [sort] if isinstance(sort, str) else list(sort)
    return params


def money(value: Decimal | int | str, field: str) -> Decimal:
    """An amount argument checked: Decimal, int or decimal string, at most 2 decimal places."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int | str):
        raise TypeError(
            f"{field} must be a Decimal (or int or decimal string), got {type(value).__name__}: "
            "money is never a float"
        )
    try:
        amount = Decimal(value) if not isinstance(value, Decimal) else value
    except InvalidOperation:
        raise ValueError(f"{field}: {value!r} is not a decimal amount") from None
    if not amount.is_finite() or amount != amount.quantize(_PENNY):
        raise ValueError(f"{field}: {value} must be pounds with at most 2 decimal places")
    return amount


# --- namespaces' methods from the builders --------------------------------------------


class SyncResource:
    """Base of the blocking namespaces (``client.invoices`` ...)."""

    def __init__(self, client: SyncAPIClient) -> None:
        self._client = client

    def _send(self, call: Call[T]) -> T:
        return call.decode(self._client.request(call.operation_id, **call.request_kwargs()))

    def _pages(self, call: ListCall[T]) -> SyncPager[T]:
        return self._client.paginate(
            call.operation_id,
            items_key=call.items_key,
            parse=call.parse,
            path_params=call.path_params,
            params=call.params,
            page_size=call.page_size,
        )


def sync_op(builder: Callable[P, Call[T]]) -> Callable[Concatenate[SyncResource, P], T]:
    """A blocking method sending what ``builder`` builds."""

    @functools.wraps(builder)
    def method(self: SyncResource, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._send(builder(*args, **kwargs))

    return _named(method, builder)


def _named(method: F, builder: Callable[..., Any]) -> F:
    # Builders that would shadow a builtin end in "_" (list_); the method keeps the contract name.
    method.__name__ = builder.__name__.rstrip("_")
    return method


def sync_list(
    builder: Callable[P, ListCall[T]],
) -> Callable[Concatenate[SyncResource, P], SyncPager[T]]:
    """A method returning an iterator over every item of every page."""

    @functools.wraps(builder)
    def method(self: SyncResource, /, *args: P.args, **kwargs: P.kwargs) -> SyncPager[T]:
        return self._pages(builder(*args, **kwargs))

    return _named(method, builder)

"""Argument types shared by several namespaces."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from billing_api.types import CollectionMethod, CustomerRef

__all__ = ["CustomerArg", "MethodsArg", "Sort", "customer_ref", "methods_body"]

CustomerArg = CustomerRef | Mapping[str, Any] | str
"""A customer: its id (a string), a ``CustomerRef`` or a ``{"id"|"externalId": ...}`` mapping."""
MethodsArg = Sequence[CollectionMethod | str]
Sort = str | Sequence[str] | None
"""``"property,asc|desc"``, or several of them (the parameter repeats)."""


def customer_ref(customer: CustomerArg) -> Any:
    """The contract's ``CustomerRef`` for any accepted form of customer argument."""
    if isinstance(customer, str):
        if not customer:
            raise ValueError("customer: an empty id")
        return {"id": customer}
    return customer


def methods_body(methods: MethodsArg) -> dict[str, Any]:
    """``{"collectionMethods": [...]}`` for the pause and resume operations."""
    if isinstance(methods, str):
        # A bare string would otherwise be sent letter by letter.
        methods = [methods]
    if not methods:
        raise ValueError("methods: name at least one collection method (AUTO_COLLECT, ON_DEMAND)")
    return {"collectionMethods": [str(method) for method in methods]}

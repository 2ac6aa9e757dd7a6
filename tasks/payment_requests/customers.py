"""The biller's customers, to resolve the customer a row names by id, externalId or exact name.

Names match exactly after trimming surrounding spaces, and case matters (``ACME Ltd`` is not
``Acme Ltd``): billing the wrong customer is worse than a rejected row, and the reason then
suggests the name that differs only in case. A name two customers share is ambiguous and the row
is rejected, asking for the customer's id or externalId instead. A generic "Customer" column is
tried as an id, then as an externalId, then as a name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from tasks.payment_requests.model import CustomerKind

_KIND_WORDS: dict[CustomerKind, str] = {
    "id": "id",
    "external_id": "externalId",
    "name": "name",
}


def _ambiguous(word: str, value: str, count: int) -> ValueError:
    return ValueError(
        f"ambiguous customer: {count} customers have the {word} {value!r}; "
        "name the customer by its id or externalId instead"
    )


def _group(pairs: Iterable[tuple[str, str]]) -> Mapping[str, tuple[str, ...]]:
    groups: dict[str, list[str]] = {}
    for key, customer_id in pairs:
        groups.setdefault(key, []).append(customer_id)
    return MappingProxyType({key: tuple(ids) for key, ids in groups.items()})


@dataclass(frozen=True)
class CustomerDirectory:
    """Customer ids by id, by externalId and by name (each key → the ids that carry it)."""

    by_id: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    by_external_id: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    by_name: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    folded_names: Mapping[str, str] = field(default_factory=dict)  # casefold → name, for hints

    @classmethod
    def from_records(
        cls, records: Iterable[tuple[str, str | None, str | None]]
    ) -> CustomerDirectory:
        """Build from ``(id, external_id, name)`` tuples, e.g. from ``client.customers.list()``."""
        entries = [
            (str(cid), (ext or "").strip() or None, (name or "").strip() or None)
            for cid, ext, name in records
        ]
        return cls(
            by_id=MappingProxyType({cid: (ext, name) for cid, ext, name in entries}),
            by_external_id=_group((ext, cid) for cid, ext, _ in entries if ext),
            by_name=_group((name, cid) for cid, _, name in entries if name),
            folded_names=MappingProxyType({n.casefold(): n for _, _, n in entries if n}),
        )

    def _candidates(self, kind: CustomerKind, value: str) -> tuple[str, ...]:
        if kind == "id":
            return (value,) if value in self.by_id else ()
        if kind == "external_id":
            return self.by_external_id.get(value, ())
        return self.by_name.get(value, ())

    def _near_name(self, value: str) -> str | None:
        return self.folded_names.get(value.casefold())

    def resolve(self, kind: CustomerKind, value: str) -> str:
        """The customer id ``value`` names, or ValueError with the reason a person reads."""
        value = value.strip()
        found = self._candidates(kind, value)
        if len(found) == 1:
            return found[0]
        word = _KIND_WORDS[kind]
        if found:
            raise _ambiguous(word, value, len(found))
        hint = ""
        near = self._near_name(value) if kind == "name" else None
        if near is not None:
            hint = f" (did you mean {near!r}? names must match exactly)"
        raise ValueError(f"unknown customer: no customer has the {word} {value!r}{hint}")

    def resolve_any(self, value: str) -> tuple[CustomerKind, str]:
        """For a column that may hold any of them: id first, then externalId, then name."""
        value = value.strip()
        kinds: tuple[CustomerKind, ...] = ("id", "external_id", "name")
        for kind in kinds:
            found = self._candidates(kind, value)
            if len(found) == 1:
                return kind, found[0]
            if found:
                raise _ambiguous(_KIND_WORDS[kind], value, len(found))
        near = self._near_name(value)
        hint = f" (did you mean {near!r}? names must match exactly)" if near else ""
        raise ValueError(
            f"unknown customer: no customer has the id, externalId or name {value!r}{hint}"
        )

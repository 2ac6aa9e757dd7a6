"""Pydantic models of the contract's resources (one per resource), enums and webhook events."""

from billing_api.types._base import (
    ApiModel,
    ExtensibleEnum,
    Money,
    Timestamp,
    parse_money,
    parse_timestamp,
)
from billing_api.types.billing import *  # noqa: F403
from billing_api.types.billing import __all__ as _billing
from billing_api.types.customers import *  # noqa: F403
from billing_api.types.customers import __all__ as _customers
from billing_api.types.enums import *  # noqa: F403
from billing_api.types.enums import __all__ as _enums
from billing_api.types.events import *  # noqa: F403
from billing_api.types.events import __all__ as _events
from billing_api.types.other import *  # noqa: F403
from billing_api.types.other import __all__ as _other

__all__ = [
    "ApiModel",
    "ExtensibleEnum",
    "Money",
    "Timestamp",
    "parse_money",
    "parse_timestamp",
    *_billing,
    *_customers,
    *_enums,
    *_events,
    *_other,
]

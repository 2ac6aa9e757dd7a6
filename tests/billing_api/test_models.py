"""Models: Decimal money from strings and numbers, lenient timestamps, extensible status enums
with the REQUESTED/CANCELLED rename, extras kept, secrets hidden; and money sent exactly."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from pydantic import ValidationError

from billing_api._exceptions import UnexpectedResponse
from billing_api.resources._core import body, json_value, money, parse_model, query
from billing_api.types import (
    Invoice,
    InvoiceStatus,
    OAuthTokenResponse,
    PaymentRequest,
    PaymentRequestStatus,
    WebhookSecret,
    parse_timestamp,
)

INVOICE = {
    "id": "inv-1",
    "invoiceNo": "INV-1",
    "status": "UNPAID",
    "totalAmount": "71.96",
    "taxAmount": "11.99",
    "dueAmount": "71.96",
    "creationTime": "2024-11-14T12:05:51.966UTC",
    "lastUpdatedTime": "2025-06-01T09:30:00Z",
    "items": [
        {
            "description": "Widget",
            "quantity": 3,
            "unitAmount": 19.99,
            "taxAmount": 11.99,
            "totalAmount": 71.96,
        }
    ],
    "somethingNew": {"nested": True},
}
PAYMENT_REQUEST = {
    "id": "pr-1",
    "paymentRequestNo": "PR-1",
    "status": "REQUESTED",
    "totalAmount": 100.1,
    "currencyCode": "GBP",
    "creationTime": 1730000000000,
}


def test_money_strings_and_numbers_become_exact_decimals() -> None:
    invoice = Invoice.model_validate(json.loads(json.dumps(INVOICE)))
    pr = PaymentRequest.model_validate(PAYMENT_REQUEST)

    assert invoice.total_amount == Decimal("71.96") and isinstance(invoice.total_amount, Decimal)
    assert invoice.items[0].unit_amount == Decimal("19.99")  # not 19.989999999999998...
    assert pr.total_amount == Decimal("100.1")


@pytest.mark.parametrize("bad", ["12,50", "abc", True, "NaN", [1]])
def test_bad_money_names_the_field(bad: object) -> None:
    with pytest.raises(ValidationError, match="totalAmount"):
        PaymentRequest.model_validate({**PAYMENT_REQUEST, "totalAmount": bad})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2019-08-24T14:15:22Z", datetime(2019, 8, 24, 14, 15, 22, tzinfo=UTC)),
        ("2024-11-14T12:05:51.966UTC", datetime(2024, 11, 14, 12, 5, 51, 966000, tzinfo=UTC)),
        ("2024-11-07T05:02:24.422", datetime(2024, 11, 7, 5, 2, 24, 422000, tzinfo=UTC)),
        ("2025-06-01T10:30:00+01:00", datetime(2025, 6, 1, 9, 30, tzinfo=UTC)),
        (1730000000000, datetime(2024, 10, 27, 3, 33, 20, tzinfo=UTC)),
        ("1730000000000", datetime(2024, 10, 27, 3, 33, 20, tzinfo=UTC)),
    ],
)
def test_timestamps_are_read_leniently_as_utc(text: object, expected: datetime) -> None:
    parsed = parse_timestamp(text)
    assert parsed == expected and parsed.tzinfo is UTC


@pytest.mark.parametrize("bad", ["yesterday", "2025-13-01T00:00:00Z", "2025-06-01T09:30Z UTC"])
def test_bad_timestamps_say_what_was_expected(bad: str) -> None:
    with pytest.raises(ValueError, match="not a timestamp"):
        parse_timestamp(bad)


@pytest.mark.parametrize(
    "far",
    [99999999999999999999, "99999999999999999999", float("inf"), "0001-01-01T00:30:00+01:00"],
)
def test_timestamps_beyond_a_datetime_are_a_value_error(far: object) -> None:
    # OverflowError and OSError escaped the callers that catch ValueError (a webhook's
    # timestamp header answered 500).
    with pytest.raises(ValueError, match="out of range"):
        parse_timestamp(far)


def test_unknown_statuses_are_kept_and_renamed_ones_mapped() -> None:
    invoice = Invoice.model_validate({**INVOICE, "status": "DISPUTED"})
    old = PaymentRequest.model_validate(PAYMENT_REQUEST)
    cancelled = PaymentRequest.model_validate({**PAYMENT_REQUEST, "status": "CANCELLED"})

    assert invoice.status == "DISPUTED" and not invoice.status.is_known
    assert invoice.model_dump(by_alias=True, mode="json")["status"] == "DISPUTED"
    assert old.status is PaymentRequestStatus.UNPAID and old.status.is_known
    assert cancelled.status is PaymentRequestStatus.VOID
    assert InvoiceStatus("PAID") is InvoiceStatus.PAID


def test_unknown_fields_are_kept_and_names_work_both_ways() -> None:
    invoice = Invoice.model_validate(INVOICE)
    assert invoice.model_extra == {"somethingNew": {"nested": True}}
    assert Invoice(**{**invoice.model_dump(), "invoice_no": "X"}).invoice_no == "X"


def test_secrets_in_answers_never_show() -> None:
    token = OAuthTokenResponse.model_validate(
        {
            "access_token": "a" * 40,
            "token_type": "Bearer",
            "expires_in": 60,
            "refresh_token": "r" * 40,
        }
    )
    secret = WebhookSecret.model_validate({"secretKey": "s" * 40})
    for shown in (repr(token), str(token), repr(secret), token.model_dump_json()):
        assert "a" * 40 not in shown and "r" * 40 not in shown and "s" * 40 not in shown


def test_an_answer_that_does_not_fit_names_the_field_but_not_the_value() -> None:
    with pytest.raises(UnexpectedResponse) as caught:
        parse_model(OAuthTokenResponse, {"access_token": "t" * 40}, "oauth.token")
    message = str(caught.value)
    assert "oauth.token" in message and "token_type" in message and "t" * 40 not in message


def test_money_is_sent_as_an_exact_json_number() -> None:
    sent = body(total_amount=Decimal("100.10"), items=[{"unitAmount": Decimal("19.99")}])
    assert json.dumps(sent) == '{"totalAmount": 100.1, "items": [{"unitAmount": 19.99}]}'
    assert json_value(Decimal("120")) == 120 and isinstance(json_value(Decimal("120")), int)
    with pytest.raises(ValueError, match="exact JSON number"):
        json_value(Decimal("12345678901234567.89"), "amount")


@pytest.mark.parametrize(
    ("value", "error", "reason"),
    [
        (19.99, TypeError, "never a float"),
        (Decimal("1.005"), ValueError, "2 decimal places"),
        ("12,50", ValueError, "not a decimal amount"),
        (Decimal("Infinity"), ValueError, "2 decimal places"),
    ],
)
def test_amount_arguments_are_checked(value: object, error: type[Exception], reason: str) -> None:
    with pytest.raises(error, match=f"amount.*{reason}|{reason}"):
        money(value, "amount")  # type: ignore[arg-type]


def test_query_parameters() -> None:
    since = datetime(2025, 6, 1, 10, 30, tzinfo=UTC)
    params = query(
        statuses=[PaymentRequestStatus.PAID, "VOID"],
        include_customer_financial_details=True,
        last_updated_start_time=since,
        search_text=None,
        sort="creationTime,desc",
    )
    assert params == {
        "statuses": ["PAID", "VOID"],
        "includeCustomerFinancialDetails": "true",
        "lastUpdatedStartTime": "2025-06-01T10:30:00Z",
        "sort": ["creationTime,desc"],
    }
    with pytest.raises(ValueError, match="no time zone"):
        query(last_updated_start_time=datetime(2025, 6, 1))

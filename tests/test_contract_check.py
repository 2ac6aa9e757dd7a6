"""The contract checker itself: it must reject what the contract does not allow (else the hook
on every test client would prove nothing)."""

from __future__ import annotations

import httpx
import pytest

from tests.support.contract_check import ContractViolation, check_response


def _response(method: str, path: str, status: int, json=None) -> httpx.Response:
    request = httpx.Request(method, f"http://sandbox/api{path}")
    return httpx.Response(status, json=json, request=request)


def test_a_body_that_breaks_the_schema_is_caught() -> None:
    with pytest.raises(ContractViolation, match="body breaks the contract"):
        check_response(_response("GET", "/biller", 200, {"id": 5, "name": []}))


def test_an_undeclared_status_is_caught() -> None:
    with pytest.raises(ContractViolation, match="not declared"):
        check_response(_response("GET", "/biller", 418, {"errors": [{"type": "TEAPOT"}]}))


def test_an_error_body_of_the_wrong_shape_is_caught() -> None:
    with pytest.raises(ContractViolation):
        check_response(_response("GET", "/biller", 401, {"detail": "Not authenticated"}))


def test_the_most_literal_template_wins() -> None:
    # /customers/directdebitmandates must not be taken for /customers/{id}
    with pytest.raises(ContractViolation, match="/customers/directdebitmandates "):
        check_response(_response("GET", "/customers/directdebitmandates", 418))
    with pytest.raises(ContractViolation, match=r"/invoices/\{id\}:void "):
        check_response(_response("PUT", "/invoices/abc:void", 418))


def test_a_conforming_answer_passes() -> None:
    check_response(_response("GET", "/biller", 401, {"errors": [{"type": "UNAUTHORIZED"}]}))

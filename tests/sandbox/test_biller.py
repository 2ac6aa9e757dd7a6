"""``GET /biller`` and ``PATCH /biller`` (JSON Patch), over HTTP."""

from __future__ import annotations

import pytest

from tests.support.sandbox_admin import SandboxAdmin

PATCH_TYPE = {"Content-Type": "application/json-patch+json"}


def _patch(admin: SandboxAdmin, tokens, body: str):
    return admin.api.patch("/biller", headers={**tokens.headers, **PATCH_TYPE}, content=body)


def test_biller_has_the_contract_fields(admin: SandboxAdmin, biller_token) -> None:
    biller = admin.api.get("/biller", headers=biller_token.headers).json()
    for field in (
        "id",
        "name",
        "statementName",
        "alias",
        "currencyCode",
        "countryCode",
        "timezone",
        "status",
        "channelBillerId",
        "creationTime",
        "lastUpdatedTime",
        "paymentDetails",
        "bankAccounts",
        "locations",
    ):
        assert field in biller
    assert biller["currencyCode"] == "GBP"
    assert biller["creationTime"].endswith("Z")


def test_patch_replaces_fields_and_persists(admin: SandboxAdmin, biller_token) -> None:
    before = admin.api.get("/biller", headers=biller_token.headers).json()
    response = _patch(
        admin,
        biller_token,
        """[
        {"op": "replace", "path": "/statementName", "value": "ACME LTD"},
        {"op": "add", "path": "/locations/-", "value": {"city": "Leeds"}},
        {"op": "test", "path": "/name", "value": "Test Biller Ltd"}
    ]""",
    )

    assert response.status_code == 200, response.text
    after = admin.api.get("/biller", headers=biller_token.headers).json()
    assert after["statementName"] == "ACME LTD"
    assert after["locations"] == [{"city": "Leeds"}]
    assert after["lastUpdatedTime"] >= before["lastUpdatedTime"]
    assert after["id"] == before["id"]


@pytest.mark.parametrize("path", ["/id", "/status", "/channelBillerId", "/creationTime"])
def test_read_only_fields_are_refused(admin: SandboxAdmin, biller_token, path) -> None:
    response = _patch(admin, biller_token, f'[{{"op": "replace", "path": "{path}", "value": "x"}}]')
    assert response.status_code == 400
    assert response.json()["errors"][0]["type"] == "READ_ONLY_FIELD"


@pytest.mark.parametrize(
    ("body", "status", "error_type", "field"),
    [
        (
            '[{"op": "replace", "path": "/statementName", "value": "' + "x" * 23 + '"}]',
            422,
            "VALIDATION_ERROR",
            "statementName",
        ),
        (
            '[{"op": "replace", "path": "/alias", "value": "' + "y" * 51 + '"}]',
            422,
            "VALIDATION_ERROR",
            "alias",
        ),
        (
            '[{"op": "replace", "path": "/billingEmail", "value": "not-an-email"}]',
            422,
            "VALIDATION_ERROR",
            "billingEmail",
        ),
        (
            '[{"op": "add", "path": "/favouriteColour", "value": "blue"}]',
            422,
            "VALIDATION_ERROR",
            "favouriteColour",
        ),
        ('[{"op": "remove", "path": "/name"}]', 422, "VALIDATION_ERROR", "name"),
        ('[{"op": "test", "path": "/name", "value": "Someone Else"}]', 400, "BAD_REQUEST", None),
        ('[{"op": "replace", "path": "/nope/deeper", "value": 1}]', 400, "BAD_REQUEST", None),
        ('[{"op": "frobnicate", "path": "/name"}]', 400, "BAD_REQUEST", None),
        ('[{"op": ', 400, "BAD_REQUEST", None),
        ('{"op": "replace"}', 422, "VALIDATION_ERROR", None),
    ],
)
def test_bad_patches_are_refused_and_change_nothing(
    admin: SandboxAdmin, biller_token, body, status, error_type, field
) -> None:
    before = admin.api.get("/biller", headers=biller_token.headers).json()

    response = _patch(admin, biller_token, body)

    assert response.status_code == status, response.text
    error = response.json()["errors"][0]
    assert error["type"] == error_type
    assert error.get("field") == field
    assert admin.api.get("/biller", headers=biller_token.headers).json() == before


def test_biller_that_no_longer_exists_is_404(admin: SandboxAdmin, tmp_path) -> None:
    from tests.support.sandbox_admin import running_sandbox

    with running_sandbox(f"sqlite:///{tmp_path}/s.db") as own:
        tokens = own.connect_biller()
        # Delete the biller behind the token's back, as the real service might for a closed account.
        import sqlalchemy as sa

        engine = sa.create_engine(f"sqlite:///{tmp_path}/s.db")
        with engine.begin() as conn:
            conn.execute(sa.text("PRAGMA foreign_keys=OFF"))
            conn.execute(sa.text("DELETE FROM billers"))
        engine.dispose()
        response = own.api.get("/biller", headers=tokens.headers)
    assert response.status_code == 404
    assert response.json()["errors"][0]["type"] == "NOT_FOUND"


@pytest.mark.parametrize("path", ["", "/"])
def test_patching_the_whole_record_is_refused(admin: SandboxAdmin, biller_token, path) -> None:
    response = _patch(admin, biller_token, f'[{{"op": "replace", "path": "{path}", "value": 1}}]')
    assert response.status_code == 400
    assert response.json()["errors"][0]["type"] == "BAD_REQUEST"

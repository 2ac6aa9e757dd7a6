"""The contract's error bodies, rendered in one place.

API errors answer ``{"errors": [{"type", "detail"?, "field"?}]}``; the token and revoke endpoints
answer RFC 6749's ``{"error", "error_description"}``. Routes raise :class:`ApiError` or
:class:`OAuthError`; the handlers registered by :func:`install_error_handlers` write the bodies.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

# errors[].type values; the contract lists them under its error conventions.
BAD_REQUEST = "BAD_REQUEST"
VALIDATION_ERROR = "VALIDATION_ERROR"
UNAUTHORIZED = "UNAUTHORIZED"
FORBIDDEN = "FORBIDDEN"
NOT_FOUND = "NOT_FOUND"
METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
INVALID_STATE = "INVALID_STATE"
READ_ONLY_FIELD = "READ_ONLY_FIELD"
INTERNAL_ERROR = "INTERNAL_ERROR"


class ApiError(Exception):
    """An API error answered with the contract's ``errors`` body."""

    def __init__(
        self,
        status: int,
        type_: str,
        detail: str | None = None,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status} {type_}: {detail}")
        self.status = status
        self.type = type_
        self.detail = detail
        self.field = field
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"type": self.type}
        if self.detail:
            error["detail"] = self.detail
        if self.field:
            error["field"] = self.field
        return {"errors": [error]}


class OAuthError(Exception):
    """An RFC 6749 error of the token or revoke endpoint."""

    def __init__(
        self,
        error: str,
        description: str,
        *,
        status: int = 400,
        basic_challenge: bool = False,
        owner: str | None = None,
    ) -> None:
        super().__init__(f"{error}: {description}")
        self.owner = owner  # the biller or app the failed request belongs to, for the counters
        self.error = error
        self.description = description
        self.status = status
        self.basic_challenge = basic_challenge


def unauthorized(detail: str) -> ApiError:
    return ApiError(401, UNAUTHORIZED, detail, headers={"WWW-Authenticate": "Bearer"})


def forbidden(detail: str) -> ApiError:
    return ApiError(403, FORBIDDEN, detail)


def not_found(what: str) -> ApiError:
    return ApiError(404, NOT_FOUND, f"{what} not found")


def _api_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)


def _oauth_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, OAuthError)
    headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}
    if exc.basic_challenge:
        headers["WWW-Authenticate"] = 'Basic realm="sandbox"'
    body = {"error": exc.error, "error_description": exc.description}
    return JSONResponse(body, status_code=exc.status, headers=headers)


def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's request validation in the contract's terms (its error convention 9): an
    unreadable body or a bad query/path parameter is a 400 ``BAD_REQUEST``; a readable body that
    breaks a rule is a 422 ``VALIDATION_ERROR``. ``field`` names the offender either way."""
    assert isinstance(exc, RequestValidationError)
    errors = []
    status = 422
    for err in exc.errors():
        where, *path = list(err.get("loc", ())) or ["body"]
        entry: dict[str, str] = {"type": VALIDATION_ERROR, "detail": str(err.get("msg", "invalid"))}
        if err.get("type") == "json_invalid":
            entry = {"type": BAD_REQUEST, "detail": "the request body is not valid JSON"}
        elif where in ("query", "path", "header"):
            entry["type"] = BAD_REQUEST
        if entry["type"] == BAD_REQUEST:
            status = 400
        if path and err.get("type") != "json_invalid":
            entry["field"] = field_path(path)
        errors.append(entry)
    return JSONResponse({"errors": errors}, status_code=status)


def field_path(parts: list[Any] | tuple[Any, ...]) -> str:
    """The contract's dotted field path: ``items[0].quantity`` from ``("items", 0, "quantity")``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_STATUS_TYPES = {400: BAD_REQUEST, 401: UNAUTHORIZED, 403: FORBIDDEN, 404: NOT_FOUND}


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _allowed_methods(request: Request) -> str:
    """Every method some route answers on this path (Starlette names only the first route's)."""
    allowed = []
    for method in _METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] == Match.FULL for route in request.app.router.routes):
            allowed.append(method)
    return ", ".join(allowed)


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own errors (unknown path, wrong method) in the contract's shape."""
    assert isinstance(exc, StarletteHTTPException)
    type_ = _STATUS_TYPES.get(
        exc.status_code, METHOD_NOT_ALLOWED if exc.status_code == 405 else INTERNAL_ERROR
    )
    body = {"errors": [{"type": type_, "detail": str(exc.detail)}]}
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = _allowed_methods(request)
    return JSONResponse(body, status_code=exc.status_code, headers=headers)


def _unexpected(_request: Request, _exc: Exception) -> JSONResponse:
    body = {"errors": [{"type": INTERNAL_ERROR, "detail": "the sandbox failed; see its log"}]}
    return JSONResponse(body, status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(OAuthError, _oauth_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)

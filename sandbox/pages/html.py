"""Small HTML building blocks of the sandbox's hosted pages (consent, mandate signing, card
payment).

Everything shown is escaped here: names and descriptions come from API clients and payers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from html import escape

from fastapi.responses import HTMLResponse

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}"
    "fieldset{border:1px solid #ccc;padding:1rem}button{font-size:1rem;margin-right:.5rem}"
    "label{display:block;margin-top:.8rem}input[type=text]{font-size:1rem;width:100%}"
    ".check label{display:inline}.error{color:#a00}.hint{color:#555;font-size:.9rem}"
    "table{border-collapse:collapse}td,th{padding:.2rem .6rem;text-align:left}"
)


def page(title: str, body: str, status: int = 200) -> HTMLResponse:
    """A whole page; ``body`` is HTML already escaped by the caller."""
    html = (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}"
        f"</title><style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(html, status_code=status)


def message(title: str, text: str, status: int = 200, done: bool = False) -> HTMLResponse:
    """A page with one paragraph (``id='done'`` on a finished step, for browser tests)."""
    marker = " id='done'" if done else " id='message'"
    return page(title, f"<p{marker}>{escape(text)}</p>", status)


def not_found(what: str) -> HTMLResponse:
    return page("Not found", f"<p class='error' role='alert'>No such {escape(what)}.</p>", 404)


def error_line(name: str, errors: Mapping[str, str]) -> str:
    if name not in errors:
        return ""
    return f"<p class='error' id='{name}-error' role='alert'>{escape(errors[name])}</p>"


def text_field(name: str, label: str, value: str, errors: Mapping[str, str], **attrs: str) -> str:
    """A labelled text input with its error (if any) right after it."""
    extra = "".join(f" {key}='{escape(val, quote=True)}'" for key, val in attrs.items())
    described = f" aria-invalid='true' aria-describedby='{name}-error'" if name in errors else ""
    return (
        f"<label for='{name}'>{escape(label)}</label>"
        f"<input type='text' id='{name}' name='{name}' value='{escape(value, quote=True)}'"
        f"{extra}{described}>{error_line(name, errors)}"
    )


FieldSpecs = tuple[tuple[str, str, dict[str, str]], ...]


def text_fields(specs: FieldSpecs, values: Mapping[str, str], errors: Mapping[str, str]) -> str:
    """The text inputs of ``specs`` (name, label, attributes), filled with ``values``."""
    return "".join(
        text_field(name, label, values.get(name, ""), errors, **attrs)
        for name, label, attrs in specs
    )


def checkbox(name: str, label: str, checked: bool, errors: Mapping[str, str]) -> str:
    mark = " checked" if checked else ""
    return (
        f"<p class='check'><input type='checkbox' id='{name}' name='{name}' value='yes'{mark}> "
        f"<label for='{name}'>{escape(label)}</label></p>{error_line(name, errors)}"
    )


def hidden(name: str, value: str | None) -> str:
    if value is None:
        return ""
    return f"<input type='hidden' name='{name}' value='{escape(value, quote=True)}'>"


def alert(text: str | None) -> str:
    return f"<p class='error' id='form-error' role='alert'>{escape(text)}</p>" if text else ""


def table(caption: str, head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    cells = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    header = "".join(f"<th>{escape(cell)}</th>" for cell in head)
    return (
        f"<table class='hint'><caption>{escape(caption)}</caption><tr>{header}</tr>{cells}</table>"
    )


def pounds(amount: Decimal) -> str:
    return f"£{amount:,.2f}"


def escape_text(text: str) -> str:
    return escape(text, quote=False)


def escape_attr(text: str) -> str:
    return escape(text, quote=True)

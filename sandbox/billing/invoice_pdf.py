"""The invoice document: a small, valid one-page PDF written by hand (no PDF library).

It shows what the API shows (rendered from the contract's ``Invoice``): number, dates, status,
customer, lines, tax and totals; a DRAFT carries a large grey "DRAFT" watermark. Text uses the
standard Helvetica fonts in WinAnsiEncoding (Latin-1 covers £); other characters become "?".
"""

from __future__ import annotations

from typing import Any

PAGE_WIDTH, PAGE_HEIGHT = 595, 842  # A4 in points
MAX_LINES_SHOWN = 30


def _escape(text: str) -> bytes:
    printable = "".join(ch if ch.isprintable() else " " for ch in text)
    raw = printable.encode("latin-1", errors="replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _cut(text: str | None, width: int) -> str:
    text = text or ""
    return text if len(text) <= width else text[: width - 3] + "..."


class _Page:
    """Content-stream commands for one page."""

    def __init__(self) -> None:
        self.ops: list[bytes] = []

    def text(self, x: float, y: float, text: str, *, size: int = 10, bold: bool = False) -> None:
        font = b"/F2" if bold else b"/F1"
        self.ops.append(
            b"BT " + font + b" %d Tf %.2f %.2f Td (" % (size, x, y) + _escape(text) + b") Tj ET"
        )

    def right(self, x: float, y: float, text: str, *, size: int = 10, bold: bool = False) -> None:
        # Helvetica digits are 0.556 em wide; close enough to right-align amounts.
        self.text(x - len(text) * size * 0.556, y, text, size=size, bold=bold)

    def rule(self, y: float) -> None:
        self.ops.append(b"0.5 w 50 %.2f m %d %.2f l S" % (y, PAGE_WIDTH - 50, y))

    def watermark(self, word: str) -> None:
        self.ops.append(
            b"q 0.85 g BT /F2 120 Tf 0.7071 0.7071 -0.7071 0.7071 170 260 Tm ("
            + _escape(word)
            + b") Tj ET Q"
        )


def _header(page: _Page, invoice: dict[str, Any]) -> float:
    customer = invoice.get("customer") or {}
    page.text(50, 790, f"Invoice {invoice['invoiceNo']}", size=20, bold=True)
    page.text(50, 765, f"Status: {invoice['status']}")
    page.text(
        50, 750, f"Issue date: {invoice.get('issueDate')}   Due date: {invoice.get('dueDate')}"
    )
    page.text(50, 725, "Bill to", bold=True)
    page.text(50, 710, _cut(customer.get("name"), 80))
    if invoice.get("description"):
        page.text(50, 690, _cut(invoice["description"], 95))
    return 665


def _lines(page: _Page, invoice: dict[str, Any], y: float) -> float:
    for x, label in (
        (50, "Description"),
        (330, "Qty"),
        (380, "Unit"),
        (440, "Tax"),
        (500, "Total"),
    ):
        page.text(x, y, label, bold=True)
    page.rule(y - 5)
    y -= 20
    items = invoice.get("items") or []
    for item in items[:MAX_LINES_SHOWN]:
        page.text(50, y, _cut(item.get("description"), 50))
        page.text(330, y, str(item.get("quantity")))
        page.text(380, y, f"{item.get('unitAmount')}")
        page.text(440, y, f"{item.get('taxAmount')}")
        page.right(545, y, f"{item.get('totalAmount')}")
        y -= 15
    if len(items) > MAX_LINES_SHOWN:
        page.text(50, y, f"... and {len(items) - MAX_LINES_SHOWN} more lines")
        y -= 15
    return y


def _totals(page: _Page, invoice: dict[str, Any], y: float) -> None:
    page.rule(y + 5)
    y -= 15
    for label, key in (("Tax", "taxAmount"), ("Total", "totalAmount"), ("Paid", "paidAmount")):
        page.text(380, y, f"{label} ({invoice.get('currencyCode', 'GBP')})")
        page.right(545, y, str(invoice.get(key)))
        y -= 15
    page.text(380, y, "Amount due", bold=True)
    page.right(545, y, f"\u00a3{invoice.get('dueAmount')}", bold=True)


def _assemble(objects: list[bytes]) -> bytes:
    """A PDF file from its numbered objects (1-based), with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 7 0 R >>\n" % (len(objects) + 1)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def invoice_pdf(invoice: dict[str, Any]) -> bytes:
    """The PDF of a rendered invoice (the contract's ``Invoice`` dict)."""
    page = _Page()
    if invoice.get("status") == "DRAFT":
        page.watermark("DRAFT")
    y = _lines(page, invoice, _header(page, invoice))
    _totals(page, invoice, y)
    content = b"\n".join(page.ops)
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding >>"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] " % (PAGE_WIDTH, PAGE_HEIGHT)
        + b"/Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 6 0 R >>",
        font % b"Helvetica",
        font % b"Helvetica-Bold",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Title ("
        + _escape(f"Invoice {invoice['invoiceNo']}")
        + b") /Producer (billops sandbox) >>",
    ]
    return _assemble(objects)

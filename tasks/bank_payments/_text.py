"""From a file's bytes to UTF-8 bytes the CSV reader takes: refuse what is not a text export, then
settle the encoding and the line endings.

Spreadsheets, web pages and PDFs saved under a ``.csv`` name are named for what they are. The
decoding is the shared finance-file reading of the payment-request job (UTF-8 with or without
BOM, UTF-16 with a BOM, else Windows-1252); this module adds what bank downloads need on top:
UTF-16 without a BOM (some banks' "Unicode" export), NUL bytes named by line, and old Mac CR-only
line endings turned into newlines.

A statement can be a million lines, so a UTF-8 file (nearly all of them) is never turned into a
Python string: its bytes go to Arrow's CSV reader as they are, which checks them as UTF-8 on the
way; only a file that turns out not to be UTF-8 is decoded whole (:meth:`StatementText.recoded`).
The bytes may be a numpy buffer (``_file_bytes``): only the start of the file is taken as
``bytes`` then, and the whole file only on the rare paths (another encoding, a NUL, CR endings).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

import numpy as np

from tasks.bank_payments._errors import StatementRefused
from tasks.bank_payments._file_bytes import Buffer, holds, prefix, whole
from tasks.common.finance_files import InputFileError
from tasks.common.finance_files.table import _decode as decode_finance_text

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "an Excel .xlsx workbook (a zip archive)"),
    (b"\xd0\xcf\x11\xe0", "an old Excel .xls workbook"),
    (b"%PDF", "a PDF document"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"{\\rtf", "a rich-text (RTF) document"),
)
_HTML = re.compile(rb"^\s*(<!doctype html|<html|<table|<\?xml|<head|<body)", re.IGNORECASE)
_SAVE_AS = "export the statement from the bank again as CSV (or save it as 'CSV UTF-8') and drop it"
HEAD_BYTES = 256 * 1024


@dataclass(frozen=True)
class StatementText:
    """A statement's content as UTF-8 bytes (no BOM, lines ending in ``\\n`` or ``\\r\\n``);
    ``quotes`` is false only for content known to hold no quote mark (no need to look again)."""

    data: Buffer
    encoding: str
    where: str
    quotes: bool = True

    def head(self) -> str:
        """The start of the file as text (enough for detection), cut at a line end."""
        chunk = prefix(self.data, HEAD_BYTES)
        if len(self.data) > HEAD_BYTES:
            chunk = chunk[: chunk.rfind(b"\n") + 1] or chunk
        return _lf(chunk.decode("utf-8", errors="replace"))

    def text(self) -> str:
        """The whole file as text (for the small labelled-record exports)."""
        return _lf(whole(self.data).decode("utf-8", errors="replace"))

    def recoded(self) -> StatementText:
        """The file decoded by the shared reader after Arrow found bytes that are not UTF-8."""
        text, encoding = _shared_decode(whole(self.data), self.where)
        return StatementText(_lf(text).encode("utf-8"), encoding, self.where)


def sniff_binary(data: bytes, where: str) -> None:
    """Refuse files that are not text exports, saying what they are."""
    head = data[:2048].lstrip(codecs.BOM_UTF8)
    for magic, what in _SIGNATURES:
        if head.startswith(magic):
            raise StatementRefused(where, None, f"is {what}, not a CSV text file; {_SAVE_AS}")
    if _HTML.match(head):
        raise StatementRefused(
            where,
            None,
            f"is a web page (HTML), not a CSV file (some banks' 'Excel' export); {_SAVE_AS}",
        )


def _utf16_without_bom(data: bytes) -> str | None:
    """UTF-16 text without a byte-order mark: every other byte NUL in the first kilobyte."""
    sample = data[:1024]
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    codec = None
    if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
        codec = "utf-16-le"
    elif even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
        codec = "utf-16-be"
    if codec is None:
        return None
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        return None


def _shared_decode(data: bytes, where: str) -> tuple[str, str]:
    try:
        text, encoding = decode_finance_text(data, where=where)
    except InputFileError as exc:
        raise StatementRefused(where, None, str(exc).removeprefix(f"{where}: ")) from exc
    return text.lstrip("\ufeff"), encoding


def _head_is_utf8(data: Buffer) -> bool:
    chunk = prefix(data, HEAD_BYTES)
    if len(data) > HEAD_BYTES:
        chunk = chunk[: chunk.rfind(b"\n") + 1] or chunk[:-4]
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def statement_text(data: Buffer, where: str) -> StatementText:
    """The file's content ready for reading (see the module docstring)."""
    head = prefix(data, 65536)
    sniff_binary(head, where)
    if not head.strip() and not whole(data).strip():
        raise StatementRefused(where, None, "is empty: no header and no statement lines")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text, encoding = _shared_decode(whole(data), where)
        return StatementText(_lf(text).encode("utf-8"), encoding, where)
    # One look through the file for the three bytes that send it down another path.
    nul, cr, quote = holds(data, b"\x00", b"\r", b'"')
    if nul:
        data = whole(data)
        decoded = _utf16_without_bom(data)
        if decoded is not None:
            return StatementText(_lf(decoded).encode("utf-8"), "utf-16 (no BOM)", where)
        position = data.index(b"\x00")
        line = data.count(b"\n", 0, position) + 1
        raise StatementRefused(
            where, line, "contains a NUL byte: the file is damaged or binary, not a bank export"
        )
    if head.startswith(codecs.BOM_UTF8):
        # An array's slice is a view: the file is not copied to leave out its three bytes.
        body = data[len(codecs.BOM_UTF8) :]
        return StatementText(_lf_bytes(body, cr), "utf-8-sig", where, quote)
    if not _head_is_utf8(data):
        text, encoding = _shared_decode(whole(data), where)
        return StatementText(_lf(text).encode("utf-8"), encoding, where)
    return StatementText(_lf_bytes(data, cr), "utf-8", where, quote)


def _lf(text: str) -> str:
    if "\r" not in text:
        return text
    if "\n" not in text:
        return text.replace("\r", "\n")  # classic Mac line endings
    return text.replace("\r\n", "\n")


def _lf_bytes(data: Buffer, cr: bool) -> Buffer:
    """Line ends as ``\\n`` (``cr``: whether ``data`` holds a carriage return at all)."""
    if not cr:
        return data
    if _crlf_only(data):
        # Every CR starts a CRLF, so replacing CRLF by LF only drops the CRs: ``bytes.replace``
        # of one byte (memchr) cost 2 ms for a 5.6 MB statement of 100,000 lines, where that of
        # two bytes cost 13 (finding the CRs and looking after each, 3 ms more).
        return whole(data).replace(b"\r", b"")
    data = whole(data)
    if b"\n" not in data:
        return data.replace(b"\r", b"\n")
    return data.replace(b"\r\n", b"\n")


def _crlf_only(data: Buffer) -> bool:
    """Whether every carriage return in ``data`` is followed by a newline."""
    every = np.frombuffer(data, dtype=np.uint8)
    after = np.flatnonzero(every == ord("\r")) + 1
    return (
        bool(len(after)) and int(after[-1]) < len(every) and bool((every[after] == ord("\n")).all())
    )


def decode_statement(data: Buffer, where: str) -> tuple[str, str]:
    """The start of the file as text (newlines normalised) and its encoding."""
    prepared = statement_text(data, where)
    return prepared.head(), prepared.encoding

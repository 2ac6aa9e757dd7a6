"""Reading the ``file`` argument of a multipart upload (bulk import)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

__all__ = ["FileArg", "read_upload"]

FileArg = bytes | str | os.PathLike[str] | IO[bytes]
"""The file's bytes, a path to it, or a binary file object open for reading."""
DEFAULT_NAME = "payment_requests.csv"


def read_upload(file: FileArg, filename: str | None) -> tuple[str, bytes]:
    """``(filename, content)``: read now, so a retried request sends the same bytes again."""
    if isinstance(file, bytes | bytearray):
        return filename or DEFAULT_NAME, bytes(file)
    if isinstance(file, str | os.PathLike):
        path = Path(file)
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"file {str(path)!r}: cannot read it: {exc.strerror}") from None
        return filename or path.name, content
    content = file.read()
    if not isinstance(content, bytes):
        raise TypeError("file: open the file in binary mode ('rb'); it gave text, not bytes")
    name = getattr(file, "name", None)
    default = os.path.basename(name) if isinstance(name, str) and name else DEFAULT_NAME
    return filename or default, content

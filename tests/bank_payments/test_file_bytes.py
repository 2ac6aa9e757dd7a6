"""A statement read from its file (the bytes in a numpy buffer, ``_file_bytes``) reads exactly as
the same bytes handed over as ``bytes``: every hostile file is refused with the same line and
reason, every readable one gives the same lines; and the buffer's byte questions (find, holds,
prefix) answer as ``bytes``' own do, across the blocks they are asked in."""

from __future__ import annotations

import codecs
import os
import random
import threading
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tasks.bank_payments import StatementRefused, read_statement, read_statement_bytes
from tasks.bank_payments import _file_bytes as file_bytes
from tasks.bank_payments._text import statement_text
from tests.bank_payments.test_hostile_files import CASES, GOOD, STARLING

DATA = Path(__file__).resolve().parents[1] / "data" / "bank"
TODAY = date(2026, 11, 24)
LATE = 300_000  # bytes: past the start of the file the reader decodes, and many blocks long


def _lines(count: int) -> str:
    return "".join(GOOD.replace("INV-0042", f"INV-{n}") for n in range(count))


def _long(last: bytes) -> bytes:
    """A Starling file of over ``LATE`` bytes whose last line is ``last``."""
    data = (STARLING + _lines(LATE // 50)).encode() + last
    assert len(data) > LATE
    return data


# Each file the reader may meet, as bytes: line ends, byte-order marks, NULs, other encodings,
# bytes that are not UTF-8 late in the file, empty ones.


def _as_bytes(data: object) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)  # type: ignore[call-overload]


FILES: list[tuple[str, bytes]] = [
    *((str(case[0]), _as_bytes(case[1])) for case in CASES),
    ("CRLF", (STARLING + GOOD + GOOD).replace("\n", "\r\n").encode()),
    ("CR only", (STARLING + GOOD + GOOD).replace("\n", "\r").encode()),
    ("CRLF and a lone CR", (STARLING + GOOD).replace("\n", "\r\n").encode() + GOOD.encode()),
    ("UTF-8 BOM", codecs.BOM_UTF8 + (STARLING + GOOD).encode()),
    ("UTF-8 BOM and CRLF", codecs.BOM_UTF8 + (STARLING + GOOD).replace("\n", "\r\n").encode()),
    ("UTF-16 LE BOM", (STARLING + GOOD).encode("utf-16")),
    ("UTF-16 BE BOM", codecs.BOM_UTF16_BE + (STARLING + GOOD).encode("utf-16-be")),
    ("UTF-16 without BOM", (STARLING + GOOD).encode("utf-16-le")),
    ("Windows-1252", (STARLING + GOOD.replace("Acme", "Café Acme")).encode("cp1252")),
    ("NUL late", _long(b"03/11/2026,Ac\x00me,INV-9,FASTER PAYMENT,1.00,2.00,,\n")),
    ("not UTF-8 late", _long("03/11/2026,Café,INV-9,FP,1.00,2.00,,\n".encode("cp1252"))),
    ("not UTF-8 late, unread column", _long("03/11/2026,A,I,T,1.00,2.00,,é\n".encode("cp1252"))),
    ("CR late", _long(b"03/11/2026,Acme,INV-9,FASTER PAYMENT,1.00,2.00,,\r\n")),
    ("quote late", _long(b'03/11/2026,"Acme, Ltd",INV-9,FASTER PAYMENT,1.00,2.00,,\n')),
    ("open quote late", _long(b'03/11/2026,"Acme,INV-9,FASTER PAYMENT,1.00,2.00,,\n')),
    ("only spaces", b" \n \t\n"),
    ("long and unterminated last line", _long(b"03/11/2026,Acme,INV-9,FASTER PAYMENT,1.00,2.00,,")),
    *((path.name, path.read_bytes()) for path in sorted(DATA.glob("*.*"))),
]


def _outcome(read: Any) -> tuple[Any, ...]:
    """What reading gave: the refusal (file, line, reason), or every part of the statement."""
    try:
        statement = read()
    except StatementRefused as refused:
        return ("refused", type(refused).__name__, refused.file, refused.line, refused.reason)
    return (
        "read",
        statement.sha256,
        statement.encoding,
        statement.detection,
        statement.lines.to_pylist(),
        statement.lines.schema,
        statement.bad_lines,
        statement.skipped,
        statement.balance_issues,
    )


@pytest.mark.parametrize(("kind", "data"), FILES, ids=[f[0] for f in FILES])
@pytest.mark.parametrize("block", [7, file_bytes.BLOCK])
def test_a_file_reads_as_its_bytes_do(
    tmp_path: Path, kind: str, data: bytes, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_bytes, "BLOCK", block)  # the byte questions block by block
    path = tmp_path / "statement.csv"
    path.write_bytes(data)
    buffer = np.frombuffer(data, dtype=np.uint8)
    for on_bad_lines in ("reject_file", "skip"):
        options: dict[str, Any] = {"today": TODAY, "on_bad_lines": on_bad_lines}
        as_bytes = _outcome(lambda o=options: read_statement_bytes(data, where=str(path), **o))
        as_file = _outcome(lambda o=options: read_statement(path, **o))
        as_buffer = _outcome(lambda o=options: read_statement_bytes(buffer, where=str(path), **o))
        assert as_file == as_bytes, kind
        assert as_buffer == as_bytes, kind


@pytest.mark.parametrize(("kind", "data"), FILES, ids=[f[0] for f in FILES])
def test_the_text_made_of_a_buffer_is_the_text_made_of_bytes(kind: str, data: bytes) -> None:
    try:
        wanted = statement_text(data, "s.csv")
    except StatementRefused as refused:
        with pytest.raises(StatementRefused) as caught:
            statement_text(np.frombuffer(data, dtype=np.uint8), "s.csv")
        assert (caught.value.line, caught.value.reason) == (refused.line, refused.reason)
        return
    found = statement_text(np.frombuffer(data, dtype=np.uint8), "s.csv")
    assert file_bytes.whole(found.data) == file_bytes.whole(wanted.data)
    assert (found.encoding, found.head()) == (wanted.encoding, wanted.head())
    # "no quote" is said only of content without one
    assert found.quotes or b'"' not in file_bytes.whole(found.data)


def test_the_file_is_read_whole(tmp_path: Path) -> None:
    for size in (0, 1, 4095, 4096, 1 << 20, (1 << 22) + 3):
        data = random.Random(size).randbytes(size)
        path = tmp_path / f"{size}.bin"
        path.write_bytes(data)
        buffer = file_bytes.read_file(path)
        assert buffer.dtype == np.uint8
        assert buffer.tobytes() == path.read_bytes() == data


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_read_to_its_end(tmp_path: Path) -> None:
    """A file whose size says nothing (a pipe, a file in /proc) is read to its end."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    data = (STARLING + GOOD * 1000).encode()
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    try:
        assert file_bytes.read_file(fifo).tobytes() == data
    finally:
        writer.join()


def test_a_folder_is_refused_as_before(tmp_path: Path) -> None:
    with pytest.raises(StatementRefused) as caught:
        read_statement(tmp_path, today=TODAY)
    assert caught.value.reason == "cannot be read (Is a directory)"
    with pytest.raises(StatementRefused) as missing:
        read_statement(tmp_path / "missing.csv", today=TODAY)
    assert missing.value.reason == "cannot be read (No such file or directory)"


@pytest.mark.parametrize("block", [1, 2, 5, 64, file_bytes.BLOCK])
def test_the_byte_questions_answer_as_bytes_do(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_bytes, "BLOCK", block)
    rng = random.Random(block)
    for size in (0, 1, 3, 17, 200):
        data = bytes(rng.choice(b'ab\r\n\x00"') for _ in range(size))
        buffer = np.frombuffer(data, dtype=np.uint8)
        for needle in (b"\x00", b"\r", b'"', b"\n", b"\r\n", b"ab", b"z"):
            for start in (0, 1, 5, size):
                assert file_bytes.find(buffer, needle, start) == data.find(needle, start)
                assert file_bytes.find(data, needle, start) == data.find(needle, start)
        needles = (b"\x00", b"\r", b'"', b"z", b"\r\n")
        wanted = tuple(n in data for n in needles)
        assert file_bytes.holds(buffer, *needles) == file_bytes.holds(data, *needles) == wanted
        for count in (0, 1, 4, size + 1):
            assert file_bytes.prefix(buffer, count) == data[:count]
        assert file_bytes.whole(buffer) == data


def test_a_buffer_of_a_file_cut_short_is_what_was_read(tmp_path: Path) -> None:
    """The buffer handed on is only the bytes read (a file that shrank while it was read)."""
    path = tmp_path / "s.csv"
    path.write_bytes(b"x" * 100)
    real_fstat = os.fstat

    class Larger:
        def __init__(self, stat: os.stat_result) -> None:
            self.st_size = stat.st_size + 50

    def larger(fd: int) -> Any:
        return Larger(real_fstat(fd))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fstat", larger)
        buffer = file_bytes.read_file(path)
    assert buffer.tobytes() == b"x" * 100

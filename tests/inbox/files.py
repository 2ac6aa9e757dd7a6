"""Files people drop: payment-request lists, bank statements, broken and half-written files."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tests.support.import_billers import ImportBiller, write_rows

BANK_HEADER = "Date,Type,Counterparty,Reference,Amount,Balance\r\n"


def payment_requests(path: Path, biller: ImportBiller, tag: str, rows: int = 2) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_rows(path, biller, rows, prefix=tag)


def bank_statement(path: Path, tag: int) -> Path:
    """A generic-layout statement: spending and a credit nobody owes (nothing to record)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"2026-11-0{1 + tag % 8},DEBIT,Office Supplies {tag},Stationery,-{12 + tag}.50,1000.00",
        f"2026-11-0{2 + tag % 7},CREDIT,Unknown Payer {tag},GIFT {tag},{30 + tag}.00,1030.00",
    ]
    path.write_bytes((BANK_HEADER + "\r\n".join(lines) + "\r\n").encode())
    return path


def garbage(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(range(256)) * 8)
    return path


def slowly(path: Path, content: bytes, pieces: int = 8, pause: float = 0.3) -> threading.Thread:
    """Write ``content`` into ``path`` a piece at a time (pauses shorter than the settle time)."""

    def write() -> None:
        size = -(-len(content) // pieces)
        with path.open("wb") as out:
            for start in range(0, len(content), size):
                out.write(content[start : start + size])
                out.flush()
                time.sleep(pause)

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def via_temporary_name(path: Path, content: bytes, delay: float = 1.5) -> threading.Thread:
    """Write under ``<name>.part`` then rename, as browsers and sync tools do."""

    def write() -> None:
        temporary = path.with_name(path.name + ".part")
        temporary.write_bytes(content[: len(content) // 2])
        time.sleep(delay)
        with temporary.open("ab") as out:
            out.write(content[len(content) // 2 :])
        temporary.rename(path)

    thread = threading.Thread(target=write)
    thread.start()
    return thread

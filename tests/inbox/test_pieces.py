"""The inbox's pieces on real files, without a server: names, completeness, claims and locks,
settings, classification, putting away, status."""

from __future__ import annotations

import fcntl
import os
import time
from datetime import date
from pathlib import Path

import pytest

from tasks.inbox.claim import claim, put_away, resume
from tasks.inbox.classify import Unclassifiable, classify
from tasks.inbox.layout import FileKind, Waiting, complete, ignored, processing_files, waiting_files
from tasks.inbox.settings import InboxSettingsError, read_settings
from tasks.inbox.status import inbox_status
from tasks.inbox.sweep import waiting_of_kind


@pytest.mark.parametrize(
    ("name", "taken"),
    [
        ("june.csv", True),
        ("Statement 2026-11.CSV", True),
        ("~$june.xlsx", False),
        (".june.csv.swp", False),
        (".DS_Store", False),
        ("june.csv.part", False),
        ("june.csv.crdownload", False),
        ("june.tmp", False),
        ("inbox.yaml", False),
        ("june.report.csv", False),
        ("june.failed.csv", False),
        ("june.csv.inbox.txt", False),
    ],
)
def test_names_never_taken(name: str, taken: bool) -> None:
    assert ignored(name) is not taken


def test_a_file_is_complete_once_it_has_settled(tmp_path: Path) -> None:
    path = tmp_path / "june.csv"
    path.write_bytes(b"a,b\n")
    assert not complete(path, settle_seconds=5)
    assert complete(path, settle_seconds=5, now=time.time() + 6)
    path.write_bytes(b"")
    assert not complete(path, settle_seconds=0, now=time.time() + 60)  # empty: still coming
    assert not complete(tmp_path / "gone.csv", settle_seconds=0)


def _drop(root: Path, relative: str, content: bytes = b"x,y\n1,2\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def test_waiting_files_are_found_by_folder_and_kind(tmp_path: Path) -> None:
    _drop(tmp_path, "acme/top.csv")
    _drop(tmp_path, "acme/bank/statement.csv")
    _drop(tmp_path, "acme/processed/2026-11-01/old.csv")
    _drop(tmp_path, "acme/failed/bad.csv")
    _drop(tmp_path, "acme/~$lock.xlsx")
    found = [(w.path.name, w.kind) for w in waiting_files(tmp_path, "acme")]
    assert found == [("top.csv", None), ("statement.csv", FileKind.BANK)]


def test_a_billers_waiting_files_of_one_kind_by_folder_or_by_detection(tmp_path: Path) -> None:
    """What a nightly step takes: the kind's sub-folder, top-level files its detector
    recognises, only complete files, only the folders of the block (by name or inbox.yaml)."""
    settled = time.time() - 3600
    for relative, content in [
        ("acme/bank/june.csv", b"statement"),
        ("acme/top-statement.csv", b"BANK\n"),
        ("acme/top-other.csv", b"other\n"),
        ("acme/payouts/payout.csv", b"payout"),
        ("renamed/bank/july.csv", b"statement"),
        ("someone-else/bank/aug.csv", b"statement"),
    ]:
        os.utime(_drop(tmp_path, relative, content), (settled, settled))
    _drop(tmp_path, "acme/bank/still-coming.csv")  # just written: not complete yet
    (tmp_path / "renamed" / "inbox.yaml").write_text("block: acme\n")

    def detect(path: Path) -> str | None:
        return None if path.read_bytes().startswith(b"BANK") else "not a statement"

    found = waiting_of_kind(tmp_path, "acme", FileKind.BANK, detect)
    assert sorted(w.path.name for w in found) == ["july.csv", "june.csv", "top-statement.csv"]


def test_one_file_is_claimed_once_and_a_held_file_is_not_resumed(tmp_path: Path) -> None:
    path = _drop(tmp_path, "acme/payment-requests/june.csv")
    waiting = Waiting("acme", path, FileKind.PAYMENT_REQUESTS)
    first = claim(waiting, tmp_path)
    assert first is not None
    assert first.path == tmp_path / "acme/processing/payment-requests/june.csv"
    assert claim(waiting, tmp_path) is None  # gone from where it was dropped
    [left] = processing_files(tmp_path, "acme")
    assert resume(left) is None  # first still holds it
    first.release()
    taken_over = resume(left)  # its holder let go (or died): it can be resumed
    assert taken_over is not None
    taken_over.release()


def test_a_file_another_process_is_claiming_is_left_alone(tmp_path: Path) -> None:
    path = _drop(tmp_path, "acme/june.csv")
    with path.open("rb") as other:  # another process has locked it, about to rename it
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert claim(Waiting("acme", path, None), tmp_path) is None
    assert path.exists()


def test_a_name_already_in_processing_gets_a_free_one(tmp_path: Path) -> None:
    first = claim(Waiting("acme", _drop(tmp_path, "acme/june.csv"), None), tmp_path)
    second = claim(Waiting("acme", _drop(tmp_path, "acme/june.csv", b"other"), None), tmp_path)
    assert first is not None and second is not None
    assert (first.path.name, second.path.name) == ("june.csv", "june (2).csv")
    first.release()
    second.release()


def test_put_away_moves_the_file_with_its_reports(tmp_path: Path) -> None:
    claimed = claim(Waiting("acme", _drop(tmp_path, "acme/bank/june.csv"), FileKind.BANK), tmp_path)
    assert claimed is not None
    for report in ("june.report.csv", "june.review.csv", "june.csv.inbox.txt"):
        (claimed.path.parent / report).write_text("r")
    (claimed.path.parent / "other.csv").write_text("not a companion")
    moved = put_away(claimed, failed=False, on=date(2026, 11, 24))
    day = tmp_path / "acme/processed/2026-11-24"
    assert moved == day / "june.csv"
    assert sorted(os.listdir(day)) == [
        "june.csv",
        "june.csv.inbox.txt",
        "june.report.csv",
        "june.review.csv",
    ]
    assert (claimed.path.parent / "other.csv").exists()
    failed = claim(Waiting("acme", _drop(tmp_path, "acme/x.csv"), None), tmp_path)
    assert failed is not None
    assert put_away(failed, failed=True, on=date(2026, 11, 24)) == tmp_path / "acme/failed/x.csv"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("block: ok\nother: [unclosed\n", "line 3: not valid YAML"),
        ("- a\n- b\n", "expected keys"),
        ("blok: acme\n", "blok: Extra inputs are not permitted"),
        ("on_bad_rows: maybe\n", "on_bad_rows: Input should be 'reject_file' or 'skip'"),
        ("bank_apply_exact: perhaps\n", "bank_apply_exact"),
    ],
)
def test_a_bad_settings_file_is_refused_naming_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "inbox.yaml").write_text(text)
    with pytest.raises(InboxSettingsError, match=message) as refused:
        read_settings(tmp_path)
    assert str(tmp_path / "inbox.yaml") in str(refused.value)


def test_settings_default_and_read(tmp_path: Path) -> None:
    assert read_settings(tmp_path).model_dump() == {
        "block": None,
        "bank_apply_exact": False,
        "on_bad_rows": "reject_file",
    }
    (tmp_path / "inbox.yaml").write_text("block: acme-ltd\nbank_apply_exact: true\n")
    assert read_settings(tmp_path).block == "acme-ltd"


def test_classification_by_folder_or_by_exactly_one_detector(tmp_path: Path) -> None:
    path = _drop(tmp_path, "f.csv")

    def yes(_: Path) -> str | None:
        return None

    def no(_: Path) -> str | None:
        return "missing column Amount"

    def broken(_: Path) -> str | None:
        raise OSError("unreadable")

    assert classify(path, FileKind.BANK, {}).kind == FileKind.BANK
    found = classify(path, None, {FileKind.BANK: no, FileKind.PAYMENT_REQUESTS: yes})
    assert found.kind == FileKind.PAYMENT_REQUESTS
    with pytest.raises(Unclassifiable, match="no job recognises f.csv") as none:
        classify(path, None, {FileKind.BANK: no, FileKind.PAYMENT_REQUESTS: broken})
    assert "- bank: missing column Amount" in str(none.value)
    assert "- payment-requests: OSError: unreadable" in str(none.value)
    with pytest.raises(Unclassifiable, match="several jobs recognise"):
        classify(path, None, {FileKind.BANK: yes, FileKind.PAYMENT_REQUESTS: yes})


def test_status_counts_each_state_and_files_left_by_a_stopped_process(tmp_path: Path) -> None:
    _drop(tmp_path, "acme/waiting.csv")
    held = claim(Waiting("acme", _drop(tmp_path, "acme/held.csv"), None), tmp_path)
    left = claim(Waiting("acme", _drop(tmp_path, "acme/left.csv"), None), tmp_path)
    assert held is not None and left is not None
    left.release()  # as if its process died
    _drop(tmp_path, "acme/processed/2026-11-01/done.csv")
    _drop(tmp_path, "acme/processed/2026-11-01/done.csv.inbox.txt")
    _drop(tmp_path, "acme/failed/bad.csv")
    [status] = inbox_status(tmp_path)
    assert status.waiting == ["waiting.csv"]
    assert status.processing == ["processing/auto/held.csv"]
    assert status.orphaned == ["processing/auto/left.csv"]
    assert status.processed == ["2026-11-01/done.csv"]
    assert status.failed == ["bad.csv"]
    held.release()

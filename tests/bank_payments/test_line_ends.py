"""Line ends made ``\\n`` by dropping the carriage returns, where each is a CRLF's (``_text``),
give what replacing CRLF by LF gives; any other CR takes the general way."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tasks.bank_payments._text import _crlf_only, _lf_bytes


def _general(data: bytes) -> bytes:
    if b"\n" not in data:
        return data.replace(b"\r", b"\n")
    return data.replace(b"\r\n", b"\n")


@pytest.mark.parametrize("seed", range(40))
def test_dropping_the_crs_of_crlf_lines_is_replacing_crlf(seed: int) -> None:
    rng = random.Random(seed)
    pieces = [b"a,1\r\n", b"b,2\n", b"\r\n", b"c\r", b"\r\r\n", b"d,3\r\n", b"\n\r"]
    weights = [20, 2, 2, 1, 1, 20, 1] if seed % 2 else [1, 0, 1, 0, 0, 1, 0]
    data = b"".join(rng.choices(pieces, weights, k=rng.randint(1, 60)))
    if seed % 5 == 0:
        data += b"\r"  # a CR at the very end
    cr = b"\r" in data
    for buffer in (data, np.frombuffer(data, dtype=np.uint8)):
        found = _lf_bytes(buffer, cr)
        assert (found if isinstance(found, bytes) else found.tobytes()) == _general(data)
    lone = any(data[i + 1 : i + 2] != b"\n" for i in range(len(data)) if data[i : i + 1] == b"\r")
    assert _crlf_only(data) == (cr and not lone)

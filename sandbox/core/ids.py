"""Identifiers of the sandbox's records.

Random by default. While demo data is seeded and while the clock simulation runs a day, they are
drawn from a generator seeded for that call or day instead, so the same seed and clock start give
the same ids, and so byte-identical exports, whatever the day a test runs. Secrets (client
secrets, tokens, signing keys) never come from here: they stay random.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_generator: ContextVar[random.Random | None] = ContextVar("sandbox_ids", default=None)


def new_uuid() -> str:
    generator = _generator.get()
    if generator is None:
        return str(uuid.uuid4())
    return str(uuid.UUID(int=generator.getrandbits(128), version=4))


def random_string(alphabet: str, length: int) -> str:
    generator = _generator.get()
    if generator is None:
        generator = random.SystemRandom()
    return "".join(generator.choice(alphabet) for _ in range(length))


@contextmanager
def seeded(seed: str) -> Iterator[None]:
    """Draw ids from a generator seeded with ``seed`` in this context (this thread only). The
    seed must differ between calls that can run on one database (two seeds of the same number,
    two simulated days), or the same ids would come out twice."""
    token = _generator.set(random.Random(seed))
    try:
        yield
    finally:
        _generator.reset(token)

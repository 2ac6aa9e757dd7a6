"""Payer and reference of a statement line: their own columns, else the parts of the bank's memo.

Barclays writes no payer or reference column: its memo holds the payee in an 18-character slot,
then the reference (README, "Reading"; the profile's ``memo_slots``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._kernels import per_value

if TYPE_CHECKING:
    from tasks.bank_payments._lines import Lines


def empty_text(n: int) -> pa.Array:
    """``n`` empty texts, as one dictionary entry (a field the file does not have)."""
    return pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(n, dtype=np.int32)), pa.array([""], pa.string()), safe=False
    )


def payer_reference(lines: Lines, text: pa.Array | None) -> tuple[pa.Array, pa.Array]:
    """Payer and reference: their own columns, else the bank's fixed slots of the description
    (Barclays' memo), else the description itself."""
    payer, reference = lines.field("payer"), lines.field("reference")
    slots = lines.profile.memo_slots
    if slots and payer is None and text is not None:
        width = slots.get("payer", 18)
        ref_width = slots.get("reference", 18)
        payer = per_value(
            text,
            lambda v: _tab_or_slot(v, r"\t.*", pc.utf8_slice_codeunits(v, 0, width)),
        )
        if reference is None:
            reference = per_value(
                text,
                lambda v: _tab_or_slot(
                    v, r"^[^\t]*\t", pc.utf8_slice_codeunits(v, width, width + ref_width)
                ),
            )
    fallback = text if text is not None else empty_text(lines.n)
    return (payer if payer is not None else fallback), (
        reference if reference is not None else fallback
    )


def _tab_or_slot(values: pa.Array, cut: str, slot: pa.Array) -> pa.Array:
    """A memo's part: where the memo has a tab, what is left once ``cut`` (a pattern for the
    other side of the first tab) is taken out; else its fixed ``slot``. Barclays' newer memos
    are the payee padded to 18 or more characters, a tab, then the reference and a code
    (tests/data/bank/variants/SOURCES.md): slots cut such a reference short ("SBS00001/123456"
    of "SBS00001/123456789"). The lines' keys hold payer and reference, so those of a tabbed
    memo differ from what earlier builds made (README, "Matching": line keys)."""
    tabbed = pc.match_substring(values, "\t")
    rest = pc.replace_substring_regex(values, cut, "", max_replacements=1)
    return pc.utf8_trim_whitespace(pc.if_else(tabbed, rest, slot))

"""The suggestion pass's fast kernels give what the plain versions they replaced give: names as
compared (bytes, not regexes) and each line's best candidates (a max over whole rows, not an
argmax per line), on hostile names and on scores with ties."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import fuzz

from tasks.bank_payments._name_bound import Words, token_set_bound
from tasks.bank_payments._names import _Keys, _split_words, name_keys, name_matches
from tasks.bank_payments._suggest import KEEP, NONE, _top

_FILLER = r"\b(LIMITED|LTD|PLC|LLP|LLC|INC|CO|COMPANY|THE|AND|UK|GROUP|HOLDINGS|SERVICES?)\b"


def _keys_by_regex(names: pa.Array) -> list[str]:
    """Names as compared, as the regexes made them before."""
    text = pc.utf8_upper(names)
    text = pc.replace_substring(text, "&", " AND ")
    text = pc.replace_substring_regex(text, r"[^A-Z0-9 ]+", " ")
    text = pc.replace_substring_regex(text, _FILLER, " ")
    text = pc.binary_join(pc.ascii_split_whitespace(text), " ")
    text = pc.utf8_trim_whitespace(text)
    return [str(t) for t in text.to_pylist()]


NAMES = [
    "Acme Services Limited",
    "ACME SERVICES LTD.",
    "The Oak & Ash Co",
    "THE&CO&AND",
    "  spaced\tout \n name  ",
    "Café Crème Ltd",
    "straße ıstanbul ſ",
    "Ⅻ Ltd ½ 3²",
    "Fish 🐟 & Chips",
    "CO-OPERATIVE COMPANY COMPANYS CO.UK",
    "SERVICE SERVICES SERVICESS THE THEO",
    "A&B",
    "x",
    "",
    "   ",
    "LTD",
    "O'Brien-Smith (Holdings) Group PLC",
    "ÉLAN 123 LLP",
    "north.vale/bakery_42",
]


def test_names_are_compared_as_the_regexes_did() -> None:
    names = pa.array(NAMES)
    assert name_keys(names) == _keys_by_regex(names)
    sliced = names.slice(3, 9)
    assert name_keys(sliced) == _keys_by_regex(sliced)
    assert name_keys(names.cast(pa.large_string())) == _keys_by_regex(names)
    with_null = pa.array([*NAMES[:3], None, *NAMES[3:]])
    assert name_keys(with_null) == _keys_by_regex(with_null)  # "None", as always


def test_a_keys_words_are_those_of_its_split() -> None:
    for names in (pa.array(NAMES), pa.array([*NAMES, None]), pa.array(NAMES).slice(2, 7)):
        keys = _Keys.of(names)
        owner, words = _split_words(pa.array(keys.text, pa.string()))
        assert keys.owner.tolist() == owner.tolist()
        assert keys.words.to_pylist() == words.to_pylist()
        among = np.array([5, 0, 3])
        inside = np.isin(owner, among)
        place = {int(n): p for p, n in enumerate(among)}
        found_owner, found_words = keys.words_of(among)
        assert found_owner.tolist() == [place[int(n)] for n in owner[inside]]
        assert found_words.to_pylist() == np.array(words.to_pylist(), object)[inside].tolist()


def _top_by_argmax(rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A line's best candidates as an argmax along it gave them (lines as rows)."""
    scores = scores.copy()
    picked_rows, picked_scores = [], []
    for _ in range(KEEP):
        at = scores.argmax(axis=1)
        lines = np.arange(len(scores))
        picked_rows.append(rows[lines, at])
        picked_scores.append(scores[lines, at])
        scores[lines, at] = -np.inf
    return np.stack(picked_rows, axis=1), np.stack(picked_scores, axis=1)


def test_each_lines_best_candidates_are_an_argmaxs() -> None:
    rng = np.random.default_rng(3)
    lines, places = 5_000, 15
    # Few distinct scores (many ties), some a float32 step apart, none (-1) and zeros.
    values = np.array([-1, 0, 0.25, 0.5, 0.5 + 2**-23, 0.75, 1, 1.15], dtype=np.float32)
    scores = values[rng.integers(0, len(values), (lines, places))]
    scores[::7] = rng.random((len(scores[::7]), places), dtype=np.float32)
    rows = rng.integers(0, 1_000, (lines, places))
    rows[scores == -1] = NONE
    want_rows, want_scores = _top_by_argmax(rows, scores)
    got_rows, got_scores = _top(np.ascontiguousarray(rows.T), np.ascontiguousarray(scores.T))
    kept = want_scores >= 0  # below 0 (no candidate) the order is any: never kept
    assert (got_scores[kept] == want_scores[kept]).all()
    assert (got_rows[kept] == want_rows[kept]).all()
    assert ((got_scores >= 0) == kept).all()


def _matches_by_hand(payers: list[str], customers: list[str]) -> dict[int, list[tuple[int, float]]]:
    """What the module docstring of ``_names`` says, payer by payer, in plain Python."""
    payer_keys, customer_keys = name_keys(pa.array(payers)), name_keys(pa.array(customers))
    have: dict[str, list[int]] = {}
    for n, key in enumerate(customer_keys):
        for word in {w for w in key.split(" ") if len(w) >= 3}:
            have.setdefault(word, []).append(n)
    common = max(50, len(customers) // 100)
    in_order = sorted(range(len(customers)), key=lambda n: customer_keys[n])
    found: dict[int, list[tuple[int, float]]] = {}
    for p, key in enumerate(payer_keys):
        if not key:
            continue
        same = [n for n, c in enumerate(customer_keys) if c == key][:3]
        cut = [n for n in in_order if len(key) >= 8 and customer_keys[n].startswith(key)][:3]
        if same or cut:
            found[p] = [(n, 100.0) for n in same] or [(n, 95.0) for n in cut]
            continue
        words = [w for w in key.split(" ") if len(w) >= 3 and len(have.get(w, [])) <= common]
        words = [w for w in words if w in have]
        if not words:
            continue
        block = have[min(words, key=lambda w: (len(have[w]), w))]
        # Scores as whole numbers (as ``cdist`` gives them in uint8), then ranked.
        scored = [(n, fuzz.token_set_ratio(key, customer_keys[n])) for n in block]
        whole = [(n, float(int(s + 0.5))) for n, s in scored if s >= 70]
        if whole:
            found[p] = sorted(whole, key=lambda s: (-s[1], s[0]))[:3]
    return found


def test_each_payers_customers_are_those_the_docstring_says() -> None:
    rng = np.random.default_rng(11)
    parts = ["NORTH", "VALE", "OAK", "ASH", "MILL", "CROWN", "BAKERY", "DENTAL", "MOTORS"]

    middle = ["ZEPHYR", "QUILL", "LARCH", "FJORD", "EMBER", "GLADE", "HAVEN", "IVORY"]

    def name() -> str:
        # Words in every name (never a block), words in about one in eight (blocks scored by
        # ``cdist``), numbers in one or two (blocks of a few pairs, scored together).
        words = rng.choice(parts, int(rng.integers(1, 4))).tolist()
        words += rng.choice(middle, int(rng.integers(0, 2))).tolist()
        return " ".join(words + [str(int(rng.integers(0, 400)))] * int(rng.integers(0, 2)))

    customers = [name() + " Ltd" for _ in range(300)]
    payers = [name() for _ in range(400)] + [c[: int(rng.integers(5, 18))] for c in customers[:50]]
    payers += ["NRTH VALE BAKERY", "OAK", "", "& LTD", "MILLCROWN DENTAL 12"]
    found = name_matches(pa.array(payers), pa.array(customers))
    by_payer: dict[int, list[tuple[int, float]]] = {}
    for row in found.itertuples():
        by_payer.setdefault(int(row.payer), []).append((int(row.customer), float(row.score)))
    assert by_payer == _matches_by_hand(payers, customers)


def test_a_payer_with_one_customer_to_score_ends_no_other_payers_list() -> None:
    # The first payer's third best is the first customer of its block; the second payer's
    # block has one customer only, used up after the first pick.
    customers = ["Zephyr Northvxyz", "Zephyr Northvales", "Zephyr Northvalex", "Lonely Word9"]
    payers = ["NORTHVALE ZEPHYR", "LONELY THING"]
    found = name_matches(pa.array(payers), pa.array(customers))
    assert found[found["payer"] == 0]["customer"].tolist() == [1, 2, 0]
    by_payer: dict[int, list[tuple[int, float]]] = {}
    for row in found.itertuples():
        by_payer.setdefault(int(row.payer), []).append((int(row.customer), float(row.score)))
    assert by_payer == _matches_by_hand(payers, customers)


def test_the_bound_is_never_below_the_token_set_ratio() -> None:
    rng = np.random.default_rng(5)
    vocabulary = ["A", "AB", "ABA", "BAKERY", "BAKERX", "DENTAL", "12", "123", "1234", "OAK"]
    vocabulary += ["ZZZZZZZZ", "MILL", "MILLS", "0", "VALE", "AVLE"]

    def key() -> str:
        return " ".join(rng.choice(vocabulary, int(rng.integers(0, 9))).tolist())

    keys = [key() for _ in range(400)] + ["None", "A A A A", "ABA BAKERY", "BAKERY ABA"]
    # past ASCII, long, many words, and whitespace rapidfuzz splits at but a space does not
    unbounded = ["ÉLAN OAK", "A" * 300 + " OAK", "A B C D E F G", "ABA\tOAK", "OAK\x1fMILL A"]
    keys += unbounded
    words = Words.of(pa.array(keys))
    assert words.unbounded[-len(unbounded) :].all()
    few = np.array([len(set(k.split())) <= 6 for k in keys[: -len(unbounded)]])
    assert not words.unbounded[: -len(unbounded)][few].any()
    a = rng.integers(0, len(keys), 20_000)
    b = rng.integers(0, len(keys), 20_000)
    bound = token_set_bound(words, a, b)
    exact = np.array([fuzz.token_set_ratio(keys[i], keys[j]) for i, j in zip(a, b, strict=True)])
    assert (bound + 1e-9 >= exact).all()
    assert np.isinf(bound).any() and (bound < 100).mean() > 0.3  # some pairs, not all

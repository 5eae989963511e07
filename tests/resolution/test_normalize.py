"""Normal forms: what must never tell two spellings of a name apart."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from writegate.gate.resolution import Kind, blocking_keys, fold, normalize
from writegate.gate.resolution.evaluate import compared
from writegate.gate.resolution.keys import meets, probes_of

KINDS: tuple[Kind, ...] = ("person", "organisation")
# Names as people type them: letters of any script, digits, spaces and punctuation.
names = st.text(
    st.characters(categories=["L", "Nd", "Zs", "Pd", "Po", "Ps", "Pe", "Mn", "Sm"]),
    max_size=40,
)
cased = st.text(st.characters(categories=["L", "Mn", "Zs"]) | st.sampled_from("-.,'&"), max_size=40)
plain = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz ,.-'"), max_size=30)
marks = st.lists(st.sampled_from("\u0300\u0301\u0302\u0303\u0308\u030a\u030c\u0327"), max_size=3)


@given(names)
def test_fold_is_idempotent(name: str) -> None:
    assert fold(fold(name)) == fold(name)


@given(names, st.sampled_from(KINDS))
def test_normalize_is_idempotent_on_its_words(name: str, kind: Kind) -> None:
    words = normalize(name, kind).tokens
    assert normalize(" ".join(words), kind).tokens == words


@given(cased, st.sampled_from(KINDS))
def test_case_never_matters(name: str, kind: Kind) -> None:
    key = normalize(name, kind).key
    assert normalize(name.upper(), kind).key == key
    assert normalize(name.lower(), kind).key == key


@given(plain, st.data())
def test_diacritics_never_matter(name: str, data: st.DataObject) -> None:
    accented = "".join(
        char + "".join(data.draw(marks)) if char.isalpha() else char for char in name
    )
    accented = unicodedata.normalize("NFC", accented)
    assert fold(accented) == fold(name)


@given(names, st.sampled_from(KINDS))
def test_a_name_meets_its_own_rows_which_end_with_its_normal_text(name: str, kind: Kind) -> None:
    normal = normalize(name, kind)
    rows = blocking_keys(name, kind)
    assert all(row.endswith("|" + normal.text) for row in rows)
    assert not normal.tokens or meets(probes_of(normal, kind), rows)


@given(cased, st.sampled_from(KINDS), st.sampled_from(["upper", "spaced", "dotted"]))
def test_exact_normalized_matches_always_share_a_key(name: str, kind: Kind, how: str) -> None:
    variant = {
        "upper": name.upper(),
        "spaced": "  " + name.replace(" ", "   ") + " ",
        "dotted": name.replace(" ", ". "),
    }[how]
    normal = normalize(name, kind)
    if normalize(variant, kind).key == normal.key and normal.tokens:  # nothing: no rows
        assert compared(variant, name, kind)


@pytest.mark.parametrize(
    ("name", "kind", "words", "qualifiers"),
    [
        ("Turing, Alan", "person", ("alan", "turing"), set()),
        ("Dr. A.M. Turing PhD", "person", ("a", "m", "turing"), set()),
        ("Smith, John, Jr.", "person", ("john", "smith"), {"jr"}),
        ("  José-Luis  O\u2019Brien!", "person", ("jose", "luis", "obrien"), set()),
        ("Søren Kierkegaard", "person", ("soren", "kierkegaard"), set()),
        ("Junior", "person", ("junior",), set()),
        ("ACME Limited", "organisation", ("acme",), {"ltd"}),
        ("Acme Co., Ltd.", "organisation", ("acme",), {"co", "ltd"}),
        ("Nestlé S.A.", "organisation", ("nestle",), {"sa"}),
        ("The Boeing Company", "organisation", ("boeing",), {"co"}),
        ("I.B.M.", "organisation", ("ibm",), set()),
        ("Intl. Business Machines Corp", "organisation",
         ("international", "business", "machines"), {"corp"}),
        ("Johnson & Johnson", "organisation", ("johnson", "and", "johnson"), set()),
        ("Co Ltd", "organisation", ("co", "ltd"), set()),
    ],
)  # fmt: skip
def test_named_normal_forms(
    name: str, kind: Kind, words: tuple[str, ...], qualifiers: set[str]
) -> None:
    normal = normalize(name, kind)
    assert (normal.tokens, set(normal.qualifiers)) == (words, qualifiers)


@pytest.mark.parametrize(
    ("name", "acronym"),
    [("IBM", True), ("I.B.M.", True), ("NASA", True), ("IBM Corp", True), ("Acme", False),
     ("ACME LIMITED", True), ("Microsoft", False), ("MICROSOFT", False), ("ibm", False)],
)  # fmt: skip
def test_acronyms_are_read_from_the_capitals(name: str, acronym: bool) -> None:
    assert normalize(name, "organisation").acronym is acronym

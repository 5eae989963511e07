"""Blocking: a true variant's probes meet the other name's rows whichever is written first;
unrelated names mostly do not."""

from __future__ import annotations

import pytest

from writegate.gate.resolution import Kind, blocking_keys, normalize
from writegate.gate.resolution.evaluate import compared
from writegate.gate.resolution.keys import meets, probes_of
from writegate.projections.state.blocking import from_legacy, text_of


def meet(a: str, b: str, kind: Kind) -> bool:
    return compared(a, b, kind)


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("Alan Turing", "A. Turing", "person"),
        ("Alan Turing", "Turing, Alan", "person"),
        ("Alan Turing", "Alan Mathison Turing", "person"),
        ("Pyotr Tchaikovsky", "Pyotr Chaikovsky", "person"),
        ("Muhammad Ali", "Mohammed Ali", "person"),
        ("Boris Yeltsin", "Boris Eltsin", "person"),
        ("William Gates", "Bill Gates", "person"),
        ("Ronald McDonald", "Ronald Mc Donald", "organisation"),
        ("Acme Ltd", "ACME Limited", "organisation"),
        ("International Business Machines", "I.B.M.", "organisation"),
        ("PricewaterhouseCoopers", "Price Waterhouse Coopers", "organisation"),
        ("Goldman Sachs", "Godlman Sachs", "organisation"),
    ],
)
def test_variants_meet(a: str, b: str, kind: Kind) -> None:
    assert meet(a, b, kind)


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("Alan Turing", "Maria Garcia", "person"),
        ("Maria Garcia", "Jose Garcia", "person"),  # relatives are not even compared
        ("Bluestone Logistics", "Redfield Logistics", "organisation"),
        ("Bank of America", "Bank of Canada", "organisation"),
        ("Acme Corp", "Acme Bank", "organisation"),  # "bank" is a word of the name, "corp" not
    ],
)
def test_unrelated_names_do_not_meet(a: str, b: str, kind: Kind) -> None:
    assert not meet(a, b, kind)


def test_a_middle_word_is_probed_as_a_last_one() -> None:
    """Written second, the longer name finds the shorter (not the other way round: the
    shorter name has no word to probe the longer one's rows by)."""
    longer = normalize("Gabriel García Márquez", "person")
    assert meets(probes_of(longer, "person"), blocking_keys("Gabriel Garcia", "person"))


def test_a_person_is_indexed_under_two_rows_an_organisation_under_four_at_most() -> None:
    assert len(blocking_keys("Maximilian Alexander von Hohenzollern-Sigmaringen", "person")) == 2
    assert len(blocking_keys("A. Turing", "person")) == 1  # an initial leads no row
    assert len(blocking_keys("International Business Machines Corp", "organisation")) == 4


def test_rows_end_with_the_normal_text() -> None:
    assert blocking_keys("Turing, Alan", "person") == {
        "p:TRNK|a|ALN|alan turing",
        "p:ALN|t|TRNK|alan turing",
    }


def test_rows_of_an_earlier_layout_are_rebuilt_as_this_layout_has_them() -> None:
    legacy = ["Person/x:alan turing", "Person/p:TRNK|a", "Person/p:ALN|t", "Person/id:e=a@b"]
    assert from_legacy(legacy) == [
        "Person/id:e=a@b",
        "Person/p:ALN|t|TRNK|alan turing",
        "Person/p:TRNK|a|ALN|alan turing",
    ]
    organisation = ["Org/x:acme bank", "Org/o:AKM|ba", "Org/o:BNK|ac", "Org/j:AKMBNK"]
    assert from_legacy(organisation) == sorted(
        f"Org/{key}" for key in blocking_keys("Acme Bank", "organisation")
    )


def test_names_in_other_scripts_still_get_keys() -> None:
    assert meet("Владимир Путин", "владимир путин", "person")
    assert all(len(key) > 2 for key in blocking_keys("北京大学", "organisation"))


@pytest.mark.parametrize(
    ("name", "legacy"),
    [  # as the layout before rows indexed them: the words sorted, their order in j: only
        ("Mary Ann Smith", ["x:ann mary smith", "p:AN|m", "p:SM0|m", "p:MR|s", "j:MRYNSM0"]),
        ("Yoko Ono", ["x:ono yoko", "p:AN|y", "p:AK|o", "j:AKN"]),
    ],
)
def test_a_name_of_an_earlier_layout_keeps_its_words_order(name: str, legacy: list[str]) -> None:
    """The sorted words of the old exact key are put back in the order the joined sound
    kept, so a new write of the same name finds the rebuilt rows."""
    rebuilt = [key.partition("/")[2] for key in from_legacy(f"Person/{k}" for k in legacy)]
    assert rebuilt == sorted(blocking_keys(name, "person"))
    assert meets(probes_of(normalize(name, "person"), "person"), rebuilt)


def test_an_identity_key_is_never_read_as_a_name() -> None:
    """An equal identity value holding the row separator is still an identity key."""
    assert text_of("Person/id:email=a|b|c|d") is None
    assert text_of("Person/p:TRNK|a|ALN|alan turing") == "alan turing"

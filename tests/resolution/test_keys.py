"""Blocking keys: true variants meet under a key, unrelated names mostly do not."""

from __future__ import annotations

import pytest

from writegate.gate.resolution import Kind, blocking_keys


def meet(a: str, b: str, kind: Kind) -> bool:
    return bool(blocking_keys(a, kind) & blocking_keys(b, kind))


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
        ("Ronald McDonald", "Ronald Mc Donald", "person"),
        ("Gabriel García Márquez", "Gabriel Garcia", "person"),
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


def test_keys_are_few_and_short() -> None:
    keys = blocking_keys("Maximilian Alexander von Hohenzollern-Sigmaringen", "person")
    assert len(keys) <= 6
    assert all(len(key) <= 24 for key in keys if not key.startswith("x:"))


def test_names_in_other_scripts_still_get_keys() -> None:
    assert meet("Владимир Путин", "владимир путин", "person")
    assert all(len(key) > 2 for key in blocking_keys("北京大学", "organisation"))

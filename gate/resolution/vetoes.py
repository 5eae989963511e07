"""Why a pair may be proposed but never auto-resolved: each veto and its sentence.

A veto is a reason, whatever the score, that only a person may decide a pair is one thing:
the name's own (``score``: short names, acronyms, initials, a word one side lacks, words
holding digits that differ) and the evidence's (``weighing``: a field that disagrees or
only nearly agrees, an identity disputed, a name several nodes hold) and the graph's
(``commonness``: a person's name whose words are common).
"""

from __future__ import annotations

from typing import Literal

Veto = Literal[
    "short_name",
    "acronym",
    "single_word",
    "qualifier_conflict",
    "initials",
    "nickname",
    "word_count",
    "names_differ",
    "field_disagrees",
    "identity_disputed",
    "codes_differ",
    "field_nearly",
    "name_shared",
    "name_common",
]

SHORT_WORD = 3
"""A name none of whose words is longer than this never auto-resolves: "IBM"/"IBN",
"Al"/"Ali", "Ed Lee"/"Ed Li" (and two "Li Wei"s are as likely two people as one)."""
VETO_REASONS: dict[Veto, str] = {
    "short_name": f"a name with no word longer than {SHORT_WORD} letters",
    "acronym": "an acronym",
    "single_word": "a person named by one word",
    "qualifier_conflict": "different legal forms or generations",
    "initials": "an initial standing for a name",
    "nickname": "a nickname standing for a name",
    "word_count": "a word one name has and the other lacks",
    "names_differ": "names less alike than 0.80, whatever else agrees",
    "field_disagrees": "a declared field that disagrees (a different date of birth, city…)",
    "identity_disputed": "an identity value only this node holds, beside a name or a "
    "declared field that differs (a hotel's switchboard number on its restaurant)",
    "name_shared": "a name several nodes of the label hold already: here it does not "
    "identify (a column's title, a common name)",
    "name_common": "a person's name whose first and last words many nodes of the label hold: "
    "another person of this name is to be expected (among many Michaels and many Beckers, "
    "two Michael Beckers)",
    "field_nearly": "a declared field that only nearly agrees (a character or a digit apart: "
    "a typo, or a sibling model's number)",
    "codes_differ": "words holding digits that differ (a model, a part or unit number, a "
    "year): they identify, and a different one names another thing, not a typo",
}
"""Each veto's reason sentence, for an agent or a reviewer to read."""

"""Curation without a screen: the taxonomy, the word diff, the authoring rules, search, edits
with history, retiring."""

from __future__ import annotations

import pytest

from annotate import taxonomy
from annotate.curation.diff import LARGE_EDIT_SHARE, word_diff
from annotate.curation.examples import (
    ExampleQuery,
    edit_example,
    example_history,
    find_examples,
    save_pair,
    set_retired,
)
from annotate.curation.importing import import_diagnostic
from annotate.curation.sets import create_set, load_set, set_rows
from annotate.curation.validation import DraftInvalid, PairDraft, clean_sentence
from annotate.errors import UserError
from tests import fixtures as fx

GATE = PairDraft(
    premise="The gate is open.",
    hypothesis="The gate is not open.",
    forward="contradiction",
    backward="contradiction",
    tags=["Negation"],
    domain="Artificial",
    note="negated the copula",
)


def draft(**changes) -> PairDraft:
    return PairDraft(**{**GATE.__dict__, **changes})


@pytest.fixture
def engine(workspace):
    create_set(workspace.engine, "new")
    return workspace.engine


# --- taxonomy -----------------------------------------------------------------------------------
def test_taxonomy_has_the_33_exact_spellings_in_4_categories():
    assert list(taxonomy.TAXONOMY) == [
        "Lexical Semantics",
        "Predicate-Argument Structure",
        "Logic",
        "Knowledge",
    ]
    assert [len(tags) for tags in taxonomy.TAXONOMY.values()] == [7, 12, 12, 2]
    assert len(set(taxonomy.FINE)) == 33
    assert {"Core args", "Symmetry/Collectivity", "Non-monotone", "Anaphora/Coreference"} <= set(
        taxonomy.FINE
    )


def test_tags_are_grouped_resolved_and_checked():
    grouped = taxonomy.group_tags(["negation", "Quantifiers", "world knowledge"])
    assert grouped == {
        "Lexical Semantics": ["Quantifiers"],
        "Predicate-Argument Structure": [],
        "Logic": ["Negation"],
        "Knowledge": ["World knowledge"],
    }
    with pytest.raises(UserError, match="did you mean 'Negation'"):
        taxonomy.resolve_tag("Negatoin")
    with pytest.raises(UserError, match="belongs to Logic"):
        taxonomy.check_tags({"Knowledge": ["Negation"]})
    # Order within a category is kept as read (an export writes it back unchanged).
    assert taxonomy.check_tags({"Logic": ["Negation", "Conjunction"]})["Logic"] == [
        "Negation",
        "Conjunction",
    ]


def test_tag_search_ranks_prefix_matches_first():
    assert taxonomy.search_tags("neg")[0] == "Negation"
    assert set(taxonomy.search_tags("neg")) == {
        "Negation",
        "Double negation",
        "Morphological negation",
    }
    assert taxonomy.search_tags("passive") == ["Active/Passive"]
    assert len(taxonomy.search_tags("knowledge")) == 2  # the category name matches too
    assert taxonomy.search_tags("") == list(taxonomy.FINE)


# --- word diff ----------------------------------------------------------------------------------
def test_word_diff_marks_the_minimal_edit():
    premise, hypothesis = "The cat sat on the mat.", "The cat did not sit on the mat."
    diff = word_diff(premise, hypothesis)
    assert [premise[a:b] for a, b in diff.premise_spans] == ["sat"]
    assert [hypothesis[a:b] for a, b in diff.hypothesis_spans] == ["did not sit"]
    assert (diff.changed_tokens, diff.total_tokens) == (4, 14)
    assert not diff.large


def test_the_diff_compares_words_as_the_duplicate_rule_does():
    """An accent typed as "e" and a combining mark, or a zero-width space, changes no word: the
    screen must not count words as changed in a pair the save refuses as identical."""
    premise = "The cafe\u0301 is open."  # as an imported file may spell it
    diff = word_diff(premise, "The café is\u200b open.")
    assert (diff.changed_tokens, diff.premise_spans) == (0, [])
    assert diff.summary() == "The sentences are identical."
    diff = word_diff(premise, "The café is \u200b closed.")
    assert (diff.changed_tokens, diff.total_tokens) == (2, 8)


def test_a_large_difference_is_flagged_above_the_threshold():
    diff = word_diff("Three journalists were injured.", "Nobody was hurt at all.")
    assert diff.changed_share > LARGE_EDIT_SHARE and diff.large
    assert "not a minimal edit" in diff.summary()
    assert word_diff("", "").summary().startswith("Write both")


def test_a_pair_with_one_sentence_empty_asks_for_it_rather_than_counting_words():
    """ "3 of 3 words differ (100%)" while the hypothesis is still empty reads as a failed edit;
    there is no edit yet to count or to warn about."""
    diff = word_diff("A cat sat.", "   ")
    assert diff.summary() == "Write the hypothesis to see the difference."
    assert not diff.large
    assert word_diff("", "A cat sat.").summary() == "Write the premise to see the difference."


# --- authoring rules ----------------------------------------------------------------------------
def test_a_pair_becomes_two_linked_examples(engine):
    forward, backward = save_pair(engine, "new", "ana", GATE)
    assert forward.pair_id == backward.pair_id == 1
    assert (forward.premise, forward.hypothesis) == (backward.hypothesis, backward.premise)
    assert (forward.label, backward.label) == ("contradiction", "contradiction")
    assert forward.tags["Logic"] == ["Negation"] and forward.domain == "Artificial"
    assert forward.author == "ana" and forward.origin == "authored"
    second, _ = save_pair(
        engine, "new", "ana", draft(premise="A dog barked.", hypothesis="No dog barked.")
    )
    assert second.pair_id == 2 and second.position == 2


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"premise": "  "}, "premise", "the premise is empty"),
        ({"hypothesis": ""}, "hypothesis", "the hypothesis is empty"),
        ({"hypothesis": "\u200b \ufeff"}, "hypothesis", "the hypothesis is empty"),  # invisible
        ({"hypothesis": "The  gate is\nopen."}, "hypothesis", "identical"),
        ({"forward": None}, "forward", "premise → hypothesis"),
        ({"backward": None}, "backward", "hypothesis → premise"),
        ({"tags": []}, "tags", "at least one phenomenon tag"),
        ({"forward": "not_entailment"}, "forward", "unknown label"),
        ({"domain": "News\tWire"}, "domain", "the domain holds a tab or line break"),
    ],
)
def test_each_rule_is_reported_and_nothing_is_saved(engine, changes, field, message):
    with pytest.raises(DraftInvalid) as caught:
        save_pair(engine, "new", "ana", draft(**changes))
    assert caught.value.problems[0].field == field
    assert message in caught.value.problems[0].message
    assert find_examples(engine, "new", ExampleQuery()) == []


def test_every_broken_rule_is_listed_at_once(engine):
    with pytest.raises(DraftInvalid) as caught:
        save_pair(engine, "new", "ana", PairDraft())
    fields = [p.field for p in caught.value.problems]
    assert fields == ["premise", "hypothesis", "forward", "backward", "tags"]


@pytest.mark.parametrize(
    ("premise", "hypothesis"),
    [
        ("The gate is open.", "The gate is not open."),
        ("The gate is not open.", "The gate is open."),
    ],
)
def test_a_duplicate_pair_in_either_direction_is_refused(engine, premise, hypothesis):
    save_pair(engine, "new", "ana", GATE)
    with pytest.raises(DraftInvalid, match="duplicate"):
        save_pair(engine, "new", "ben", draft(premise=premise, hypothesis=f" {hypothesis}\n"))
    assert len(find_examples(engine, "new", ExampleQuery())) == 2


COMPOSED = ("The café is open.", "The café is not open.")  # "é": one character (NFC)
DECOMPOSED = ("The cafe\u0301 is open.", "The cafe\u0301 is not open.")  # "e" + U+0301


@pytest.mark.parametrize(("stored", "pasted"), [(COMPOSED, DECOMPOSED), (DECOMPOSED, COMPOSED)])
def test_a_duplicate_is_refused_however_its_accents_are_encoded(engine, tmp_path, stored, pasted):
    # The stored pair comes from a file (kept as written) or from a curator (kept as NFC).
    row = "\t\tNegation\t\tNews\t{}\t{}\tcontradiction\r\n"
    (tmp_path / "d.tsv").write_bytes(
        (fx.DIAGNOSTIC_FULL.splitlines(keepends=True)[0] + row.format(*stored)).encode()
    )
    import_diagnostic(engine, "new", tmp_path / "d.tsv")
    for premise, hypothesis in (pasted, pasted[::-1]):
        with pytest.raises(DraftInvalid, match="already in the set"):
            save_pair(engine, "new", "ben", draft(premise=premise, hypothesis=hypothesis))
    assert len(find_examples(engine, "new", ExampleQuery())) == 1


def test_sentences_are_stored_in_one_unicode_form_and_found_in_either(engine):
    forward, _ = save_pair(engine, "new", "ana", draft(premise=DECOMPOSED[0]))
    assert forward.premise == COMPOSED[0]  # NFC, as study names are stored
    edited = edit_example(engine, "new", forward.id, "ana", {"hypothesis": "The cafe\u0301 shut."})
    assert edited.hypothesis == "The café shut."
    for typed in ("café", "cafe\u0301"):
        assert [e.id for e in find_examples(engine, "new", ExampleQuery(text=typed))] == [1, 2]


def test_a_pair_differing_only_by_invisible_characters_is_a_duplicate(engine):
    save_pair(engine, "new", "ana", GATE)
    with pytest.raises(DraftInvalid, match="already in the set"):
        save_pair(engine, "new", "ben", draft(premise="The gate\u200b is open.\u2060"))
    with pytest.raises(DraftInvalid, match="identical"):
        save_pair(engine, "new", "ben", draft(hypothesis="\ufeffThe gate is\u200b open."))
    assert len(find_examples(engine, "new", ExampleQuery())) == 2


def test_invisible_characters_go_with_the_outer_spaces_only():
    assert clean_sentence("\ufeff The gate is open.\u200b\n") == "The gate is open."
    thai = "\u0e09\u0e31\u0e19\u200b\u0e01\u0e34\u0e19"  # a word break inside stays
    assert clean_sentence(f"\u200b{thai} ") == thai


def test_pasted_line_breaks_are_joined():
    assert clean_sentence("  The gate\r\n is\topen.\n") == "The gate is open."
    assert clean_sentence("The gate\ris\vopen\u2028now.") == "The gate is open now."


@pytest.mark.parametrize(
    ("pasted", "stored"),
    [
        ("The \x1b[31mred\x1b[0m car stopped.", "The [31mred[0m car stopped."),  # ESC dropped
        ("The car\x07 stopped.\x00", "The car stopped."),  # BEL, NUL
        ("The \x9b2Jcar\x7f stopped.", "The 2Jcar stopped."),  # C1 (CSI) and DEL
        (
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        ),  # ZWNJ (Persian) kept
        (
            "\U0001f469\u200d\U0001f4bb codes.",
            "\U0001f469\u200d\U0001f4bb codes.",
        ),  # ZWJ (emoji) kept
    ],
    ids=["ESC", "BEL and NUL", "CSI and DEL", "ZWNJ", "ZWJ"],
)
def test_control_characters_are_dropped_from_sentences(pasted, stored):
    assert clean_sentence(pasted) == stored


def test_unknown_set_and_duplicate_set_names(workspace):
    with pytest.raises(UserError, match="no curation set named 'nope'"):
        save_pair(workspace.engine, "nope", "ana", GATE)
    create_set(workspace.engine, "s", scheme="two-way")
    assert load_set(workspace.engine, "s").labels == ("entailment", "not_entailment")
    with pytest.raises(UserError, match="exists already"):
        create_set(workspace.engine, "s")
    assert set_rows(workspace.engine)[0]["labels"] == "two-way"


# --- search, edit, retire -----------------------------------------------------------------------
def _three_pairs(engine) -> None:
    save_pair(engine, "new", "ana", GATE)
    save_pair(
        engine,
        "new",
        "ben",
        draft(
            premise="All ten boats were repaired.",
            hypothesis="Some boats were repaired.",
            forward="entailment",
            backward="neutral",
            tags=["Quantifiers", "Upward monotone"],
            domain="News",
            note="",
        ),
    )
    save_pair(
        engine,
        "new",
        "ana",
        draft(
            premise="[CLS] Ana met Ben.",
            hypothesis="[CLS] Ben met Ana.",
            forward="entailment",
            backward="entailment",
            tags=["Symmetry/Collectivity"],
            note="",
        ),
    )


def test_search_by_text_tag_category_label_and_author(engine):
    _three_pairs(engine)

    def ids(**query) -> list[int]:
        return [e.id for e in find_examples(engine, "new", ExampleQuery(**query))]

    assert len(ids()) == 6
    assert ids(text="BOATS") == [3, 4]
    assert ids(text="copula") == [1, 2]  # the source note
    assert ids(text="[CLS]") == [5, 6]
    assert ids(tag="negation") == [1, 2]
    assert ids(tag="Lexical Semantics") == [3, 4, 5, 6]
    assert ids(label="neutral") == [4]
    assert ids(author="ben") == [3, 4]
    assert ids(author="ana", label="entailment") == [5, 6]
    with pytest.raises(UserError, match="unknown label"):
        ids(label="not_entailment")


def test_edits_keep_the_history(engine):
    _three_pairs(engine)
    edit_example(
        engine, "new", 3, "cara", {"label": "neutral", "tags": ["Quantifiers"]}, "too strong"
    )
    edited = edit_example(engine, "new", 3, "ana", {"premise": "All the boats were repaired."})
    assert edited.version == 3 and edited.label == "neutral"
    assert edited.tags["Logic"] == [] and edited.tags["Lexical Semantics"] == ["Quantifiers"]
    history = example_history(engine, "new", 3)
    assert [h["version"] for h in history] == [1, 2, 3]
    assert [h["label"] for h in history] == ["entailment", "neutral", "neutral"]
    assert history[0]["changed_by"] == "cara" and history[0]["change_note"] == "too strong"
    assert history[1]["premise"] == "All ten boats were repaired."
    assert history[2]["change"] == "current"
    # No change, no new version; a change that makes a duplicate or breaks a rule is refused.
    assert edit_example(engine, "new", 3, "ana", {"label": "neutral"}).version == 3
    with pytest.raises(DraftInvalid, match="duplicate"):
        edit_example(
            engine,
            "new",
            3,
            "ana",
            {"premise": "The gate is open.", "hypothesis": "The gate is not open."},
        )
    with pytest.raises(DraftInvalid, match="identical"):
        edit_example(engine, "new", 3, "ana", {"hypothesis": "All the boats were repaired."})
    with pytest.raises(UserError, match="cannot edit author"):
        edit_example(engine, "new", 3, "ana", {"author": "eve"})
    with pytest.raises(UserError, match="no example 99"):
        edit_example(engine, "new", 99, "ana", {"label": "neutral"})


def test_retired_examples_leave_every_list_but_stay_in_the_store(engine):
    _three_pairs(engine)
    set_retired(engine, "new", 1, "ana", True, "ambiguous")  # the pair goes: 1 and its reverse 2
    assert find_examples(engine, "new", ExampleQuery(tag="Negation")) == []
    retired = find_examples(engine, "new", ExampleQuery(retired=True))
    assert [e.id for e in retired] == [1, 2] and all(e.retired for e in retired)
    with pytest.raises(UserError, match="retired already"):
        set_retired(engine, "new", 2, "ana", True)
    # Once retired, the pair can be written again; the old one then cannot come back (it would
    # be a duplicate).
    save_pair(engine, "new", "ben", GATE)
    with pytest.raises(UserError, match="cannot come back"):
        set_retired(engine, "new", 1, "ana", False)
    for example_id in (1, 2):
        history = example_history(engine, "new", example_id)
        assert [(h["retired"], h["change"]) for h in history] == [
            (False, "retire"),
            (True, "current"),
        ]
        assert history[1]["made_by"] == "ana" and history[1]["made_note"] == "ambiguous"

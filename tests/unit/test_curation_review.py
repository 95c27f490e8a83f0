"""Second opinions without a screen: blind reviews, agreement on labels and tags, the
disagreement queue, settling it, and the statistics that report all of it."""

from __future__ import annotations

import dataclasses

import krippendorff
import numpy as np
import pytest

from annotate.curation.examples import edit_example, example_history, get_example, save_pair
from annotate.curation.review import (
    BlindExample,
    ExampleChanged,
    blind_example,
    disagreement_queue,
    example_decisions,
    example_reviews,
    next_for_review,
    next_with_progress,
    review_progress,
    settle,
    submit_review,
)
from annotate.curation.sets import create_set
from annotate.curation.stats import set_statistics
from annotate.curation.validation import DraftInvalid, PairDraft
from annotate.errors import UserError

# (premise, hypothesis, forward, backward, tags) written by ana
PAIRS = [
    ("The gate is open.", "The gate is not open.", "contradiction", "contradiction", ["Negation"]),
    (
        "All ten boats were repaired.",
        "Some boats were repaired.",
        "entailment",
        "neutral",
        ["Quantifiers", "Upward monotone"],
    ),
]
# ben's blind opinion on examples 1..4: (label, tags). Tags belong to the pair: his review of
# the second direction (2, 4) takes the tags he gave the first (1, 3).
BEN = {
    1: ("contradiction", ["Negation", "Double negation"]),  # tags differ
    2: ("contradiction", []),  # agrees on the label
    3: ("entailment", ["Quantifiers"]),  # tags differ
    4: ("contradiction", []),  # label differs
}


@pytest.fixture
def engine(workspace):
    engine = workspace.engine
    create_set(engine, "s")
    for premise, hypothesis, forward, backward, tags in PAIRS:
        save_pair(engine, "s", "ana", PairDraft(premise, hypothesis, forward, backward, tags))
    return engine


def ben_reviews_all(engine) -> None:
    for example_id, (label, tags) in BEN.items():
        submit_review(engine, "s", "ben", example_id, label, tags)


def test_a_reviewer_gets_only_the_sentences(engine):
    blind = next_for_review(engine, "s", "ben")
    assert isinstance(blind, BlindExample)
    assert {f.name for f in dataclasses.fields(blind)} == {"id", "premise", "hypothesis", "version"}
    # New work comes newest first: the second pair, in set order.
    assert (blind.id, blind.premise) == (3, "All ten boats were repaired.")
    # An author never reviews their own examples; skipped ones are left for later.
    assert next_for_review(engine, "s", "ana") is None
    assert next_for_review(engine, "s", "ben", skip={3, 4}).id == 1
    assert review_progress(engine, "s", "ben").remaining == 4


def test_reviews_spread_breadth_first_and_are_checked(engine):
    submit_review(engine, "s", "ben", 1, "contradiction", ["Negation"])
    # New work goes newest first (breadth-first applies to the imported rest).
    assert next_for_review(engine, "s", "cara").id == 3
    progress = review_progress(engine, "s", "ben")
    assert (progress.done, progress.remaining) == (1, 3)
    with pytest.raises(UserError, match="reviewed example 1 already"):
        submit_review(engine, "s", "ben", 1, "neutral", ["Negation"])
    with pytest.raises(UserError, match="you wrote this example"):
        submit_review(engine, "s", "ana", 2, "neutral", ["Negation"])
    with pytest.raises(DraftInvalid) as caught:
        submit_review(engine, "s", "ben", 3, None, [])
    assert [p.field for p in caught.value.problems] == ["label", "tags"]
    # Example 2 is 1 reversed: ben tagged the pair with 1, so 2 needs a label only (26.12).
    with pytest.raises(DraftInvalid) as caught:
        submit_review(engine, "s", "ben", 2, None, [])
    assert [p.field for p in caught.value.problems] == ["label"]
    with pytest.raises(UserError, match="you tagged this pair already \\(example 1\\)"):
        submit_review(engine, "s", "ben", 2, "contradiction", ["Quantifiers"])


def test_the_next_example_and_the_progress_come_from_one_read(engine):
    """What the review screen asks after each submission: the same as the two questions."""
    submit_review(engine, "s", "ben", 1, "contradiction", ["Negation"])
    for skip in ((), {3}, {2, 3, 4}):
        found, progress = next_with_progress(engine, "s", "ben", skip)
        assert found == next_for_review(engine, "s", "ben", skip)
        assert progress == review_progress(engine, "s", "ben")
    assert next_with_progress(engine, "s", "ana") == (None, review_progress(engine, "s", "ana"))


def test_agreement_on_labels_and_tags(engine):
    ben_reviews_all(engine)
    review = set_statistics(engine, "s")["review"]
    assert (review["reviewed_examples"], review["reviews"], review["coverage"]) == (4, 4, 1.0)
    assert review["coders"] == ["ana", "ben"]
    # Labels: ana c c e n; ben c c e c.
    reference = krippendorff.alpha(
        reliability_data=np.array([[0, 0, 1, 2], [0, 0, 1, 0]], dtype=float),
        level_of_measurement="nominal",
    )
    assert review["labels"]["alpha"] == pytest.approx(reference)
    assert review["labels"]["pairwise_agreement"] == 0.75
    # Tags belong to the pair, so the unit is the pair (examples 1+2, 3+4) and ana and ben are
    # one coder pair on each: ana {Negation} / {Quantifiers, Upward monotone}, ben {Negation,
    # Double negation} / {Quantifiers}. Jaccard 1/2 on both pairs, none identical.
    tags = review["tags"]
    assert tags["mean_jaccard"] == pytest.approx(0.5)
    assert tags["exact_match"] == 0.0
    # Negation: ana 1 0, ben 1 0, agreement everywhere: α = 1; 2 codings, not 4.
    assert tags["per_tag"]["Negation"]["alpha"] == 1.0
    assert tags["per_tag"]["Negation"]["codings"] == 2
    # Upward monotone: ana 0 1, ben 0 0. Coincidences o00 = 2 (pair 1), o01 = o10 = 1 (pair 2);
    # n = 4, n0 = 3, n1 = 1. D_o = 2/4, D_e = 2·3·1/(4·3) = 1/2, α = 1 - (1/2)/(1/2) = 0.
    # (Counted on both directions it was 1 - (4/8)/(2·6·2/(8·7)) = -1/6.)
    assert tags["per_tag"]["Upward monotone"]["alpha"] == pytest.approx(0.0, abs=1e-12)
    upward = krippendorff.alpha(
        reliability_data=np.array([[0, 1], [0, 0]], dtype=float),
        level_of_measurement="nominal",
    )
    assert tags["per_tag"]["Upward monotone"]["alpha"] == pytest.approx(upward, abs=1e-12)
    assert tags["per_tag"]["Double negation"]["codings"] == 1  # ben's, once for pair 1
    assert "Datives" not in tags["per_tag"]
    # Logic (any of its tags): ana 1 1, ben 1 0: the same coincidences as Upward monotone
    # with 1 and 0 swapped, α = 0 (was -1/6 on four units).
    assert tags["per_category"]["Logic"]["alpha"] == pytest.approx(0.0, abs=1e-12)
    assert tags["per_category"]["Logic"]["codings"] == 3
    # Labels stay per direction: the four examples are four units, as above.


def test_the_disagreement_queue_and_who_settles_it(engine):
    ben_reviews_all(engine)
    queue = disagreement_queue(engine, "s")
    # Each pair's tags are disputed once, on its first direction (26.12).
    assert [(e.example.id, e.disputed) for e in queue] == [
        (1, ["tags"]),
        (3, ["tags"]),
        (4, ["label"]),
    ]
    opinions = queue[2].opinions
    assert [(o.who, o.role, o.label) for o in opinions] == [
        ("ana", "author", "neutral"),
        ("ben", "reviewer", "contradiction"),
    ]
    # Someone who took no part settles; the reviewer does not, nor the author on her own say.
    assert disagreement_queue(engine, "s", "ben") == []
    assert disagreement_queue(engine, "s", "ana") == []
    assert len(disagreement_queue(engine, "s", "ana", override=True)) == 3
    assert len(disagreement_queue(engine, "s", "cara")) == 3
    with pytest.raises(UserError, match="ben reviewed example 4"):
        settle(engine, "s", 4, "ben", "contradiction", ["Quantifiers"])
    with pytest.raises(UserError, match="no open disagreement"):
        settle(engine, "s", 2, "cara", "contradiction", ["Negation"])

    settled = settle(
        engine,
        "s",
        4,
        "ana",
        "contradiction",
        ["Quantifiers", "Upward monotone"],
        "ben is right",
        override_reason="the only other curator is ben",
    )
    assert settled.label == "contradiction" and settled.version == 2
    history = example_history(engine, "s", 4)
    assert (history[0]["label"], history[0]["change"], history[0]["changed_by"]) == (
        "neutral",
        "adjudication",
        "ana",
    )
    # Keeping the author's values settles too, without a new version.
    kept = settle(engine, "s", 1, "cara", "contradiction", ["Negation"], "one tag is enough")
    assert kept.version == 1
    assert [e.example.id for e in disagreement_queue(engine, "s")] == [3]
    # Agreement still compares the independent judgements, not the settled values.
    assert set_statistics(engine, "s")["review"]["labels"]["pairwise_agreement"] == 0.75


def test_a_review_is_of_the_version_shown_and_refused_when_the_sentences_changed(engine):
    shown = next_for_review(engine, "s", "ben")
    assert (shown.id, shown.version) == (3, 1)
    edit_example(engine, "s", 3, "cara", {"hypothesis": "Some boats were fixed."})  # meanwhile
    with pytest.raises(
        ExampleChanged,
        match=r"^example 3 changed since you opened it \(now version 2\): look again$",
    ):
        submit_review(engine, "s", "ben", 3, "entailment", ["Quantifiers"], version=shown.version)
    assert example_reviews(engine, "s", 3) == []
    assert get_example(engine, "s", 3).label_unchecked  # still to check: nobody saw version 2
    # A change that leaves the sentences alone leaves the review standing, as of the version
    # the reviewer saw.
    shown = next_for_review(engine, "s", "ben", skip={3, 4})
    assert (shown.id, shown.version) == (1, 1)
    edit_example(engine, "s", 1, "cara", {"note": "from the gate sign"})
    submit_review(engine, "s", "ben", 1, "contradiction", ["Negation"], version=shown.version)
    [review] = example_reviews(engine, "s", 1)
    assert (review.example_version, review.stale) == (1, False)


def test_a_decision_on_an_example_edited_since_it_was_shown_is_refused(engine):
    submit_review(engine, "s", "ben", 1, "neutral", ["Negation", "Double negation"])
    shown = disagreement_queue(engine, "s", "cara")[0]
    assert (shown.example.id, shown.disputed) == (1, ["label", "tags"])
    edit_example(engine, "s", 1, "dan", {"label": "neutral"}, "ben is right")  # meanwhile
    with pytest.raises(
        ExampleChanged,
        match=r"^example 1 changed since you opened it \(now version 2\): look again$",
    ):
        settle(engine, "s", 1, "cara", "contradiction", ["Negation"], version=shown.example.version)
    assert get_example(engine, "s", 1).label == "neutral"  # dan's fix stands
    again = disagreement_queue(engine, "s", "cara")[0]
    assert (again.example.version, again.disputed) == (2, ["tags"])
    settled = settle(engine, "s", 1, "cara", "neutral", ["Negation"], version=2)
    assert settled.label == "neutral" and disagreement_queue(engine, "s") == []


def test_a_decision_on_an_example_another_adjudicator_settled_meanwhile_says_so(engine):
    submit_review(engine, "s", "ben", 2, "neutral", ["Negation"])
    cara_sees = disagreement_queue(engine, "s", "cara")[0]
    dan_sees = disagreement_queue(engine, "s", "dan")[0]
    # cara keeps ana's label: the example's version stays as dan's screen showed it
    settle(
        engine,
        "s",
        2,
        "cara",
        "contradiction",
        ["Negation"],
        version=1,
        reviews_seen=cara_sees.review_ids,
    )
    with pytest.raises(ExampleChanged, match=r"^example 2 was settled since you opened it"):
        settle(
            engine,
            "s",
            2,
            "dan",
            "neutral",
            ["Negation"],
            version=dan_sees.example.version,
            reviews_seen=dan_sees.review_ids,
        )
    assert [d.decided_by for d in example_decisions(engine, "s", 2)] == ["cara"]


def dan_settles_as_shown(engine, entry) -> None:
    """dan settles example 1 as contradiction (Negation) from the queue `entry` his screen
    showed: its version and the reviews it listed."""
    settle(
        engine,
        "s",
        1,
        "dan",
        "contradiction",
        ["Negation"],
        version=entry.example.version,
        reviews_seen=entry.review_ids,
    )


def test_a_decision_is_refused_when_a_review_arrived_since_it_was_shown(engine):
    """A review given while the disagreement was on the adjudicator's screen is a change: the
    decision would cover an opinion nobody showed them. Reviews do not refuse each other."""
    cara_sees = blind_example(engine, "s", "cara", 1)  # her review screen opens first
    submit_review(engine, "s", "ben", 1, "neutral", ["Negation"])
    shown = disagreement_queue(engine, "s", "dan")[0]
    assert [o.who for o in shown.opinions] == ["ana", "ben"]
    # cara's review, from the screen she opened before ben's review, is taken: same sentences.
    submit_review(engine, "s", "cara", 1, "entailment", ["Negation"], version=cara_sees.version)
    assert get_example(engine, "s", 1).version == shown.example.version  # a review is no edit
    with pytest.raises(
        ExampleChanged,
        match=r"^example 1 has a new review since you opened it: look again$",
    ) as refused:
        dan_settles_as_shown(engine, shown)
    assert refused.value.new_reviews == 1
    assert example_decisions(engine, "s", 1) == []  # nothing decided
    again = disagreement_queue(engine, "s", "dan")[0]
    assert [(o.who, o.label) for o in again.opinions][1:] == [
        ("ben", "neutral"),
        ("cara", "entailment"),
    ]
    dan_settles_as_shown(engine, again)
    assert disagreement_queue(engine, "s") == []  # both reviews covered: they were shown


def test_a_review_of_the_reverse_direction_counts_when_the_pairs_tags_are_disputed(engine):
    submit_review(engine, "s", "ben", 1, "contradiction", ["Negation", "Double negation"])
    shown = disagreement_queue(engine, "s", "dan")[0]
    assert (shown.example.id, shown.disputed) == (1, ["tags"])
    submit_review(engine, "s", "cara", 2, "contradiction", ["Negation", "Lexical entailment"])
    with pytest.raises(ExampleChanged, match="has a new review since you opened it"):
        dan_settles_as_shown(engine, shown)
    # A review of another pair leaves this decision alone.
    submit_review(engine, "s", "eve", 4, "contradiction", ["Quantifiers"])
    again = disagreement_queue(engine, "s", "dan")[0]
    assert [o.who for o in again.opinions] == ["ana", "ben", "cara"]
    dan_settles_as_shown(engine, again)
    assert [e.example.id for e in disagreement_queue(engine, "s")] == [3, 4]  # eve's


def test_the_queue_table_says_whose_opinion_is_of_the_reverse_direction(engine, cli):
    """ben judged example 1 neutral and its reverse contradiction: the table must not read as
    two labels by ben for example 1."""
    submit_review(engine, "s", "ben", 1, "neutral", ["Negation", "Double negation"])
    submit_review(engine, "s", "ben", 2, "contradiction", [])
    table = " ".join(cli("curate", "queue", "s").stdout.split())
    assert "ben: neutral" in table
    assert "ben (reviewer of the reverse direction): contradiction" in table
    assert "ben: contradiction" not in table


def test_an_author_settling_her_own_example_needs_a_recorded_override(engine):
    """26.11: adjudication needs someone other than the author, or an override with a reason."""
    from sqlmodel import Session, select

    from annotate.store.curation_models import CurationDecision

    ben_reviews_all(engine)
    for reason in ("", "   "):
        with pytest.raises(UserError, match="ana wrote example 4: someone who neither wrote"):
            settle(engine, "s", 4, "ana", "contradiction", ["Quantifiers"], override_reason=reason)
    assert 4 in [e.example.id for e in disagreement_queue(engine, "s")]  # nothing settled
    settle(
        engine,
        "s",
        4,
        "ana",
        "neutral",
        ["Quantifiers", "Upward monotone"],
        override_reason=" sole curator ",
    )
    settle(engine, "s", 1, "cara", "contradiction", ["Negation"])
    with Session(engine) as session:
        stored = {
            d.example_id: (d.decided_by, d.override_reason)
            for d in session.scalars(select(CurationDecision))
        }
    assert stored == {4: ("ana", "sole curator"), 1: ("cara", None)}


def test_a_pairs_tags_are_reviewed_and_settled_once(engine):
    """26.12: tags belong to the pair; two reviewers disputing them on either direction give
    one tag dispute, settled once for both directions."""
    submit_review(engine, "s", "ben", 1, "contradiction", ["Negation", "Double negation"])
    submit_review(engine, "s", "cara", 2, "contradiction", ["Negation", "Double negation"])
    queue = disagreement_queue(engine, "s")
    assert [(e.example.id, e.disputed) for e in queue] == [(1, ["tags"])]
    roles = [(o.who, o.role) for o in queue[0].opinions]
    assert roles == [
        ("ana", "author"),
        ("ben", "reviewer"),
        ("cara", "reviewer of the reverse direction"),
    ]
    assert disagreement_queue(engine, "s", "cara") == []  # she took part in the tag dispute
    settle(engine, "s", 1, "dan", "contradiction", ["Negation", "Double negation"])
    assert disagreement_queue(engine, "s") == []
    assert get_example(engine, "s", 2).fine_tags == ["Negation", "Double negation"]
    # ben reviews the reverse direction: a label only, his tags come with it
    submit_review(engine, "s", "ben", 2, "contradiction", [])
    assert disagreement_queue(engine, "s") == []


def test_a_later_disagreeing_review_reopens_a_settled_example(engine):
    ben_reviews_all(engine)
    settle(engine, "s", 4, "cara", "contradiction", ["Quantifiers", "Upward monotone"])
    assert 4 not in [e.example.id for e in disagreement_queue(engine, "s")]
    submit_review(engine, "s", "cara", 4, "neutral", ["Quantifiers", "Upward monotone"])
    assert 4 in [e.example.id for e in disagreement_queue(engine, "s")]


def test_agreement_uses_the_example_as_the_reviewer_saw_it(engine):
    submit_review(engine, "s", "ben", 4, "contradiction", ["Quantifiers", "Upward monotone"])
    edit_example(engine, "s", 4, "ana", {"label": "contradiction"})
    assert get_example(engine, "s", 4).label == "contradiction"
    labels = set_statistics(engine, "s")["review"]["labels"]
    assert labels["pairwise_agreement"] == 0.0  # ben disagreed with the version he saw
    assert disagreement_queue(engine, "s") == []  # but the example now agrees


def test_statistics_count_categories_tags_labels_and_domains(engine):
    stats = set_statistics(engine, "s")
    assert (stats["examples"], stats["pairs"], stats["untagged"], stats["retired"]) == (4, 2, 0, 0)
    assert stats["labels"] == {"entailment": 1, "neutral": 1, "contradiction": 2}
    assert stats["coarse"]["Logic"] == {
        "count": 4,
        "labels": {"entailment": 1, "neutral": 1, "contradiction": 2},
    }
    assert stats["coarse"]["Lexical Semantics"]["count"] == 2
    assert stats["coarse"]["Knowledge"]["count"] == 0
    assert stats["fine"]["Logic"]["Negation"]["count"] == 2
    assert len([t for tags in stats["fine"].values() for t in tags]) == 33
    assert stats["domains"] == {"(none)": 4}
    assert stats["review"]["labels"] is None and stats["review"]["coverage"] == 0.0


def test_show_says_who_settled_it_when_the_authors_label_is_kept(engine, cli):
    """Issue 39, item 8: keeping the author's values makes no new version, and `curate show`
    still says who settled the disagreement and why."""
    ben_reviews_all(engine)
    settle(engine, "s", 1, "cara", "contradiction", ["Negation"], "one tag is enough")
    shown = cli("curate", "show", "s", "1", "--format", "json").json()
    assert [(d["decided_by"], d["label"], d["note"]) for d in shown["decisions"]] == [
        ("cara", "contradiction", "one tag is enough")
    ]
    assert len(shown["history"]) == 1  # no new version: the history alone would not say it
    table = " ".join(cli("curate", "show", "s", "1").stdout.split())
    assert "Adjudication (1)" in table and "one tag is enough" in table
    # An example nobody settled shows no adjudication at all.
    assert cli("curate", "show", "s", "2", "--format", "json").json()["decisions"] == []


def test_a_curator_typing_her_name_in_another_letter_case_is_one_curator(workspace):
    """Names equal under Unicode case folding are one curator, stored and shown under the
    spelling first recorded: Léa typing LÉA is never served her own pairs, nor counted twice."""
    from annotate.curation.desk import CurationDesk
    from annotate.curation.examples import ExampleQuery, find_examples
    from annotate.curation.review import ReviewFilter, blind_example, pair_tags_reviewed

    engine = workspace.engine
    lea, capitals = "L\u00e9a", "L\u00c9A"
    create_set(engine, "c", created_by=lea)
    save_pair(engine, "c", lea, PairDraft(*PAIRS[0]))  # examples 1, 2
    save_pair(engine, "c", "sam", PairDraft(*PAIRS[1]))  # examples 3, 4
    save_pair(
        engine,
        "c",
        capitals,
        PairDraft("Kim ran.", "Kim moved.", "entailment", "neutral", ["Lexical entailment"]),
    )
    for typed in (capitals, "le\u0301a", " l\u00c9a ", "LE\u0301A"):
        # None of her own pairs (1, 2, 5, 6) are served to her: only sam's.
        served = next_for_review(engine, "c", typed)
        assert served is not None and served.id in (3, 4)
        assert next_for_review(engine, "c", typed, skip={3, 4}) is None
        assert blind_example(engine, "c", typed, 1) is None
        assert review_progress(engine, "c", typed).remaining == 2
        assert len(find_examples(engine, "c", ExampleQuery(author=typed))) == 4
        assert ReviewFilter(author=typed).matches(get_example_row(engine, 5))
        assert CurationDesk.open(engine, "c", typed).curator == lea  # the screens say Léa
    assert {e.author for e in find_examples(engine, "c", ExampleQuery())} == {lea, "sam"}
    with pytest.raises(UserError, match="you wrote this example"):
        submit_review(engine, "c", capitals, 1, "contradiction", ["Negation"])

    submit_review(engine, "c", capitals, 3, "neutral", ["Quantifiers"])
    with pytest.raises(UserError, match="you reviewed example 3 already"):
        submit_review(engine, "c", "l\u00e9a", 3, "entailment", ["Quantifiers"])
    assert pair_tags_reviewed(engine, "c", "l\u00e9a", 4) == 3  # her tags of the pair
    assert [r.reviewer for r in example_reviews(engine, "c", 3)] == [lea]
    assert review_progress(engine, "c", "LE\u0301A").done == 1
    assert review_progress(engine, "c", "LEA").done == 0  # no accent: somebody else
    # She reviewed example 3: she does not settle its disagreement, in any case.
    assert disagreement_queue(engine, "c", capitals) == []
    with pytest.raises(UserError, match="reviewed example 3"):
        settle(engine, "c", 3, "l\u00e9a", "neutral", ["Quantifiers"])
    settle(engine, "c", 3, "Kim", "neutral", ["Quantifiers"])
    edit_example(engine, "c", 3, "KIM", {"note": "settled"})
    assert [d.decided_by for d in example_decisions(engine, "c", 3)] == ["Kim"]
    assert {h["made_by"] for h in example_history(engine, "c", 3)} == {"sam", "Kim"}

    stats = set_statistics(engine, "c")
    assert stats["authors"] == {lea: 4, "sam": 2}
    assert sorted(stats["review"]["coders"]) == sorted([lea, "sam"])
    # Case folding, not lower-casing: "ß" folds to "ss", so GROSS is Groß.
    submit_review(engine, "c", "Gro\u00df", 1, "contradiction", ["Negation"])
    assert review_progress(engine, "c", "GROSS").done == 1
    assert next_for_review(engine, "c", "GROSS", skip={2, 3, 4, 5, 6}) is None


def get_example_row(engine, example_id: int):
    from sqlmodel import Session

    from annotate.store.curation_models import CurationExample

    with Session(engine) as session:
        row = session.get(CurationExample, example_id)
        assert row is not None
        return row

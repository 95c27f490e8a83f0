"""Gold suspects: items where the human answer disagrees with gold, strongest disagreement
first, for adjudication (gold errors cap any human-vs-model comparison).

- classes: the majority differs from gold; ordered by the share of votes against gold;
- MultiRC: questions with any answer judged against gold;
- ReCoRD: the majority entity matches no gold answer (after normalisation);
- ratings: the aggregated rating is REGRESSION_SUSPECT points or more from gold.
"""

from __future__ import annotations

import numpy as np

from annotate.report.aggregation.majority import UnitVotes, answer_of, votes_of
from annotate.report.aggregation.study import Aggregated
from annotate.report.cells import (
    Section,
    share,
    votes_text,
)
from annotate.report.data.coding import CodedStudy
from annotate.report.model.schema import (
    GoldSuspect,
    JudgedAnswer,
    LabelSuspect,
    QuestionSuspect,
    RatingSuspect,
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single
from annotate.scoring.metrics import record_scores

SUSPECTS_SHOWN = 10
GOLD_SUSPECTS_LISTED = 1000
"""The report lists at most this many gold suspects, strongest first, and counts them all."""
REGRESSION_SUSPECT = 1.0
"""An aggregated rating this many points or more from gold makes an item a gold suspect."""


def gold_suspects(coded: CodedStudy, final: Aggregated) -> list[GoldSuspect]:
    """Items whose human answer disagrees with gold, strongest disagreement first."""
    if coded.kind == "regression":
        diff = np.abs(final.pred - coded.gold_number)
        hit = np.flatnonzero(np.isfinite(diff) & (diff >= REGRESSION_SUSPECT))
        hit = hit[np.argsort(-diff[hit], kind="stable")]
        ratings: dict[int, list[float]] = {}
        wanted = set(hit.tolist())
        for u, v in zip(coded.label_unit.tolist(), coded.label_number.tolist(), strict=True):
            if u in wanted:
                ratings.setdefault(u, []).append(v)
        return [
            RatingSuspect.model_construct(
                item=str(coded.unit_name[u]),
                gold=float(coded.gold_number[u]),
                human=float(final.pred[u]),
                ratings=sorted(ratings.get(u, [])),
                difference=float(diff[u]),
            )
            for u in hit.tolist()
        ]
    votes = final.votes
    assert votes is not None
    pred = final.pred
    n_labels = votes.n_labels.astype(float)
    top_share = np.where(n_labels > 0, votes.top / np.maximum(n_labels, 1), 0.0)
    if coded.kind == "entity_choice":
        return _entity_suspects(coded, final, top_share)
    gold = coded.gold_code
    wrong = (gold >= 0) & (pred >= 0) & (pred != gold)
    against = np.where(n_labels > 0, 1 - votes.votes_for(gold) / np.maximum(n_labels, 1), 0.0)
    if coded.kind == "multi_answer":
        return _multi_suspects(coded, votes, wrong, against)
    units = np.flatnonzero(wrong)
    units = units[np.lexsort((units, -top_share[units], -against[units]))]
    raw = _raw_answers(coded, units) if coded.spec.answer_scale else {}
    out: list[GoldSuspect] = []
    for u in units.tolist():
        out.append(
            LabelSuspect.model_construct(
                item=str(coded.unit_name[u]),
                gold=coded.classes[gold[u]],
                majority=coded.classes[pred[u]],
                votes=votes_of(votes, u, coded.classes),
                against_gold=float(against[u]),
                answers=raw.get(u, {}) if raw else None,
            )
        )
    return out


def _raw_answers(coded: CodedStudy, units: np.ndarray) -> dict[int, dict[str, int]]:
    """CB: the 7-point answers behind each listed unit's votes."""
    wanted = set(units.tolist())
    out: dict[int, dict[str, int]] = {}
    for u, v in zip(coded.label_unit.tolist(), coded.label_number.tolist(), strict=True):
        if u in wanted and np.isfinite(v):
            key = f"{v:g}"
            out.setdefault(u, {})
            out[u][key] = out[u].get(key, 0) + 1
    return {u: dict(sorted(d.items())) for u, d in out.items()}


def _multi_suspects(
    coded: CodedStudy, votes: UnitVotes, wrong: np.ndarray, against: np.ndarray
) -> list[GoldSuspect]:
    by_item: dict[int, list[int]] = {}
    for u in np.flatnonzero(wrong).tolist():
        by_item.setdefault(int(coded.unit_item[u]), []).append(u)
    rows = []
    for item, units in by_item.items():
        strength = float(np.mean(against[units]))
        rows.append((-len(units), -strength, item, units, strength))
    rows.sort()
    names = coded.items["source_id"].astype(str).tolist()
    return [
        QuestionSuspect.model_construct(
            item=names[item],
            against_gold=strength,
            answers=[
                JudgedAnswer.model_construct(
                    answer=str(coded.unit_name[u]).rsplit("/", 1)[-1],
                    gold=coded.classes[coded.gold_code[u]],
                    majority=answer_of(
                        coded.classes, int(votes.candidates[u][votes.counts[u].argmax()])
                    ),
                    votes=votes_of(votes, u, coded.classes),
                )
                for u in units
            ],
        )
        for _, _, item, units, strength in rows
    ]


def _entity_suspects(
    coded: CodedStudy, final: Aggregated, top_share: np.ndarray
) -> list[GoldSuspect]:
    votes = final.votes
    assert votes is not None
    rows = []
    for u, code in enumerate(final.pred.tolist()):
        golds = coded.gold_entities[u]
        if not golds or code < 0:
            continue
        if record_scores(coded.classes[code], golds)[1] == 1.0:
            continue
        counts = votes_of(votes, u, coded.classes)
        for_gold = sum(n for text, n in counts.items() if record_scores(text, golds)[1] == 1.0)
        total = sum(counts.values())
        against = 1 - for_gold / total if total else 0.0
        rows.append((-against, -top_share[u], u, counts, against))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return [
        LabelSuspect.model_construct(
            item=str(coded.unit_name[u]),
            gold=list(coded.gold_entities[u] or []),
            majority=coded.classes[int(final.pred[u])],
            votes=counts,
            against_gold=float(against),
        )
        for _, _, u, counts, against in rows
    ]


def _suspects_section(r: StudyReport) -> Section | None:
    s = r.gold_suspects
    if not s:
        return None
    shown = s[:SUSPECTS_SHOWN]
    total = max(r.n_gold_suspects, len(s))
    title = f"Gold suspects: the human answer disagrees with gold ({total}; strongest first)"
    # A report's suspects are all of one kind (the task's).
    ratings = [x for x in shown if isinstance(x, RatingSuspect)]
    questions = [x for x in shown if isinstance(x, QuestionSuspect)]
    labels = [x for x in shown if isinstance(x, LabelSuspect)]
    if ratings:
        rows = [
            [x.item, f"{x.gold:g}", f"{x.human:.2f}", ", ".join(f"{v:g}" for v in x.ratings)]
            for x in ratings
        ]
        return title, ["Item", "Gold", "Human", "Ratings"], rows
    if questions:
        rows = [
            [
                x.item,
                "; ".join(
                    f"{a.answer}: gold {a.gold}, votes {votes_text(a.votes)}" for a in x.answers
                ),
                share(x.against_gold),
            ]
            for x in questions
        ]
        return title, ["Question", "Answers judged against gold", "Against gold"], rows
    rows = []
    for x in labels:
        gold = x.gold if isinstance(x.gold, str) else " / ".join(x.gold)
        votes = votes_text(x.votes)
        if x.answers:
            votes += f" (scale: {votes_text(x.answers)})"
        rows.append([x.item, gold, x.majority, votes, share(x.against_gold)])
    return title, ["Item", "Gold", "Majority", "Votes", "Against gold"], rows


SECTION = ReportSection("gold_suspects", single(_suspects_section))

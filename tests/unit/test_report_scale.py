"""The report at scale: stages report progress, the JSON is compact unless --indent, and the
gold suspects are capped with a count."""

from __future__ import annotations

import json

import numpy as np
import pytest

from annotate.report.build import build_report
from annotate.report.data.loading import StudyData
from annotate.report.sections.suspects import GOLD_SUSPECTS_LISTED
from tests.engine_helpers import rte_answers_study
from tests.unit.test_report import E, N, add_study


def wrong_gold_study(n_items: int) -> StudyData:
    """Every item's 3 annotators agree on the answer the gold does not give."""
    gold = np.where(np.arange(n_items) % 2, "entailment", "not_entailment")
    wrong = np.zeros((n_items, 3), dtype=bool)
    who = np.tile(np.arange(3), (n_items, 1))
    return rte_answers_study(gold, wrong, who, name="wrong", seconds=4.0)


def test_gold_suspects_are_capped_and_counted():
    n = GOLD_SUSPECTS_LISTED + 200
    report = build_report(wrong_gold_study(n), bootstrap=0, aggregation_models=False)
    assert len(report.gold_suspects) == GOLD_SUSPECTS_LISTED
    assert report.n_gold_suspects == n
    data = report.to_json()
    assert data["n_gold_suspects"] == n and len(data["gold_suspects"]) == GOLD_SUSPECTS_LISTED
    assert any(f"{n:,} gold suspects: the strongest 1,000 are listed" in x for x in report.notes)


def test_report_json_is_compact_unless_indented(cli, workspace):
    add_study(
        workspace.engine,
        "j",
        "glue/mnli-m",
        [{"source_id": str(i), "gold": E} for i in range(3)],
        {str(i): [E, E, N] for i in range(3)},
    )
    compact = cli("report", "j", "--format", "json", "--bootstrap", "0").stdout
    indented = cli("report", "j", "--format", "json", "--bootstrap", "0", "--indent", "2").stdout
    assert compact.count("\n") == 1 and compact.startswith('{"study":"j","task":')
    assert indented.count("\n") > 50
    assert json.loads(compact) == json.loads(indented)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--indent", "2"), "--indent indents --format json (and --schema), not table"),
        (("--format", "html", "--indent", "2"), "--indent indents --format json"),
        (("--format", "markdown", "--intervals", "pm"), "--intervals pm writes the LaTeX table"),
    ],
)
def test_an_option_of_another_format_is_refused(cli, args, said):
    # each was accepted and ignored: a table, not indented JSON; brackets, not ±
    result = cli("report", "any", *args)
    assert result.code == 1 and f"error: {said}" in result.stderr

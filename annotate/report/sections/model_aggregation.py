"""Model-based aggregation beside the majority: the score under each aggregation, each
annotator's estimated competence, and the units where the models and the majority disagree."""

from __future__ import annotations

from annotate.report.aggregation.estimators import ESTIMATORS, MAJORITY
from annotate.report.aggregation.latent import fit_in_interval
from annotate.report.cells import Section, coef, pct, votes_text
from annotate.report.model.schema import ModelAggregation
from annotate.report.sections.base import ReportSection
from annotate.wording import count_of, plural

DISAGREEMENTS_SHOWN = 10


def model_aggregation_sections(m: ModelAggregation | None) -> list[Section]:
    if m is None:
        return []
    if not m.available:
        names = ", ".join(e.title for e in ESTIMATORS)
        return [("Model-based aggregation", ["", ""], [[names, m.note or ""]])]
    rows = []
    for e in m.estimators:
        interval = e.interval
        rows.append(
            [
                e.title,
                pct(e.task_score.value),
                "–"
                if interval is None or interval.low is None
                else f"[{pct(interval.low)}, {pct(interval.high)}]",
                "–" if interval is None else fit_in_interval(interval.method),
                "the study's rule"
                if e.method == MAJORITY.method
                else f"{count_of(e.n_changed, m.unit)} {plural(e.n_changed, 'differs')}",
            ]
        )
    # The interval's method (in the JSON) says whether the model was refitted per bootstrap
    # replicate or held fixed: the table says it too, beside each interval.
    headers = ["Aggregation", "Score", "95% CI", "Model in the CI", "Detail"]
    sections: list[Section] = [("Model-based aggregation", headers, rows)]
    titles = {e.method: e.title for e in ESTIMATORS}
    sections.append(
        (
            "Model fits (EM until the log-likelihood changes by less than the tolerance)",
            ["Model", "Iterations", "Log-likelihood", "Converged", "Tolerance", "Starts"],
            [
                [
                    titles.get(f.method, f.method),
                    str(f.iterations),
                    f"{f.log_likelihood:.2f}",
                    "yes" if f.converged else "no (iteration cap)",
                    f"{f.tolerance:g}",
                    "majority vote"
                    if f.restarts is None
                    else f"majority vote + {f.restarts} random (seed {f.seed}), best kept",
                ]
                for f in m.fits
            ],
        )
    )
    sections.append(
        (
            "Estimated annotator competence",
            ["Annotator", "Labels", *m.competence_titles.values()],
            [
                [
                    a.annotator,
                    str(a.n_labels),
                    *(coef(a.competence.get(method)) for method in m.competence_titles),
                ]
                for a in m.annotators
            ],
        )
    )
    models = [e for e in m.estimators if e.method != MAJORITY.method]
    if m.disagreements:
        shown = m.disagreements[:DISAGREEMENTS_SHOWN]
        more = len(m.disagreements) - len(shown)
        sections.append(
            (
                f"Where model-based aggregation and the majority disagree ({len(m.disagreements)}"
                + (f"; first {len(shown)} shown, all in the JSON" if more else "")
                + ")",
                ["Item", "Votes", "Majority", *(e.title for e in models), "Gold"],
                [
                    [
                        d.item,
                        votes_text(d.votes),
                        d.majority or "–",
                        *(d.answers.get(e.method) or "–" for e in models),
                        d.gold or "–",
                    ]
                    for d in shown
                ],
            )
        )
    return sections


SECTION = ReportSection(
    "model_aggregation", lambda r: model_aggregation_sections(r.model_aggregation)
)

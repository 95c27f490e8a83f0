"""The datasheet of a run: how the numbers of a study were obtained, the section reviewers ask
for (effective protocol and its assumptions, sample and seed, attrition, training pass rate, time
on task, cost, ties, flags and exclusions, dates, versions).

Computed from the store (every label of both phases, the gate decisions) and the study's report
(ties, sample); rendered by every report format through `datasheet_sections`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine, func, select
from sqlmodel import Session

from annotate.protocol import standing
from annotate.protocol.set_aside import SET_ASIDE
from annotate.protocol.timing import MEDIAN_SECONDS_HEADER, MEDIAN_SECONDS_OF, median_seconds
from annotate.report.data.loading import _seconds_expression, fetch_columns, find_study
from annotate.report.model.schema import (
    AnnotatorTime,
    Attrition,
    Cost,
    CrowdExit,
    CrowdSessions,
    Datasheet,
    Estimate,
    Exclusion,
    FlaggedLabel,
    StudyReport,
    TimeOnTask,
)
from annotate.report.sections.base import ReportSection
from annotate.scoring.intervals import share_interval
from annotate.store.label_times import dates_known
from annotate.store.models import Annotator, Item, Label, LabelImport, StudyItem, Visit
from annotate.store.queries import labels_of_study

TRAINING = "training"
TEST = "test"
HISTOGRAM_BINS = 20
# The headers name what the time-on-task table counts: set-aside answers are left out of it.
ANSWERS_HEADER = "Answers (training and test, set-aside ones left out)"
MINUTES_HEADER = "Total minutes (training and test, set-aside ones left out)"


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@dataclass
class LabelFacts:
    """What the datasheet needs of a study's labels, as columns (one entry per label): a large
    study has millions of labels, so no object per row."""

    phase: np.ndarray
    annotator: np.ndarray
    seconds: np.ndarray
    flagged: list[FlaggedLabel]
    first_shown: datetime | None
    last_answered: datetime | None

    def __len__(self) -> int:
        return len(self.phase)


def _label_facts(
    engine: Engine, study_id: int, test_labels: pd.DataFrame | None = None
) -> LabelFacts:
    """Every label's phase, annotator and seconds. `test_labels` (the report's own test-phase
    labels, with annotator and seconds) saves reading the test phase a second time."""
    with engine.connect() as conn:
        dialect = conn.dialect.name
        seconds = _seconds_expression(dialect)
        columns: list[Any] = [Label.phase, Label.annotator_id]
        columns += [seconds] if seconds is not None else [Label.shown_at, Label.answered_at]
        where = [Label.study_id == study_id]
        if test_labels is not None:
            where.append(Label.phase != TEST)
        cols = fetch_columns(conn, select(*columns).where(*where), len(columns))
        names = dict(conn.execute(select(Annotator.id, Annotator.name)).all())
        flagged = conn.execute(
            select(Label.phase, Item.source_id, Annotator.name, Label.comment)
            .join(Item, Item.id == Label.item_id)
            .join(Annotator, Annotator.id == Label.annotator_id)
            .where(Label.study_id == study_id, Label.flag == True)  # noqa: E712
            .order_by(Label.phase, Item.source_id, Annotator.name)
        ).all()
        first, last = conn.execute(
            select(func.min(Label.shown_at), func.max(Label.answered_at)).where(
                labels_of_study(conn, study_id)
            )
        ).one()
    if seconds is not None:
        secs = np.asarray(cols[2], dtype=float)
    else:
        secs = np.array(
            [(_utc(b) - _utc(a)).total_seconds() for a, b in zip(cols[2], cols[3], strict=True)]
        )
    ids = pd.Categorical(np.asarray(cols[1], dtype=np.int64))
    annotator = np.asarray([names[int(i)] for i in ids.categories], dtype=object)[ids.codes]
    phase = np.asarray(cols[0], dtype=object)
    if test_labels is not None:
        phase = np.concatenate([phase, np.full(len(test_labels), TEST, dtype=object)])
        annotator = np.concatenate(
            [annotator, np.asarray(test_labels["annotator"].astype(str), dtype=object)]
        )
        secs = np.concatenate([secs, test_labels["seconds"].to_numpy(dtype=float)])
    return LabelFacts(
        phase=phase,
        annotator=annotator,
        seconds=secs,
        flagged=[
            FlaggedLabel.model_construct(item=str(r[1]), annotator=r[2], phase=r[0], comment=r[3])
            for r in flagged
        ],
        first_shown=None if first is None else _utc(_as_datetime(first)),
        last_answered=None if last is None else _utc(_as_datetime(last)),
    )


def _as_datetime(value: Any) -> datetime:
    """min()/max() of a datetime column: SQLite gives the stored text, PostgreSQL a datetime."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def _n_training_items(engine: Engine, study_id: int) -> int:
    with engine.connect() as conn:
        return int(
            conn.execute(
                select(func.count()).where(
                    StudyItem.study_id == study_id, StudyItem.phase == TRAINING
                )
            ).scalar_one()
        )


def _store_revision(engine: Engine) -> str | None:
    from annotate.store.schema import read_revision

    return read_revision(engine)


def attrition(
    members: Sequence[standing.Member],
    crowd_abandoned: Sequence[str] | None = None,
    answered_aside: frozenset[str] = frozenset(),
) -> Attrition:
    """Attrition over the study's roster (protocol/standing.py): everyone with a gate decision
    or a label, so someone admitted by hand without training counts as admitted, not as
    having trained. Completed training is standing's rule (`Member.finished_training`, the one
    that moves an undecided annotator from training to waiting). In a crowd study, who
    abandoned is the crowd's one definition (`crowd_abandoned`, protocol/crowd_exits.py): a
    worker who left with a code (study_full, training_done) did not. `answered_aside`: who
    has test answers set aside by a refusal (protocol/set_aside.py); admitted again with none
    counted (their items full), they answered, they did not abandon."""
    started = {m.name for m in members if m.training_done > 0}
    completed = {m.name for m in members if m.finished_training}
    admitted = {m.name for m in members if m.gate == standing.ADMITTED}
    rejected = {m.name for m in members if m.gate == standing.REJECTED}
    pending = {m.name for m in members if m.gate == standing.PENDING}
    tested = {m.name for m in members if m.test_done > 0}
    left_in_training = (started - completed) & pending
    left_after_admission = admitted - tested - answered_aside
    abandoned = sorted(left_in_training | left_after_admission)
    if crowd_abandoned is not None:
        abandoned = sorted(crowd_abandoned)
    # The pass rate is over gate decisions on training: a worker of imported labels trained
    # nowhere here, so admitting or refusing them by hand passes or fails no training.
    imported = {m.name for m in members if m.imported}
    passed = len(admitted - imported)
    decided = passed + len(rejected - imported)
    low, high = share_interval(passed, decided)
    rate = Estimate.model_construct(
        value=passed / decided if decided else None,
        wilson_low=low if decided else None,
        wilson_high=high if decided else None,
    )
    return Attrition.model_construct(
        started_training=len(started),
        completed_training=len(completed),
        admitted=len(admitted),
        rejected=len(rejected),
        undecided=len(started & pending),
        labelled_test=len(tested),
        abandoned=len(abandoned),
        abandoned_names=abandoned,
        training_pass_rate=rate,
    )


def time_on_task(labels: LabelFacts) -> TimeOnTask:
    """Each annotator's answers and total minutes (both phases: the time they gave) and median
    seconds per test answer (protocol/timing.py: the annotator table's figure), and the
    distribution of seconds per test answer. Set-aside answers (protocol/set_aside.py) are in
    none of them: the count, the minutes and the median all rest on the labels the study's
    numbers rest on, as the attrition leaves the refused out of who gave test answers."""
    counted = labels.phase != SET_ASIDE
    frame = pd.DataFrame(
        {"name": labels.annotator[counted].astype(str), "seconds": labels.seconds[counted]}
    )
    # A label imported without times has NaN seconds: unknown, left out of every sum and
    # median; an annotator with no known time has no total (None, "unknown"), never 0.
    grouped = frame.groupby("name", sort=True)["seconds"]
    per = pd.DataFrame({"size": grouped.size(), "sum": grouped.sum(min_count=1)})
    measured = frame[labels.phase[counted] == MEDIAN_SECONDS_OF]
    medians = measured.groupby("name", sort=True)["seconds"].agg(median_seconds)
    rows = [
        AnnotatorTime.model_construct(
            name=str(name),
            n_labels=int(row["size"]),
            median_seconds=_or_none(medians.get(name)),
            total_minutes=_or_none(row["sum"] / 60),
        )
        for name, row in per.iterrows()
    ]
    totals = [r.total_minutes for r in rows if r.total_minutes is not None]
    test_secs = labels.seconds[labels.phase == TEST]
    test_secs = test_secs[np.isfinite(test_secs)]
    histogram: dict[str, list[float]] = {"edges": [], "counts": []}
    if len(test_secs):
        counts, edges = np.histogram(test_secs, bins=HISTOGRAM_BINS)
        histogram = {"edges": [float(e) for e in edges], "counts": [float(c) for c in counts]}
    return TimeOnTask.model_construct(
        annotators=rows,
        median_minutes_per_annotator=float(np.median(totals)) if totals else None,
        total_minutes=float(np.sum(totals)) if totals else (None if rows else 0.0),
        seconds_per_item_histogram=histogram,
    )


def _or_none(value: Any) -> float | None:
    """A median, or None for an annotator without test answers (pandas gives NaN or nothing)."""
    return None if value is None or pd.isna(value) else float(value)


def _cost(minutes: float | None, hourly_rate: float | None) -> Cost | None:
    if hourly_rate is None or minutes is None:  # no time known: no cost to estimate
        return None
    hours = minutes / 60
    return Cost.model_construct(
        hourly_rate=hourly_rate,
        hours=hours,
        estimated_cost=hours * hourly_rate,
        note="time on task (training and test answers, set-aside ones left out) x the hourly "
        "rate given with --set hourly_rate; reading guidelines and waiting are not counted",
    )


def _ties(report: StudyReport) -> dict[str, Any]:
    t = report.ties
    out: dict[str, Any] = {"rule": t.rule, "applies": t.applies, "n_tied": t.n_tied}
    if t.applies:
        out["unit"] = t.unit
        out["settled"] = {
            "at random (study seed)": t.resolved_at_random,
            "by dev majority class": t.resolved_by_dev_majority_class,
            "abstained (counted wrong)": t.abstained_counted_wrong,
            "open, awaiting an extra annotator (counted wrong)": t.open_counted_wrong,
        }
    if t.note:
        out["note"] = t.note
    return out


def _exclusions(report: StudyReport) -> list[Exclusion]:
    s = report.sample
    found = [
        Exclusion.model_construct(
            what="sampled test items without labels",
            n=s.n_sample - s.n_items_labelled,
            reason="not labelled yet: left out of every score",
        ),
        Exclusion.model_construct(
            what="items with fewer than k labels",
            n=s.n_items_labelled - s.n_items_complete,
            reason=f"aggregated from the labels they have (k = {s.annotators_per_item})",
        ),
        Exclusion.model_construct(
            what="labelled items not scored",
            n=s.n_items_labelled - s.n_items_scored if report.has_gold else s.n_items_labelled,
            reason="no gold label, or no aggregated answer",
        ),
    ]
    if report.ties.applies and report.ties.units_with_more_than_k_labels:
        found.append(
            Exclusion.model_construct(
                what=f"{report.ties.unit}s with more than k labels",
                n=report.ties.units_with_more_than_k_labels,
                reason="extra annotator asked to break a tie: all labels are counted",
            )
        )
    return found


def build_datasheet(
    engine: Engine,
    report: StudyReport,
    *,
    hourly_rate: float | None = None,
    test_labels: pd.DataFrame | None = None,
    members: list[standing.Member] | None = None,
) -> Datasheet:
    """The datasheet of study `report.study` (its report gives ties and the sample).
    `test_labels` and `members` (the roster) are the report's own, read once for both."""
    from annotate import __version__
    from annotate.store.schema import SCHEMA_HEAD

    study = find_study(engine, report.study)
    assert study.id is not None
    labels = _label_facts(engine, study.id, test_labels)
    if members is None:
        with Session(engine) as session:
            members = standing.roster(session, study.id)
    times = time_on_task(labels)
    detail = _import_detail(engine, study.id)
    protocol = dict(report.protocol)
    crowd = crowd_sessions(engine, report.study)
    return Datasheet.model_construct(
        protocol_name=protocol.get("name"),
        protocol=protocol,
        assumptions=list(protocol.get("assumptions") or []),
        sample_size=report.sample.n_sample,
        test_sample_setting=protocol.get("test_sample"),
        seed=protocol.get("seed"),
        training_items=_n_training_items(engine, study.id),
        attrition=attrition(
            members,
            crowd.abandoned_names if crowd is not None else None,
            frozenset(labels.annotator[labels.phase == SET_ASIDE].tolist()),
        ),
        time_on_task=times,
        cost=_cost(times.total_minutes, hourly_rate),
        ties=_ties(report),
        flagged=labels.flagged,
        excluded=_exclusions(report),
        first_label_at=_date(labels.first_shown, detail),
        last_label_at=_date(labels.last_answered, detail),
        software_version=__version__,
        store_schema_version=_store_revision(engine),
        schema_head=SCHEMA_HEAD,
        crowd=crowd.sessions if crowd is not None else None,
        collected=_collected(detail),
    )


@dataclass(frozen=True)
class CrowdPart:
    sessions: CrowdSessions
    abandoned_names: list[str]


def crowd_sessions(engine: Engine, study: str) -> CrowdPart | None:
    """Sessions, exits and pay of a crowd study, from its visits and the latest pay run; and
    who abandoned (for the attrition)."""
    from sqlmodel import Session

    from annotate.protocol import crowd, crowd_exits, pay
    from annotate.protocol.studies import load_study

    ctx = load_study(engine, study)
    config = crowd.config_of(ctx)
    if config is None:
        return None
    with Session(engine) as session:
        abandoned = crowd_exits.abandoned_workers(session, ctx)
        exits = [
            CrowdExit.model_construct(**vars(e))
            for e in crowd_exits.exit_counts(session, ctx, config)
        ]
        seconds = pay.time_on_task(session, ctx.id)
        n_sessions = session.scalar(
            select(func.count()).select_from(Visit).where(Visit.study_id == ctx.id)
        )
        hourly, currency = pay.paid_hourly(session, ctx.id)
        part = CrowdSessions.model_construct(
            platform=config.platform,
            workers=len(seconds),
            sessions=int(n_sessions or 0),
            abandoned_sessions=crowd.abandoned_visits(session, ctx),
            abandoned_workers=len(abandoned),
            outcomes=crowd.outcome_counts(session, ctx.id),
            exits=exits,
            median_session_minutes=float(np.median(list(seconds.values())) / 60)
            if seconds
            else None,
            median_effective_hourly_pay=hourly,
            currency=currency,
        )
    return CrowdPart(part, sorted(abandoned.values()))


def _import_detail(engine: Engine, study_id: int) -> dict[str, Any] | None:
    """An imported study's import record (None for a study run in annotate)."""
    with engine.connect() as conn:
        return conn.execute(
            select(LabelImport.detail).where(LabelImport.study_id == study_id)
        ).scalar_one_or_none()


def _collected(detail: dict[str, Any] | None) -> str | None:
    """How an imported study's labels were collected (None for a study run in annotate)."""
    return None if detail is None else str(detail.get("collected") or "collected outside annotate")


def _date(moment: datetime | None, detail: dict[str, Any] | None) -> str | None:
    """A first or last label's date; None for imported durations, laid end to end from 1970
    (their dates are made up: the assumptions say so)."""
    if moment is None or not dates_known(detail):
        return None
    return moment.isoformat(timespec="seconds")


# --- rendering as sections (title, headers, rows), shared by table, Markdown and HTML ---------


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _time(value: float | None, digits: int = 1) -> str:
    """A time: "unknown" where the labels carry none (imported without times), never 0."""
    return "unknown" if value is None else f"{value:.{digits}f}"


def _median_time(r: AnnotatorTime) -> str:
    """The median seconds per test answer: "no test answers" for someone with timed answers
    but none of them a test answer (a trainee turned away at the gate), not "unknown"."""
    if r.median_seconds is None and r.total_minutes is not None:
        return "no test answers"
    return _time(r.median_seconds)


def datasheet_sections(d: Datasheet) -> list[tuple[str, list[str], list[list[str]]]]:
    a = d.attrition
    rate = a.training_pass_rate
    rate_text = "–"
    if rate.value is not None:
        rate_text = f"{rate.value * 100:.1f}%"
        if rate.wilson_low is not None and rate.wilson_high is not None:
            rate_text += f" [{rate.wilson_low * 100:.1f}, {rate.wilson_high * 100:.1f}] (Wilson)"
    t = d.time_on_task
    rows = [
        ["Protocol", str(d.protocol_name or "")],
        *([["Collected", d.collected]] if d.collected else []),
        ["Sample", f"{d.sample_size} test items (setting: {d.test_sample_setting}); seed {d.seed}"],
        ["Training items", str(d.training_items)],
        ["Started training", str(a.started_training)],
        ["Completed training", str(a.completed_training)],
        ["Admitted / rejected / undecided", f"{a.admitted} / {a.rejected} / {a.undecided}"],
        ["Gave test answers (finished)", str(a.labelled_test)],
        [
            "Abandoned (attrition)" if d.crowd is None else "Abandoned (left without a code)",
            f"{a.abandoned}" + (f": {', '.join(a.abandoned_names)}" if a.abandoned_names else ""),
        ],
        ["Training pass rate", rate_text],
        [
            "Time on task",
            "unknown (the labels carry no times)"
            if t.total_minutes is None
            else f"median {_num(t.median_minutes_per_annotator)} min per annotator; "
            f"total {_num(t.total_minutes)} min",
        ],
    ]
    if d.cost is not None:
        rows.append(
            [
                "Estimated cost",
                f"{d.cost.estimated_cost:.2f} ({d.cost.hours:.2f} h x {d.cost.hourly_rate:g}/h; "
                f"{d.cost.note})",
            ]
        )
    ties = d.ties
    tie_text = f"rule {ties['rule']}; {ties['n_tied']} tied"
    settled = ties.get("settled") or {}
    parts = [f"{n} {how}" for how, n in settled.items() if n]
    if parts:
        tie_text += " (" + ", ".join(parts) + ")"
    if ties.get("note"):
        tie_text += f"; {ties['note']}"
    rows.append(["Ties", tie_text])
    rows.append(["Flagged labels", str(len(d.flagged))])
    for e in d.excluded:  # the reason says what became of them: not every one is left out
        rows.append([e.what[:1].upper() + e.what[1:], f"{e.n} ({e.reason})"])
    rows.append(["First label", d.first_label_at or "–"])
    rows.append(["Last label", d.last_label_at or "–"])
    rows.append(
        [
            "Software",
            f"annotate {d.software_version}; store schema {d.store_schema_version} "
            f"(newest {d.schema_head})",
        ]
    )
    if d.crowd is not None:
        c = d.crowd
        rows.append(
            [
                f"Crowd sessions ({c.platform})",
                f"{c.workers} workers, {c.sessions} sessions "
                f"({c.abandoned_sessions} left without a code); "
                f"median {_num(c.median_session_minutes)} min per worker (arrival to exit)",
            ]
        )
        for e in c.exits:
            rows.append(
                [
                    f"Exits, {c.platform} study {e.platform_study or 'any'} ({e.link} link)",
                    f"{e.outcome} ({e.code}): {e.workers}",
                ]
            )
        if not c.exits:
            rows.append(["Exits", "none yet"])
        pay_text = "no `annotate pay` run yet"
        if c.median_effective_hourly_pay is not None:
            pay_text = f"{c.median_effective_hourly_pay:.2f} {c.currency}/h (median, as paid)"
        rows.append(["Effective hourly pay", pay_text])
    for assumption in d.assumptions:
        rows.append(["Assumption", str(assumption)])
    out: list[tuple[str, list[str], list[list[str]]]] = [("Datasheet of the run", ["", ""], rows)]
    out.append(
        (
            "Time on task per annotator",
            [
                "Annotator",
                ANSWERS_HEADER,
                MEDIAN_SECONDS_HEADER,
                MINUTES_HEADER,
            ],
            [
                [r.name, str(r.n_labels), _median_time(r), _time(r.total_minutes)]
                for r in t.annotators
            ],
        )
    )
    if d.flagged:
        out.append(
            (
                "Flagged labels",
                ["Item", "Annotator", "Phase", "Comment"],
                [[f.item, f.annotator, f.phase, f.comment or ""] for f in d.flagged],
            )
        )
    return out


SECTION = ReportSection(
    "datasheet", lambda r: datasheet_sections(r.datasheet) if r.datasheet else []
)

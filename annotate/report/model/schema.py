"""The report's data, typed: what `build` computes and every renderer reads. `to_json()` gives
the `--format json` form; its keys and numbers are the report's public interface, so fields
keep the names and order of that JSON. Metric values are fractions (0..1).

A field that some reports leave out of the JSON (it does not apply to the task or the rule)
is named in the class's `omitted()`; everything else is always written, null when unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from annotate.report.model.base import JsonData, _none
from annotate.scoring.diagnostics import undefined_text


class AgreementEstimate(Protocol):
    """What a coefficient is made from (`stats.agreement.Estimate`)."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    note: str | None


# --- scores ----------------------------------------------------------------------------------


@dataclass
class Estimate(JsonData):
    """A value with its 95% bootstrap interval (accuracy also with the Wilson interval)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    wilson_low: float | None = None
    wilson_high: float | None = None

    @classmethod
    def of(cls, d: dict[str, Any]) -> Estimate:
        """From the scorers' {value, ci_low, ci_high} form."""
        return cls(d["value"], d["ci_low"], d["ci_high"])

    def omitted(self) -> set[str]:
        return _none(self, "wilson_low", "wilson_high")


@dataclass
class HeadlineInterval(JsonData):
    """The interval the quotable line gives, and which claim it supports."""

    low: float | None
    high: float | None
    method: str
    """How it is computed and what is held fixed (these annotators, these items' population)."""


@dataclass
class Sample(JsonData):
    n_sample: int
    """Test items in the sample."""
    n_items_labelled: int
    n_items_complete: int
    """Items with all the labels they take (annotate/completion.py: k, or fewer when decided
    early with stop_when_decided; an open extra-annotator tie is not complete)."""
    n_items_scored: int
    """Items with gold and a human answer."""
    n_labels: int
    labels_per_item: dict[str, int]
    """Number of labels -> number of items with that many (most labels first)."""
    annotators_per_item: int
    unit: str
    """What a vote is over: "item" or (MultiRC) "candidate answer"."""


@dataclass
class Confusion(JsonData):
    """Gold (rows) by human answer (columns; a last "(no answer)" column when any)."""

    gold: list[str]
    predicted: list[str]
    matrix: list[list[int]]
    unit: str


# --- annotators ------------------------------------------------------------------------------


@dataclass
class AnnotatorRow(JsonData):
    name: str
    n: int
    """Answers given."""
    scores: dict[str, float | None]
    """Metric -> score on the annotator's own items."""
    task_score: float | None
    agrees_with_majority: float | None
    """Share of their answers equal to the aggregated answer (None for ratings)."""
    seconds_per_item: float | None
    """Median seconds per test answer (protocol/timing.py)."""
    seconds_mean: float | None
    synthetic: bool = False
    """Made by `annotate simulate`, not a person."""
    wilson_low: float | None = None
    wilson_high: float | None = None
    """Wilson's bounds of the accuracy, where scoring.intervals.accuracy_wilson gives them."""

    def omitted(self) -> set[str]:
        return _none(self, "wilson_low", "wilson_high")


@dataclass
class Spread(JsonData):
    n: int
    mean: float | None
    median: float | None
    sd: float | None
    min: float | None
    max: float | None


@dataclass
class Individual(JsonData):
    """The spread of the individual annotators' scores."""

    task_score: Spread
    metrics: dict[str, Spread]


@dataclass
class CommitteeScore(JsonData):
    """The score of a majority of k labels drawn per item, averaged over draws."""

    k: int
    n_items: int
    draws: int
    scores: dict[str, float | None]
    task_score: float | None
    task_score_sd: float | None


# --- agreement -------------------------------------------------------------------------------


@dataclass
class Coefficient(JsonData):
    """An agreement coefficient with its interval: Krippendorff's α at `level` over `n_items`
    units with two or more labels, or Fleiss' κ over `n_items` complete units rated by
    `raters_per_item` each."""

    level: str | None = None
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str | None = None
    n_items: int | None = None
    raters_per_item: int | None = None
    kind: str = "alpha"
    """"alpha", "alpha-collapsed", "fleiss", "fleiss-skipped" (not computed, see note) or "ac1":
    which keys the JSON has (itself not written)."""

    def omitted(self) -> set[str]:
        skip = {"kind"} | _none(self, "note")
        if self.kind.startswith("fleiss"):
            return skip | {"level"}
        if self.kind == "ac1":
            return skip | {"level", "raters_per_item"}
        skip.add("raters_per_item")
        return skip | {"n_items"} if self.kind == "alpha-collapsed" else skip

    def key_order(self) -> list[str] | None:
        if self.kind == "fleiss-skipped":
            return ["value", "ci_low", "ci_high", "n_items", "raters_per_item", "note"]
        return None

    @classmethod
    def alpha(cls, level: str, e: AgreementEstimate, n_items: int) -> Coefficient:
        return cls(level, e.value, e.ci_low, e.ci_high, e.note or None, n_items)

    @classmethod
    def fleiss(cls, e: AgreementEstimate, n_items: int, raters: int | None) -> Coefficient:
        return cls(None, e.value, e.ci_low, e.ci_high, e.note or None, n_items, raters, "fleiss")


@dataclass
class PairKappa(JsonData):
    a: str
    b: str
    n: int
    """Items both labelled."""
    kappa: float | None


@dataclass
class PairSummary(JsonData):
    n_pairs: int
    mean: float | None
    median: float | None
    min: float | None
    max: float | None


@dataclass
class PartScore(JsonData):
    n: int
    scores: dict[str, float | None]
    task_score: float | None


@dataclass
class Agreement(JsonData):
    unit: str
    krippendorff_alpha: Coefficient
    krippendorff_alpha_collapsed: Coefficient | None
    """CB: α on the 3 classes after collapsing the 7-point answers (else left out)."""
    fleiss_kappa: Coefficient
    pairwise_cohen_kappa: list[PairKappa]
    pairwise_weights: str | None
    """"quadratic" for ratings, else None (unweighted)."""
    pairwise_summary: PairSummary
    item_agreement_histogram: dict[str, int]
    """"votes for the top answer/labels" -> number of units."""
    unanimous_vs_split: dict[str, PartScore] | None
    """Scores on unanimous vs split units ("unanimous", "split"); None without gold."""
    gwet_ac1: Coefficient | None = None
    """Gwet's AC1 over units with 2+ labels (issue 16); left out for ratings and ReCoRD."""

    def omitted(self) -> set[str]:
        return _none(self, "krippendorff_alpha_collapsed", "gwet_ac1")


@dataclass
class FileAgreement(JsonData):
    """`annotate agreement FILE`: agreement of a long-format label file."""

    file: str
    level: str
    n_items: int
    n_annotators: int
    n_labels: int
    n_missing: int
    values: list[str]
    krippendorff_alpha: Coefficient
    fleiss_kappa: Coefficient
    pairwise_cohen_kappa: list[PairKappa]
    pairwise_weights: str | None
    pairwise_summary: PairSummary
    item_agreement_histogram: dict[str, int] | None
    """Votes for the most chosen value per item (nominal level only: at ordinal, interval
    and ratio level the share of one exact value means nothing, so it is left out)."""
    bootstrap: dict[str, int]
    gwet_ac1: Coefficient | None = None
    """Gwet's AC1 over the file's values (nominal level only; else left out)."""
    computed_on: dict[str, str] | None = None
    """What each coefficient was computed on: which items, how many raters."""

    def omitted(self) -> set[str]:
        return _none(self, "gwet_ac1", "item_agreement_histogram", "computed_on")


# --- ties, diagnostics, models, suspects, gate, benchmark ------------------------------------


@dataclass
class TiedUnit(JsonData):
    item: str
    votes: dict[str, int]
    resolution: str
    result: str | None


@dataclass
class Ties(JsonData):
    """How the declared tie rule settled the tied units."""

    rule: str
    applies: bool
    """False for ratings (averaged: no ties); then only rule, note, n_tied and items."""
    unit: str = "item"
    n_tied: int = 0
    resolved_at_random: int = 0
    resolved_by_dev_majority_class: int = 0
    abstained_counted_wrong: int = 0
    open_counted_wrong: int = 0
    units_with_more_than_k_labels: int = 0
    dev_class_counts: dict[str, int] | None = None
    """The dev-majority-class rule's class counts (only with that rule)."""
    note: str | None = None
    items: list[TiedUnit] = field(default_factory=list)

    def key_order(self) -> list[str] | None:
        return None if self.applies else ["rule", "applies", "note", "n_tied", "items"]

    def omitted(self) -> set[str]:
        if not self.applies:
            return {f.name for f in fields(self)} - {"rule", "applies", "note", "n_tied", "items"}
        skip = _none(self, "note")
        if self.rule != "dev-majority-class":
            skip.add("dev_class_counts")
        return skip


@dataclass
class PhenomenonScore(JsonData):
    value: float | None
    n: int
    ci_low: float | None
    ci_high: float | None
    models: dict[str, PhenomenonScore] | None = None
    """The same score of each model (only on the human row)."""
    undefined: str | None = None
    """Why there is no value ("one class": the subset's gold holds one class); else None."""

    @classmethod
    def of(cls, d: dict[str, Any]) -> PhenomenonScore:
        models = d.get("models")
        return cls(
            d["value"],
            d["n"],
            d["ci_low"],
            d["ci_high"],
            None if models is None else {m: cls.of(e) for m, e in models.items()},
            d.get("undefined"),
        )

    def omitted(self) -> set[str]:
        return _none(self, "models", "undefined")

    def text(self, digits: int = 2) -> str:
        """The value as every format writes it: `0.57`, or `undefined (n=3, one class)`."""
        if self.undefined is not None:
            return undefined_text(self.n, self.undefined)
        return "–" if self.value is None else f"{self.value:.{digits}f}"


@dataclass
class Diagnostics(JsonData):
    """R3 / MCC per linguistic phenomenon (coarse category and fine tag)."""

    metric: str
    note: str
    n_tagged_items: int
    all_tagged: PhenomenonScore
    coarse: dict[str, PhenomenonScore]
    fine: dict[str, dict[str, PhenomenonScore]]

    @classmethod
    def of(cls, d: dict[str, Any]) -> Diagnostics:
        """From `scoring.diagnostics.diagnostics`' JSON-ready form."""
        return cls(
            metric=d["metric"],
            note=d["note"],
            n_tagged_items=d["n_tagged_items"],
            all_tagged=PhenomenonScore.of(d["all_tagged"]),
            coarse={c: PhenomenonScore.of(e) for c, e in d["coarse"].items()},
            fine={
                c: {t: PhenomenonScore.of(e) for t, e in tags.items()}
                for c, tags in d["fine"].items()
            },
        )


@dataclass
class PairedTest(JsonData):
    """A model against the human majority on the items both answered (McNemar, exact)."""

    n: int
    human_only_right: int
    model_only_right: int
    mcnemar_p: float | None
    """None when no item is discordant."""


@dataclass
class ModelRow(JsonData):
    name: str
    file: str
    n: int
    """Scored items the model has a prediction for."""
    scores: dict[str, Estimate] | None
    """None without gold."""
    task_score: Estimate | None
    paired: PairedTest | None = None
    """Classification only (left out without gold)."""
    interval: HeadlineInterval | None = None
    """The task score's interval by the one rule (scoring.intervals.quoted_interval)."""

    def omitted(self) -> set[str]:
        return {"paired", "interval"} if self.scores is None else set()


@dataclass
class RatingSuspect(JsonData):
    """A rating item whose aggregated rating is far from gold."""

    item: str
    gold: float
    human: float
    ratings: list[float]
    difference: float


@dataclass
class JudgedAnswer(JsonData):
    answer: str
    gold: str
    majority: str | None
    votes: dict[str, int]


@dataclass
class QuestionSuspect(JsonData):
    """A MultiRC question with answers whose majority judgement disagrees with gold."""

    item: str
    against_gold: float
    answers: list[JudgedAnswer]


@dataclass
class LabelSuspect(JsonData):
    """An item (ReCoRD: a query) whose majority answer disagrees with gold."""

    item: str
    gold: str | list[str]
    majority: str
    votes: dict[str, int]
    against_gold: float
    answers: dict[str, int] | None = None
    """CB: the 7-point answers behind the votes (left out for other tasks)."""

    def omitted(self) -> set[str]:
        return _none(self, "answers")


GoldSuspect = RatingSuspect | QuestionSuspect | LabelSuspect


@dataclass
class GateDecisionRow(JsonData):
    annotator: str
    admitted: bool
    rule: str
    threshold: float | None
    score: float | None
    n_items: int
    decided_by: str
    decided_at: str
    cohort_size: int
    reason: str | None = None
    """Why (schema 7); None for decisions recorded before reasons were."""


@dataclass
class RosterEntry(JsonData):
    """One annotator of the study (protocol/standing.py): phase and gate verdict."""

    name: str
    phase: str
    """training, waiting, test or rejected."""
    gate: str
    """pending, admitted or rejected."""


@dataclass
class Gate(JsonData):
    decisions: list[GateDecisionRow]
    """Every decision, oldest first."""
    admitted: list[str]
    """Annotators whose latest decision admitted them."""
    refused: list[str]
    rules: list[str]
    roster: list[RosterEntry] = field(default_factory=list)
    """Everyone with a gate decision or a label, by name (empty without a store)."""
    closure: dict[str, Any] | None = None
    """Who closed training, when, and (forced past warnings) the warnings and the reason;
    null while open or when the close predates schema 10."""


@dataclass
class Bootstrap(JsonData):
    replicates: int
    seed: int
    method: str


@dataclass
class BenchmarkTask(JsonData):
    task: str
    group: str
    study: str
    task_score: float | None


@dataclass
class Benchmark(JsonData):
    """Where a one-study report's study stands in its benchmark: the study chosen for each
    task (scoring.benchmark.choose_studies), this study's score (no other study is loaded;
    `report --benchmark` scores the benchmark), the missing tasks."""

    benchmark: str
    score: float | None
    """The benchmark score when this study is the only one the benchmark has; None when other
    tasks have studies (scoring them would load them: `annotate report --benchmark`)."""
    partial: bool
    n_tasks: int
    n_tasks_covered: int
    tasks: list[BenchmarkTask]
    missing: list[str]
    note: str | None

    @classmethod
    def of(cls, d: dict[str, Any]) -> Benchmark:
        """From `scoring.benchmark.benchmark_summary`' JSON-ready form."""
        return cls(**{**d, "tasks": [BenchmarkTask(**t) for t in d["tasks"]]})


# --- the report ------------------------------------------------------------------------------


@dataclass
class StudyReport(JsonData):
    """Everything `annotate report` shows."""

    study: str
    task: str
    task_title: str
    kind: str
    """The task kind: classification, regression, multi_answer or entity_choice."""
    summary: str
    """One line a paper can quote (values x100)."""
    state: str
    protocol: dict[str, Any]
    """The effective protocol as stored with the study (incl. tie rule and seed)."""
    n_items: int
    """Test items with at least one label."""
    n_annotators: int
    n_labels: int
    sample: Sample
    has_gold: bool
    metrics: list[str]
    scores: dict[str, Estimate]
    """Metric id -> the human aggregate's score."""
    task_score: Estimate
    """The mean of the metrics, with its interval."""
    confusion_matrix: Confusion | None
    annotators: list[AnnotatorRow]
    individual: Individual
    majority_of_k: list[CommitteeScore]
    agreement: Agreement
    ties: Ties
    diagnostics: Diagnostics | None
    models: list[ModelRow]
    gold_suspects: list[GoldSuspect]
    gate: Gate
    bootstrap: Bootstrap
    benchmark: Benchmark | None = None
    notes: list[str] = field(default_factory=list)
    datasheet: Datasheet | None = None
    """How the run went (left out when the report was built without a store)."""
    headline_interval: HeadlineInterval | None = None
    """The quotable line's interval and what it holds fixed."""
    humans_interval: HeadlineInterval | None = None
    """The task score's interval with the annotators resampled too (needs --bootstrap)."""
    early_stop: EarlyStop | None = None
    """What stop_when_decided saved (left out for a study without the option)."""
    flags: FlagsReport | None = None
    """Flagged items, and items excluded from scoring with their effect on the score (left
    out when the report was built without a store)."""
    model_aggregation: ModelAggregation | None = None
    """Dawid–Skene and MACE beside the majority (left out for ratings and ReCoRD)."""
    catch: CatchReport | None = None
    """Catch items' accuracy over time and drift warnings (left out without catch items)."""
    n_gold_suspects: int = 0
    """How many items are gold suspects: `gold_suspects` lists the strongest
    `GOLD_SUSPECTS_LISTED` (1,000) of them."""
    extra_sections: dict[str, Any] = field(default_factory=dict)
    """Sections with their own computation (`sections.registry`), by name: each is one more
    key of the JSON, after the keys above (left out when None)."""

    def omitted(self) -> set[str]:
        return _none(
            self,
            "datasheet",
            "headline_interval",
            "humans_interval",
            "early_stop",
            "flags",
            "model_aggregation",
            "catch",
        ) | {"extra_sections"}

    def extra_keys(self) -> dict[str, Any]:
        return {k: v for k, v in self.extra_sections.items() if v is not None}


# --- sections computed beside the headline (early stop, flags, model aggregation, catch) ---


@dataclass
class EarlyStop(JsonData):
    """The `stop_when_decided` option's effect on this study."""

    enabled: bool
    labels_collected: int
    """Test labels stored."""
    labels_full_k: int
    """Labels the finished items would have taken without the option (k each, or what an
    extra-annotator tie added)."""
    labels_saved: int
    saved_share: float | None
    """labels_saved / labels_full_k."""
    items_decided_early: int
    """Items that stopped before k because their majority could no longer change."""
    majority_equals_full_k: bool
    """Always true: an item stops only when no labels up to k can change its majority."""
    alpha: str
    kappa: str
    curve: str


@dataclass
class FlaggedItem(JsonData):
    label_id: int
    source_id: str
    annotator: str
    synthetic: bool
    phase: str
    comment: str | None
    text: str
    """The item's shown fields, verbatim, as "Heading: text" lines."""
    state: str
    """open | resolved | excluded."""
    by: str | None
    reason: str | None
    at: str | None


@dataclass
class ExcludedItem(JsonData):
    source_id: str
    by: str
    reason: str
    at: str
    n_labels: int


@dataclass
class FlagsReport(JsonData):
    n_flags: int
    open: int
    resolved: int
    excluded: int
    flagged: list[FlaggedItem] = field(default_factory=list)
    excluded_items: list[ExcludedItem] = field(default_factory=list)
    task_score_without_excluded: float | None = None
    """The report's task score (excluded items left out)."""
    task_score_with_excluded: float | None = None
    """The task score had the excluded items been kept."""
    note: str | None = None


@dataclass
class AggregationScore(JsonData):
    """The human score when the labels are aggregated by `method`."""

    method: str
    """"majority" (the study's own rule), "dawid_skene", "mace" (`aggregation.estimators`)."""
    title: str
    """The method's name in the tables."""
    scores: dict[str, Estimate]
    task_score: Estimate
    interval: HeadlineInterval | None
    """Wilson for an accuracy-only task, else the bootstrap's (None without bootstrap)."""
    n_changed: int
    """Units whose answer differs from the majority's."""


@dataclass
class AnnotatorCompetence(JsonData):
    annotator: str
    n_labels: int
    competence: dict[str, float | None]
    """Method -> the annotator's estimated competence: Dawid–Skene's probability of a right
    answer (Σ_k prior(k) · P(answer k | truth k)), MACE's probability that the annotator is
    not spamming (knows the answer)."""
    confusion: dict[str, dict[str, dict[str, float]]]
    """Method -> truth -> answer -> estimated probability (rows sum to 1), for the methods
    that estimate a confusion matrix (Dawid–Skene)."""


@dataclass
class AggregationDisagreement(JsonData):
    item: str
    votes: dict[str, int]
    majority: str | None
    answers: dict[str, str | None]
    """Method -> its answer for the unit."""
    gold: str | None


@dataclass
class ModelFit(JsonData):
    """How a latent-class model's EM ended."""

    method: str
    """"dawid_skene" or "mace"."""
    iterations: int
    log_likelihood: float
    """log P(labels | fitted parameters), nats."""
    converged: bool
    """Whether the log-likelihood changed by less than `tolerance` before the iteration cap."""
    tolerance: float
    restarts: int | None = None
    """MACE: random starts beside the majority-vote start (the best likelihood is kept)."""
    seed: int | None = None
    """MACE: the seed of the random starts (the study's)."""

    def omitted(self) -> set[str]:
        return _none(self, "restarts", "seed")


@dataclass
class ModelAggregation(JsonData):
    """The `model_aggregation` section of the report."""

    available: bool
    note: str | None = None
    unit: str = "item"
    estimators: list[AggregationScore] = field(default_factory=list)
    annotators: list[AnnotatorCompetence] = field(default_factory=list)
    disagreements: list[AggregationDisagreement] = field(default_factory=list)
    competence_titles: dict[str, str] = field(default_factory=dict)
    """Method -> the heading of its competence column."""
    method: str = (
        "Dawid & Skene (1979) EM over per-annotator confusion matrices from a majority-vote "
        "start; MACE (Hovy et al. 2013) EM with a per-annotator spamming probability, classes "
        "coded in sorted order, a majority-vote start plus seeded random restarts, the best "
        "log-likelihood kept; both run until the log-likelihood settles"
    )
    fits: list[ModelFit] = field(default_factory=list)

    def omitted(self) -> set[str]:
        return _none(self, "note")


@dataclass
class CatchPoint(JsonData):
    n: int
    """1-based number of this catch answer of the annotator."""
    answered_at: str
    correct: bool
    recent_accuracy: float
    """Accuracy over the last `window` catch answers up to this one."""


@dataclass
class CatchAnnotator(JsonData):
    name: str
    n: int
    correct: int
    accuracy: float | None
    threshold: float | None
    """The study's drift threshold (protocol.catch.catch_threshold)."""
    recent_accuracy: float | None
    drifting: bool
    """Recent catch accuracy is below the threshold now."""
    first_drift_at: str | None
    """When the warning first fired (ISO time of that catch answer), if ever."""
    refresher_items: int
    timeline: list[CatchPoint] = field(default_factory=list)


@dataclass
class CatchReport(JsonData):
    catch_rate: float
    catch_action: str
    window: int
    min_answers: int
    pool: str
    annotators: list[CatchAnnotator]
    warnings: list[str]
    note: str = (
        "catch items are dev items with gold shown like test items; they are never counted in "
        "scores, agreement or submission files"
    )


# --- the datasheet of a run (added with issue 12: new keys only) -----------------------------


@dataclass
class Attrition(JsonData):
    """Who came and who stayed: each count is of distinct annotators of the study."""

    started_training: int
    """Gave at least one training answer."""
    completed_training: int
    """Answered every training item of the study (someone admitted by hand without
    training has not)."""
    admitted: int
    """Latest gate decision: admitted."""
    rejected: int
    """Latest gate decision: refused."""
    undecided: int
    """Started training, no gate decision (yet)."""
    labelled_test: int
    """Gave at least one test answer (finished the protocol)."""
    abandoned: int
    """Left: stopped training before completing it (no decision), or were admitted and never
    gave a test answer."""
    abandoned_names: list[str]
    training_pass_rate: Estimate
    """Admitted / decided, with the Wilson interval (value None without decisions)."""


@dataclass
class AnnotatorTime(JsonData):
    """Time on task of one annotator: answers and minutes of both phases; the median over test
    answers (protocol/timing.py: the annotator table's figure)."""

    name: str
    n_labels: int
    median_seconds: float | None
    total_minutes: float


@dataclass
class TimeOnTask(JsonData):
    annotators: list[AnnotatorTime]
    median_minutes_per_annotator: float | None
    """The median over annotators of their total minutes."""
    total_minutes: float
    seconds_per_item_histogram: dict[str, list[float]]
    """Test answers: "edges" (seconds, bins+1) and "counts" (answers per bin)."""


@dataclass
class Cost(JsonData):
    hourly_rate: float
    hours: float
    estimated_cost: float
    note: str


@dataclass
class FlaggedLabel(JsonData):
    item: str
    annotator: str
    phase: str
    comment: str | None


@dataclass
class Exclusion(JsonData):
    what: str
    n: int
    reason: str


@dataclass
class CrowdSessions(JsonData):
    """A crowd study's sessions (visits): how workers left, and what they were paid."""

    platform: str
    workers: int
    sessions: int
    abandoned_sessions: int
    """Sessions left without an exit (a closed tab): their leases went back to the pool."""
    outcomes: dict[str, int]
    """Workers by their latest exit (completed, screened_out, ...)."""
    median_session_minutes: float | None
    """Median time on task per worker, from arrival to departure (consent to exit)."""
    median_effective_hourly_pay: float | None
    """From the latest `annotate pay` run (None before one)."""
    currency: str | None


@dataclass
class Datasheet(JsonData):
    """How the numbers were obtained: what reviewers ask for in a paper's data statement."""

    protocol_name: str | None
    protocol: dict[str, Any]
    """The effective protocol, as stored with the study."""
    assumptions: list[str]
    """Protocol values the papers do not state (the preset's declared choices)."""
    sample_size: int
    """Test items drawn."""
    test_sample_setting: Any
    seed: int | None
    training_items: int
    attrition: Attrition
    time_on_task: TimeOnTask
    cost: Cost | None
    """Only with `--set hourly_rate=…`."""
    ties: dict[str, Any]
    """rule, n_tied, unit and how many were settled each way."""
    flagged: list[FlaggedLabel]
    excluded: list[Exclusion]
    first_label_at: str | None
    last_label_at: str | None
    software_version: str
    store_schema_version: str | None
    """The store's schema revision (read from the store)."""
    schema_head: str
    """The newest schema this annotate writes."""
    crowd: CrowdSessions | None = None
    """A crowd study's sessions, outcomes and pay (left out for other studies)."""
    collected: str | None = None
    """Labels imported with `annotate import-labels`: "collected outside annotate: MTurk batch,
    N assignments, gate unknown" (None, and left out of the JSON, for a study run here)."""

    def omitted(self) -> set[str]:
        return _none(self, "crowd", "collected")


# --- the benchmark's human row ----------------------------------------------------------------


@dataclass
class PublishedRow(JsonData):
    """The human row a paper reports: a reference line, not measured here."""

    source: str
    scores: dict[str, dict[str, float]]
    """Task -> metric -> value (fractions)."""
    average: float | None
    note: str


@dataclass
class BenchmarkTaskRow(JsonData):
    task: str
    title: str
    group: str
    study: str
    n_items: int
    """Scored items."""
    metrics: list[str]
    scores: dict[str, Estimate]
    task_score: Estimate
    models: dict[str, Estimate]
    """Model name -> its task score on the same items."""
    datasheet: Datasheet | None
    summary: str
    interval: HeadlineInterval | None = None
    """The task score's interval: the study report's headline interval (the one rule)."""


@dataclass
class BenchmarkModelRow(JsonData):
    name: str
    tasks_covered: list[str]
    average: Estimate
    partial: bool


@dataclass
class BenchmarkReport(JsonData):
    """`annotate report --benchmark`: the human row of a whole benchmark."""

    benchmark: str
    summary: str
    tasks: list[BenchmarkTaskRow]
    missing: list[str]
    """Task groups of the benchmark without a study (or without a score)."""
    excluded_tasks: list[str]
    """Diagnostic sets, scored apart from the average by the leaderboard's rule."""
    average: Estimate
    """The leaderboard average over the covered groups, with a bootstrap interval (items
    resampled within each task, independently across tasks)."""
    partial: bool
    n_groups: int
    n_groups_covered: int
    group_scores: dict[str, float]
    models: list[BenchmarkModelRow]
    published: PublishedRow | None
    bootstrap: Bootstrap
    software_version: str
    notes: list[str] = field(default_factory=list)

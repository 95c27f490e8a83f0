"""The report's data, typed (pydantic models): what `build` computes and every renderer reads.
`to_json()` gives the `--format json` form; its keys and numbers are the report's public
interface, so fields keep the names and order of that JSON, and `report_schema()` is its JSON
Schema (`annotate report --schema`). Metric values are fractions (0..1).

A field that some reports leave out of the JSON (it does not apply to the task or the rule)
is named in the class's `omit_if_none` (left out when None) or `omitted()`; everything else is
always written, null when unknown. The builders make these with `model_construct`.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import Field, RootModel, model_validator
from pydantic.json_schema import SkipJsonSchema

from annotate.report.model.base import (
    REF_TEMPLATE,
    Draft7,
    Number,
    ReportModel,
    SparseModel,
    described,
)
from annotate.scoring.diagnostics import undefined_text


class AgreementEstimate(Protocol):
    """What a coefficient is made from (`stats.agreement.Estimate`)."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    note: str | None


# --- scores ----------------------------------------------------------------------------------


class Estimate(SparseModel):
    """A value with its 95% interval: the bootstrap's percentile interval or, where every
    resample gave the same value (every unit right), the score-type (Wilson) interval over the
    units resampled, never zero-wide; accuracy also with the Wilson interval."""

    omit_if_none = ("wilson_low", "wilson_high")

    value: Number | None
    ci_low: Number | None = None
    ci_high: Number | None = None
    wilson_low: Number | None = None
    wilson_high: Number | None = None

    @classmethod
    def of(cls, d: dict[str, Any]) -> Estimate:
        """From the scorers' {value, ci_low, ci_high} form."""
        return cls.model_construct(value=d["value"], ci_low=d["ci_low"], ci_high=d["ci_high"])


class HeadlineInterval(ReportModel):
    """The interval the quotable line gives, and which claim it supports."""

    low: Number | None
    high: Number | None
    method: str
    """How it is computed and what is held fixed (these annotators, these items' population)."""


class Sample(ReportModel):
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


class Confusion(ReportModel):
    """Gold (rows) by human answer (columns; a last "(no answer)" column when any)."""

    gold: list[str]
    predicted: list[str]
    matrix: list[list[int]]
    unit: str


# --- annotators ------------------------------------------------------------------------------


class AnnotatorRow(SparseModel):
    omit_if_none = ("wilson_low", "wilson_high")

    name: str
    n: int
    """Answers given."""
    scores: dict[str, Number | None]
    """Metric -> score on the annotator's own items."""
    task_score: Number | None
    agrees_with_majority: Number | None
    """Share of their answers equal to the aggregated answer (None for ratings)."""
    seconds_per_item: Number | None
    """Median seconds per test answer (protocol/timing.py)."""
    seconds_mean: Number | None
    synthetic: bool = False
    """Made by `annotate simulate`, not a person."""
    wilson_low: Number | None = None
    wilson_high: Number | None = None
    """Wilson's bounds of the accuracy, where scoring.intervals.accuracy_wilson gives them."""


class Spread(ReportModel):
    n: int
    mean: Number | None
    median: Number | None
    sd: Number | None
    min: Number | None
    max: Number | None


class Individual(ReportModel):
    """The spread of the individual annotators' scores."""

    task_score: Spread
    metrics: dict[str, Spread]


class CommitteeScore(ReportModel):
    """The score of a majority of k labels drawn per item, averaged over draws."""

    k: int
    n_items: int
    draws: int
    scores: dict[str, Number | None]
    task_score: Number | None
    task_score_sd: Number | None


# --- agreement -------------------------------------------------------------------------------


class Coefficient(SparseModel):
    """An agreement coefficient with its interval: Krippendorff's α at `level` over `n_items`
    units with two or more labels, or Fleiss' κ over `n_items` complete units rated by
    `raters_per_item` each."""

    omit_sometimes = ("level", "note", "n_items", "raters_per_item")

    level: str | None = None
    value: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    note: str | None = None
    n_items: int | None = None
    raters_per_item: int | None = None
    kind: SkipJsonSchema[str] = Field("alpha", exclude=True)
    """"alpha", "alpha-collapsed", "fleiss", "fleiss-skipped" (not computed, see note) or "ac1":
    which keys the JSON has (itself not written; read back from the keys)."""

    @model_validator(mode="before")
    @classmethod
    def _kind_from_keys(cls, data: Any) -> Any:
        """A coefficient read from JSON: its kind from the keys its JSON has."""
        if not isinstance(data, dict) or "kind" in data:
            return data
        if "raters_per_item" in data:
            kind = "fleiss-skipped" if list(data)[-1] == "note" else "fleiss"
        elif "level" in data:
            kind = "alpha" if "n_items" in data else "alpha-collapsed"
        else:
            kind = "ac1"
        return {**data, "kind": kind}

    def omitted(self) -> set[str]:
        skip = set() if self.note is not None else {"note"}
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
        return cls.model_construct(
            level=level,
            value=e.value,
            ci_low=e.ci_low,
            ci_high=e.ci_high,
            note=e.note or None,
            n_items=n_items,
        )

    @classmethod
    def fleiss(cls, e: AgreementEstimate, n_items: int, raters: int | None) -> Coefficient:
        return cls.model_construct(
            value=e.value,
            ci_low=e.ci_low,
            ci_high=e.ci_high,
            note=e.note or None,
            n_items=n_items,
            raters_per_item=raters,
            kind="fleiss",
        )


class PairKappa(ReportModel):
    a: str
    b: str
    n: int
    """Items both labelled."""
    kappa: Number | None


class PairSummary(ReportModel):
    n_pairs: int
    mean: Number | None
    median: Number | None
    min: Number | None
    max: Number | None


class PartScore(ReportModel):
    n: int
    scores: dict[str, Number | None]
    task_score: Number | None


class Agreement(SparseModel):
    omit_if_none = ("krippendorff_alpha_collapsed", "gwet_ac1")

    unit: str
    krippendorff_alpha: Coefficient
    krippendorff_alpha_collapsed: Coefficient | None = None
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


class FileAgreement(SparseModel):
    """`annotate agreement FILE`: agreement of a long-format label file."""

    omit_if_none = ("gwet_ac1", "item_agreement_histogram", "computed_on", "annotator_names")

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
    item_agreement_histogram: dict[str, int] | None = None
    """Votes for the most chosen value per item (nominal level only: at ordinal, interval
    and ratio level the share of one exact value means nothing, so it is left out)."""
    bootstrap: dict[str, int]
    gwet_ac1: Coefficient | None = None
    """Gwet's AC1 over the file's values (nominal level only; else left out)."""
    computed_on: dict[str, str] | None = None
    """What each coefficient was computed on: which items, how many raters."""
    annotator_names: str | None = None
    """How the pairs name a file's annotators: pseudonyms, never the file's ids (which may be
    a platform's); left out when they are the study's or a DataFrame's own names."""


# --- ties, diagnostics, models, suspects, gate, benchmark ------------------------------------


class TiedUnit(ReportModel):
    item: str
    votes: dict[str, int]
    resolution: str
    result: str | None


class Ties(SparseModel):
    """How the declared tie rule settled the tied units."""

    omit_sometimes = (
        "unit",
        "resolved_at_random",
        "resolved_by_dev_majority_class",
        "abstained_counted_wrong",
        "open_counted_wrong",
        "units_with_more_than_k_labels",
        "dev_class_counts",
        "note",
    )

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
    items: list[TiedUnit] = Field(default_factory=list)

    def key_order(self) -> list[str] | None:
        return None if self.applies else ["rule", "applies", "note", "n_tied", "items"]

    def omitted(self) -> set[str]:
        if not self.applies:
            return set(self.omit_sometimes) - {"note"}
        skip = {"note"} if self.note is None else set()
        if self.rule != "dev-majority-class":
            skip.add("dev_class_counts")
        return skip


class PhenomenonScore(SparseModel):
    omit_if_none = ("models", "undefined")

    value: Number | None
    n: int
    ci_low: Number | None
    ci_high: Number | None
    models: dict[str, PhenomenonScore] | None = None
    """The same score of each model (only on the human row)."""
    undefined: str | None = None
    """Why there is no value ("one class": the subset's gold holds one class); else None."""

    @classmethod
    def of(cls, d: dict[str, Any]) -> PhenomenonScore:
        models = d.get("models")
        return cls.model_construct(
            value=d["value"],
            n=d["n"],
            ci_low=d["ci_low"],
            ci_high=d["ci_high"],
            models=None if models is None else {m: cls.of(e) for m, e in models.items()},
            undefined=d.get("undefined"),
        )

    def text(self, digits: int = 2) -> str:
        """The value as every format writes it: `0.57`, or `undefined (n=3, one class)`."""
        if self.undefined is not None:
            return undefined_text(self.n, self.undefined)
        return "–" if self.value is None else f"{self.value:.{digits}f}"


class Diagnostics(ReportModel):
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
        return cls.model_construct(
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


class PairedTest(ReportModel):
    """A model against the human majority on the items both answered (McNemar, exact)."""

    n: int
    human_only_right: int
    model_only_right: int
    mcnemar_p: Number | None
    """None when no item is discordant."""


class ModelRow(SparseModel):
    omit_sometimes = ("paired", "interval")

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


class RatingSuspect(ReportModel):
    """A rating item whose aggregated rating is far from gold."""

    item: str
    gold: Number
    human: Number
    ratings: list[Number]
    difference: Number


class JudgedAnswer(ReportModel):
    answer: str
    gold: str
    majority: str | None
    votes: dict[str, int]


class QuestionSuspect(ReportModel):
    """A MultiRC question with answers whose majority judgement disagrees with gold."""

    item: str
    against_gold: Number
    answers: list[JudgedAnswer]


class LabelSuspect(SparseModel):
    """An item (ReCoRD: a query) whose majority answer disagrees with gold."""

    omit_if_none = ("answers",)

    item: str
    gold: str | list[str]
    majority: str
    votes: dict[str, int]
    against_gold: Number
    answers: dict[str, int] | None = None
    """CB: the 7-point answers behind the votes (left out for other tasks)."""


GoldSuspect = RatingSuspect | QuestionSuspect | LabelSuspect


class GateDecisionRow(ReportModel):
    annotator: str
    admitted: bool
    rule: str
    threshold: Number | None
    score: Number | None
    n_items: int
    decided_by: str
    decided_at: str
    cohort_size: int
    reason: str | None = None
    """Why (schema 7); None for decisions recorded before reasons were."""


class RosterEntry(ReportModel):
    """One annotator of the study (protocol/standing.py): phase and gate verdict."""

    name: str
    phase: str
    """training, waiting, test, done (admitted, no test item left for them) or rejected;
    imported for an undecided annotator of imported labels."""
    gate: str
    """pending, admitted or rejected."""
    set_aside: int = 0
    """Their test labels set aside when they were refused (after admission, or as a worker of
    imported labels): in no score, vote, agreement or export of the test phase."""


class Gate(ReportModel):
    decisions: list[GateDecisionRow]
    """Every decision, oldest first."""
    admitted: list[str]
    """Annotators whose latest decision admitted them."""
    refused: list[str]
    """Annotators whose latest decision rejected them (the report's words say "rejected", as
    `gate` and `status` do; the key keeps its name)."""
    rules: list[str]
    roster: list[RosterEntry] = Field(default_factory=list)
    """Everyone with a gate decision or a label, by name (empty without a store)."""
    closure: dict[str, Any] | None = None
    """Who closed training, when, and (forced past warnings) the warnings and the reason;
    null while open or when the close predates schema 10."""


class Bootstrap(ReportModel):
    replicates: int
    seed: int
    method: str


class BenchmarkTask(ReportModel):
    task: str
    group: str
    study: str
    task_score: Number | None


class Benchmark(ReportModel):
    """Where a one-study report's study stands in its benchmark: the study chosen for each
    task (scoring.benchmark.choose_studies), this study's score (no other study is loaded;
    `report --benchmark` scores the benchmark), the missing tasks."""

    benchmark: str
    score: Number | None
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
        tasks = [BenchmarkTask.model_construct(**t) for t in d["tasks"]]
        return cls.model_construct(**{**d, "tasks": tasks})


# --- the report ------------------------------------------------------------------------------


class StudyReport(SparseModel):
    """Everything `annotate report` shows."""

    omit_if_none = (
        "datasheet",
        "headline_interval",
        "humans_interval",
        "early_stop",
        "flags",
        "model_aggregation",
        "catch",
    )
    extras = "extra_sections"

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
    notes: list[str] = Field(default_factory=list)
    datasheet: Datasheet | None = None
    """How the run went (left out when the report was built without a store)."""
    headline_interval: HeadlineInterval | None = None
    """The quotable line's interval and what it holds fixed."""
    humans_interval: HeadlineInterval | None = None
    """The task score's interval with the annotators drawn afresh too (needs --bootstrap); it
    always contains `headline_interval`."""
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
    extra_sections: SkipJsonSchema[dict[str, Any]] = Field(default_factory=dict)
    """Sections with their own computation (`sections.registry`), by name: each is one more
    key of the JSON, after the keys above (left out when None)."""

    @model_validator(mode="before")
    @classmethod
    def _sections_from_keys(cls, data: Any) -> Any:
        """A report read from JSON: keys after the fields' are its computed sections."""
        if not isinstance(data, dict) or "extra_sections" in data:
            return data
        known = {k: v for k, v in data.items() if k in cls.model_fields}
        return {**known, "extra_sections": {k: v for k, v in data.items() if k not in known}}


# --- sections computed beside the headline (early stop, flags, model aggregation, catch) ---


class EarlyStop(ReportModel):
    """The `stop_when_decided` option's effect on this study."""

    enabled: bool
    labels_collected: int
    """Test labels stored."""
    labels_full_k: int
    """Labels the finished items would have taken without the option (k each, or what an
    extra-annotator tie added)."""
    labels_saved: int
    saved_share: Number | None
    """labels_saved / labels_full_k."""
    items_decided_early: int
    """Items that stopped before k because their majority could no longer change."""
    majority_equals_full_k: bool
    """Always true: an item stops only when no labels up to k can change its majority."""
    alpha: str
    kappa: str
    curve: str


class FlaggedItem(ReportModel):
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


class ExcludedItem(ReportModel):
    source_id: str
    by: str
    reason: str
    at: str
    n_labels: int


class FlagsReport(ReportModel):
    n_flags: int
    open: int
    resolved: int
    excluded: int
    flagged: list[FlaggedItem] = Field(default_factory=list)
    excluded_items: list[ExcludedItem] = Field(default_factory=list)
    task_score_without_excluded: Number | None = None
    """The report's task score (excluded items left out)."""
    task_score_with_excluded: Number | None = None
    """The task score had the excluded items been kept."""
    note: str | None = None


class AggregationScore(ReportModel):
    """The human score when the labels are aggregated by `method`."""

    method: str
    """"majority" (the study's own rule), "dawid_skene", "mace" (`aggregation.estimators`)."""
    title: str
    """The method's name in the tables."""
    scores: dict[str, Estimate]
    task_score: Estimate
    interval: HeadlineInterval | None
    """The one interval rule's (Wilson for an accuracy-only task; Wilson at the effective
    number of units for other shares; the bootstrap's for correlations); its method says
    whether the model was refitted in the bootstrap or held fixed."""
    n_changed: int
    """Units whose answer differs from the majority's."""


class AnnotatorCompetence(ReportModel):
    annotator: str
    n_labels: int
    competence: dict[str, Number | None]
    """Method -> the annotator's estimated competence: Dawid–Skene's probability of a right
    answer (Σ_k prior(k) · P(answer k | truth k)), MACE's probability that the annotator is
    not spamming (knows the answer)."""
    confusion: dict[str, dict[str, dict[str, Number]]]
    """Method -> truth -> answer -> estimated probability (rows sum to 1), for the methods
    that estimate a confusion matrix (Dawid–Skene)."""


class AggregationDisagreement(ReportModel):
    item: str
    votes: dict[str, int]
    majority: str | None
    answers: dict[str, str | None]
    """Method -> its answer for the unit."""
    gold: str | None


class ModelFit(SparseModel):
    """How a latent-class model's EM ended."""

    omit_if_none = ("restarts", "seed")

    method: str
    """"dawid_skene" or "mace"."""
    iterations: int
    log_likelihood: Number
    """log P(labels | fitted parameters), nats."""
    converged: bool
    """Whether the log-likelihood changed by less than `tolerance` before the iteration cap."""
    tolerance: Number
    restarts: int | None = None
    """MACE: random starts beside the majority-vote start (the best likelihood is kept)."""
    seed: int | None = None
    """MACE: the seed of the random starts (the study's)."""


class ModelAggregation(SparseModel):
    """The `model_aggregation` section of the report."""

    omit_if_none = ("note",)

    available: bool
    note: str | None = None
    unit: str = "item"
    estimators: list[AggregationScore] = Field(default_factory=list)
    annotators: list[AnnotatorCompetence] = Field(default_factory=list)
    disagreements: list[AggregationDisagreement] = Field(default_factory=list)
    competence_titles: dict[str, str] = Field(default_factory=dict)
    """Method -> the heading of its competence column."""
    method: str = (
        "Dawid & Skene (1979) EM over per-annotator confusion matrices from a majority-vote "
        "start; MACE (Hovy et al. 2013) EM with a per-annotator spamming probability, classes "
        "coded in sorted order, a majority-vote start plus seeded random restarts, the best "
        "log-likelihood kept; both run until the log-likelihood settles"
    )
    fits: list[ModelFit] = Field(default_factory=list)


class CatchPoint(ReportModel):
    n: int
    """1-based number of this catch answer of the annotator."""
    answered_at: str
    correct: bool
    recent_accuracy: Number
    """Accuracy over the last `window` catch answers up to this one."""


class CatchAnnotator(ReportModel):
    name: str
    n: int
    correct: int
    accuracy: Number | None
    threshold: Number | None
    """The study's drift threshold (protocol.catch.catch_threshold)."""
    recent_accuracy: Number | None
    drifting: bool
    """Recent catch accuracy is below the threshold now."""
    first_drift_at: str | None
    """When the warning first fired (ISO time of that catch answer), if ever."""
    refresher_items: int
    timeline: list[CatchPoint] = Field(default_factory=list)


class CatchReport(ReportModel):
    catch_rate: Number
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


class Attrition(ReportModel):
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


class AnnotatorTime(ReportModel):
    """Time on task of one annotator: answers and minutes of both phases; the median over test
    answers (protocol/timing.py: the annotator table's figure). Answers set aside with a
    refusal (phase `set-aside`) are in none of the three."""

    name: str
    n_labels: int
    median_seconds: Number | None
    total_minutes: Number | None
    """None when none of the annotator's labels has a time (imported without times)."""


class TimeOnTask(ReportModel):
    annotators: list[AnnotatorTime]
    median_minutes_per_annotator: Number | None
    """The median over annotators of their total minutes."""
    total_minutes: Number | None
    """None when no label has a time (a study imported from a file without times)."""
    seconds_per_item_histogram: dict[str, list[Number]]
    """Test answers: "edges" (seconds, bins+1) and "counts" (answers per bin)."""


class Cost(ReportModel):
    hourly_rate: Number
    hours: Number
    estimated_cost: Number
    note: str


class FlaggedLabel(ReportModel):
    item: str
    annotator: str
    phase: str
    comment: str | None


class Exclusion(ReportModel):
    what: str
    n: int
    reason: str


class CrowdExit(ReportModel):
    """Workers who left one platform study with one code (as the platform counts them)."""

    platform_study: str | None
    """The platform study (None: a link that names none)."""
    link: str
    """all, training or test."""
    outcome: str
    code: str
    workers: int


class CrowdSessions(ReportModel):
    """A crowd study's sessions (visits): how workers left, and what they were paid."""

    platform: str
    workers: int
    sessions: int
    abandoned_sessions: int
    """Sessions left without an exit (a closed tab), quiet past the lease: their leases went
    back to the pool."""
    abandoned_workers: int = 0
    """Workers who abandoned: left a platform study with no code at all (a session left
    without one, and no exit from that platform study). The attrition's "abandoned" of a crowd
    study is this count."""
    outcomes: dict[str, int]
    """Workers by their latest exit (completed, screened_out, ...)."""
    exits: list[CrowdExit] = []
    """Workers per platform study and code, each once per platform study (latest exit)."""
    median_session_minutes: Number | None
    """Median time on task per worker, from arrival to departure (consent to exit)."""
    median_effective_hourly_pay: Number | None
    """From the latest `annotate pay` run (None before one)."""
    currency: str | None


class Datasheet(SparseModel):
    """How the numbers were obtained: what reviewers ask for in a paper's data statement."""

    omit_if_none = ("crowd", "collected")

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


# --- the benchmark's human row ----------------------------------------------------------------


class PublishedRow(ReportModel):
    """The human row a paper reports: a reference line, not measured here."""

    source: str
    scores: dict[str, dict[str, Number]]
    """Task -> metric -> value (fractions)."""
    average: Number | None
    note: str


class BenchmarkTaskRow(ReportModel):
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
    model_intervals: dict[str, HeadlineInterval] = Field(default_factory=dict)
    """Model name -> its task score's interval by the same rule (the study report's model
    row's `interval`): the one the report and `compare` quote for that model."""


class BenchmarkModelRow(ReportModel):
    name: str
    tasks_covered: list[str]
    average: Estimate
    partial: bool


class BenchmarkReport(ReportModel):
    """`annotate report --benchmark`: the human row of a whole benchmark."""

    benchmark: str
    summary: str
    tasks: list[BenchmarkTaskRow]
    missing: list[str]
    """Task groups of the benchmark without a study (or without a score)."""
    excluded_tasks: list[str]
    """Diagnostic sets, scored apart from the average by the leaderboard's rule."""
    diagnostics: list[BenchmarkTaskRow] = Field(default_factory=list)
    """The rows of the diagnostic sets that have a study (AX-b, AX-g; GLUE's AX), as the
    tasks' rows: shown beside the average, never in it."""
    average: Estimate
    """The leaderboard average over the covered groups, with a bootstrap interval (items
    resampled within each task, independently across tasks)."""
    partial: bool
    n_groups: int
    n_groups_covered: int
    group_scores: dict[str, Number]
    models: list[BenchmarkModelRow]
    published: PublishedRow | None
    bootstrap: Bootstrap
    software_version: str
    notes: list[str] = Field(default_factory=list)


StudyReport.model_rebuild()  # its later sections are defined below it

# --- the JSON of `annotate report --format json`, and its schema ------------------------------


class ReportJson(RootModel[StudyReport | BenchmarkReport]):
    """What `annotate report --format json` writes: a study's report, or with `--benchmark`
    the human row of a whole benchmark."""


SCHEMA_ID = "report-schema.json"
"""The schema names itself by the file the docs save it as (`annotate report --schema >
report-schema.json`): a relative id, resolved against wherever it is kept."""


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, ReportModel) and value is not ReportModel


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 7) of `annotate report --format json`: every key the report
    writes, the keys it always writes (`required`), and what each means."""
    from annotate import __version__

    schema = ReportJson.model_json_schema(
        mode="serialization", schema_generator=Draft7, ref_template=REF_TEMPLATE
    )
    schema.pop("title", None)
    described(schema, [m for m in globals().values() if _is_model(m)])
    return {
        "$schema": Draft7.schema_dialect,
        "$id": SCHEMA_ID,
        "$comment": f"written by annotate {__version__}",
        "title": "annotate report --format json",
        **schema,
    }

"""Dawid–Skene and MACE fitted to convergence: small vectorised EM, no Python loop per label.

Both take labels as three integer arrays (task, worker, answer code) and return the posterior
over each task's true class plus the fitted annotator parameters, the log-likelihood of the
labels, the number of EM iterations, whether the log-likelihood converged (changed by less
than `TOLERANCE` in an iteration) and the tolerance.

Why not crowd-kit: its Dawid–Skene stops when its evidence lower bound dips, which can be
iterations before the log-likelihood converges (a CB study: stopped at iteration 8, −271.35,
where the converged fit reaches −260.81 and changes 18 of 56 answers). Its MACE codes classes
and annotators in order of first appearance, so the same labels in another order give other
answers. Here the EM runs until the log-likelihood settles, and MACE is reproducible:

1. classes coded in sorted order of their names (`mace(..., class_order=...)`), workers and
   tasks numbered in a fixed order (the report: annotators by name, items in sample order);
2. start 0 from the majority vote's answer shares, then `mace_restarts(labels)` random starts
   (10 up to 20,000 labels, fewer above) drawn from `numpy.random.default_rng(seed)` (the
   report: the study's seed; the report states both);
3. each start runs EM to convergence; the start with the highest log-likelihood is kept
   (ties: the earliest);
4. each task's answer is its most probable class (ties: the first in the sorted coding).

References: Dawid & Skene (1979), Applied Statistics 28(1); Hovy et al. (2013), "Learning
whom to trust with MACE", NAACL. Both are tested against crowd-kit on well-posed studies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotate.scoring.intervals import seed_bits

TOLERANCE = 1e-6
"""EM stops when the log-likelihood of the labels changes by less than this (nats)."""
MAX_ITERATIONS = 1000
MACE_RESTARTS = 10
"""Random starts of MACE beside the majority-vote start (`mace_restarts`: fewer on big studies)."""
RESTART_LABELS = 200_000
"""Above 20,000 labels MACE makes max(1, 200,000 // labels) random starts (10 at 20,000, 2 at
100,000, 1 from 100,001): the cost stays that of about 2 million labels' EM at any size."""


def mace_restarts(n_labels: int) -> int:
    """How many random starts MACE makes for a study of `n_labels` labels (stated in the
    report, so the fit can be rebuilt)."""
    return max(1, min(MACE_RESTARTS, RESTART_LABELS // max(1, n_labels)))


SMOOTHING = 0.5
"""MACE's pseudo-counts (the Jeffreys prior's ½) on competence and on the spamming strategy,
so no probability is exactly 0 or 1."""
_TINY = 1e-300


@dataclass
class Fit:
    """A fitted latent-class model."""

    posterior: np.ndarray
    """(n_tasks, n_classes) P(true class | labels); rows of tasks without labels are uniform."""
    log_likelihood: float
    iterations: int
    converged: bool
    tolerance: float
    priors: np.ndarray
    """Dawid–Skene: class priors; MACE: uniform."""
    errors: np.ndarray | None = None
    """Dawid–Skene: (n_workers, truth, answer) P(answer | truth, worker)."""
    competence: np.ndarray | None = None
    """MACE: P(worker knows the answer, is not spamming)."""
    strategy: np.ndarray | None = None
    """MACE: (n_workers, n_classes) the spamming answer distribution."""
    restarts: int = 0
    seed: int | None = None
    class_rank: np.ndarray | None = None
    """Rank of each code in the fit's coding (ties between classes go to the lowest rank)."""

    @property
    def answers(self) -> np.ndarray:
        """Most probable class per task (ties: the lowest rank, else the lowest code)."""
        if self.class_rank is None:
            return self.posterior.argmax(axis=1)
        order = np.argsort(self.class_rank)
        return order[self.posterior[:, order].argmax(axis=1)]


def _shares(task: np.ndarray, answer: np.ndarray, n_tasks: int, n_classes: int) -> np.ndarray:
    """Each task's vote shares (the majority vote's soft answer); uniform without labels."""
    counts = np.bincount(task * n_classes + answer, minlength=n_tasks * n_classes)
    counts = counts.reshape(n_tasks, n_classes).astype(float)
    total = counts.sum(axis=1, keepdims=True)
    return np.where(total > 0, counts / np.maximum(total, 1), 1.0 / n_classes)


def _normalise(log_post: np.ndarray) -> tuple[np.ndarray, float]:
    """Posterior rows from log joint rows, and the log-likelihood (sum of row log-sums)."""
    top = log_post.max(axis=1, keepdims=True)
    p = np.exp(log_post - top)
    s = p.sum(axis=1, keepdims=True)
    return p / s, float((np.log(s) + top).sum())


def _task_sums(task: np.ndarray, values: np.ndarray, n_tasks: int) -> np.ndarray:
    """(n_tasks, C) sums of per-label rows (L, C) per task."""
    out = np.zeros((n_tasks, values.shape[1]))
    for c in range(values.shape[1]):
        out[:, c] = np.bincount(task, weights=values[:, c], minlength=n_tasks)
    return out


def dawid_skene_log_likelihood(
    task: np.ndarray, worker: np.ndarray, answer: np.ndarray, priors: np.ndarray, errors: np.ndarray
) -> float:
    """log P(labels | priors, errors): to compare any fit (crowd-kit's too) with ours."""
    n_tasks = int(task.max()) + 1 if len(task) else 0
    log_errors = np.log(np.maximum(errors, _TINY))
    per_label = log_errors[worker, :, answer]  # (L, truth)
    joint = np.log(np.maximum(priors, _TINY))[None, :] + _task_sums(task, per_label, n_tasks)
    has = np.bincount(task, minlength=n_tasks) > 0
    return _normalise(joint[has])[1]


def dawid_skene(
    task: np.ndarray,
    worker: np.ndarray,
    answer: np.ndarray,
    n_tasks: int,
    n_workers: int,
    n_classes: int,
    *,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> Fit:
    """Dawid–Skene by EM from the majority vote's shares until the log-likelihood settles."""
    task, worker, answer = (np.asarray(a, dtype=np.int64) for a in (task, worker, answer))
    has = np.bincount(task, minlength=n_tasks) > 0
    post = _shares(task, answer, n_tasks, n_classes)
    previous = -np.inf
    ll = -np.inf
    converged = False
    iterations = 0
    priors = np.full(n_classes, 1.0 / n_classes)
    errors = np.full((n_workers, n_classes, n_classes), 1.0 / n_classes)
    cell = worker * n_classes + answer  # each label's (worker, answer), computed once
    while iterations < max_iterations:
        iterations += 1
        # M-step: priors and each worker's confusion from the current posteriors.
        priors = post[has].mean(axis=0)
        counts = np.zeros((n_workers * n_classes, n_classes))
        weights = post[task]  # (L, truth)
        for t in range(n_classes):
            counts[:, t] = np.bincount(cell, weights=weights[:, t], minlength=n_workers * n_classes)
        counts = counts.reshape(n_workers, n_classes, n_classes).transpose(0, 2, 1)  # w,t,a
        rows = counts.sum(axis=2, keepdims=True)
        errors = np.where(rows > 0, counts / np.maximum(rows, _TINY), 1.0 / n_classes)
        # E-step.
        log_errors = np.log(np.maximum(errors, _TINY))
        joint = np.log(np.maximum(priors, _TINY))[None, :] + _task_sums(
            task, log_errors[worker, :, answer], n_tasks
        )
        post, ll = _posterior(joint, has)
        if abs(ll - previous) < tolerance:
            converged = True
            break
        previous = ll
    return Fit(post, ll, iterations, converged, tolerance, priors, errors=errors)


def _posterior(joint: np.ndarray, has: np.ndarray) -> tuple[np.ndarray, float]:
    """Posterior rows of the tasks with labels (uniform rows for the others), and the
    log-likelihood."""
    if has.all():
        return _normalise(joint)
    post_has, ll = _normalise(joint[has])
    post = np.full(joint.shape, 1.0 / joint.shape[1])
    post[has] = post_has
    return post, ll


@dataclass
class _MaceLabels:
    """The labels as MACE's steps index them, with the index arithmetic done once."""

    task: np.ndarray
    worker: np.ndarray
    answer: np.ndarray
    n_tasks: int
    n_workers: int
    n_classes: int
    has: np.ndarray

    def __post_init__(self) -> None:
        self.worker_answer = self.worker * self.n_classes + self.answer
        self.task_answer = self.task * self.n_classes + self.answer
        self.per_worker = np.bincount(self.worker, minlength=self.n_workers)


def _mace_e_step(
    labels: _MaceLabels, competence: np.ndarray, strategy: np.ndarray
) -> tuple[np.ndarray, float, tuple[np.ndarray, np.ndarray]]:
    """Posterior and log-likelihood; also θ and (1 − θ)ξ[a] per (worker, answer) cell, which
    the next M-step needs with the same parameters."""
    # A label's probability takes two values: (1 − θ)ξ[a] when the truth is not its answer a,
    # θ + (1 − θ)ξ[a] when it is. So a task's log joint is one sum over its labels plus, for
    # the class each label names, the difference: two bincounts, no (labels × classes) table.
    # Both depend on the label's (worker, answer) only: computed per cell, then looked up.
    n_tasks, n_classes = labels.n_tasks, labels.n_classes
    theta = np.repeat(competence, n_classes)
    spam = (1 - theta) * np.ravel(strategy)
    log_spam = np.log(np.maximum(spam, _TINY))
    lift = np.log(np.maximum(theta + spam, _TINY)) - log_spam
    cell = labels.worker_answer
    base = np.bincount(labels.task, weights=log_spam[cell], minlength=n_tasks)
    joint = np.bincount(
        labels.task_answer, weights=lift[cell], minlength=n_tasks * n_classes
    ).reshape(n_tasks, n_classes)
    joint += base[:, None] - np.log(n_classes)
    post, ll = _posterior(joint, labels.has)
    return post, ll, (theta, spam)


def _mace_m_step(
    labels: _MaceLabels,
    post: np.ndarray,
    competence: np.ndarray,
    strategy: np.ndarray,
    theta_spam: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """New competence and strategy; `theta_spam`: the E-step's θ and (1 − θ)ξ[a] per (worker,
    answer) cell for these `competence` and `strategy` (else computed here)."""
    n_workers, n_classes = labels.n_workers, labels.n_classes
    if theta_spam is None:
        theta_cell = np.repeat(competence, n_classes)
        theta_spam = theta_cell, (1 - theta_cell) * np.ravel(strategy)
    cell = labels.worker_answer
    theta, spam_part = theta_spam[0][cell], theta_spam[1][cell]
    # P(knows | answer, labels) = P(truth = answer) · θ / (θ + (1 − θ) ξ[answer])
    known = np.take(post, labels.task_answer) * theta / (theta + spam_part)
    spam = 1 - known
    competence = (np.bincount(labels.worker, weights=known, minlength=n_workers) + SMOOTHING) / (
        labels.per_worker + 2 * SMOOTHING
    )
    spam_counts = np.bincount(cell, weights=spam, minlength=n_workers * n_classes).reshape(
        n_workers, n_classes
    )
    strategy = (spam_counts + SMOOTHING) / (
        spam_counts.sum(axis=1, keepdims=True) + n_classes * SMOOTHING
    )
    return competence, strategy


def mace(
    task: np.ndarray,
    worker: np.ndarray,
    answer: np.ndarray,
    n_tasks: int,
    n_workers: int,
    n_classes: int,
    *,
    seed: int,
    restarts: int = MACE_RESTARTS,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
    class_order: np.ndarray | None = None,
) -> Fit:
    """MACE by EM, reproducibly (see the module's procedure). `class_order[c]` is the rank of
    code c when the classes are sorted by name: the fit codes classes by that rank and the
    returned posterior is in the caller's coding again."""
    task, worker, answer = (np.asarray(a, dtype=np.int64) for a in (task, worker, answer))
    rank = np.arange(n_classes) if class_order is None else np.asarray(class_order, np.int64)
    answer = rank[answer]
    has = np.bincount(task, minlength=n_tasks) > 0
    labels = _MaceLabels(task, worker, answer, n_tasks, n_workers, n_classes, has)
    rng = np.random.default_rng(seed_bits(seed))
    best: Fit | None = None
    for start in range(restarts + 1):
        if start == 0:
            post = _shares(task, answer, n_tasks, n_classes)
            competence = np.full(n_workers, 0.5)
            strategy = np.full((n_workers, n_classes), 1.0 / n_classes)
            competence, strategy = _mace_m_step(labels, post, competence, strategy)
        else:
            competence = rng.uniform(0.05, 0.95, n_workers)
            strategy = rng.dirichlet(np.ones(n_classes), n_workers)
        previous, ll, converged, iterations = -np.inf, -np.inf, False, 0
        while iterations < max_iterations:
            iterations += 1
            post, ll, theta_spam = _mace_e_step(labels, competence, strategy)
            if abs(ll - previous) < tolerance:
                converged = True
                break
            previous = ll
            competence, strategy = _mace_m_step(labels, post, competence, strategy, theta_spam)
        if best is None or ll > best.log_likelihood:
            best = Fit(
                post[:, rank],  # back to the caller's coding
                ll,
                iterations,
                converged,
                tolerance,
                np.full(n_classes, 1.0 / n_classes),
                competence=competence,
                strategy=strategy[:, rank],
                restarts=restarts,
                seed=seed,
                class_rank=rank,
            )
    assert best is not None
    return best

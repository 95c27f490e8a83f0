"""Dawid–Skene and MACE fitted to many weighted copies of one study at once (the bootstrap that
refits, `aggregation.refit`; fresh simulated studies in the calibration tests).

A batch is B members over the same label layout (task, worker per label): member b gives
each label an answer `answer[b]` and each task a weight `weight[b]` (a bootstrap replicate's
draw counts: a task drawn twice counts twice, one not drawn not at all). The EM is that of
`aggregation.em` with every count weighted, so a member with unit weights and the same start
is exactly `em.dawid_skene` / `em.mace`. All members advance together (arrays of shape
(B, tasks, classes)); a member that has converged stays at its fixed point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotate.report.aggregation.em import MAX_ITERATIONS, SMOOTHING, TOLERANCE

_TINY = 1e-300


@dataclass
class BatchFit:
    posterior: np.ndarray
    """(B, n_tasks, n_classes) P(true class | member's labels)."""
    log_likelihood: np.ndarray
    """(B,) weighted log-likelihood of each member's labels."""
    iterations: int
    converged: np.ndarray
    """(B,) whether the member's log-likelihood changed by less than the tolerance."""


def _per_task(flat_task: np.ndarray, values: np.ndarray, b: int, n_tasks: int) -> np.ndarray:
    """(B, n_tasks, C) sums of (B·L, C) per-label rows per member and task."""
    out = np.empty((b * n_tasks, values.shape[1]))
    for c in range(values.shape[1]):
        out[:, c] = np.bincount(flat_task, weights=values[:, c], minlength=b * n_tasks)
    return out.reshape(b, n_tasks, values.shape[1])


def _normalise(joint: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior rows from (B, T, C) log joints, and each member's weighted log-likelihood.
    (Loops over the few classes: numpy's reductions along a short last axis are slow.)"""
    n_classes = joint.shape[2]
    top = joint[:, :, 0].copy()
    for c in range(1, n_classes):
        np.maximum(top, joint[:, :, c], out=top)
    p = np.exp(joint - top[:, :, None])
    s = p[:, :, 0].copy()
    for c in range(1, n_classes):
        s += p[:, :, c]
    ll = ((np.log(s) + top) * weight).sum(axis=1)
    p /= s[:, :, None]
    return p, ll


def _shares(
    flat_task: np.ndarray, answer: np.ndarray, b: int, n_tasks: int, n_classes: int
) -> np.ndarray:
    counts = np.bincount(flat_task * n_classes + answer.ravel(), minlength=b * n_tasks * n_classes)
    counts = counts.reshape(b, n_tasks, n_classes).astype(float)
    total = counts.sum(axis=2, keepdims=True)
    return np.where(total > 0, counts / np.maximum(total, 1), 1.0 / n_classes)


def _layout(task, worker, answer, weight, n_tasks, n_workers, n_classes):
    """Flat per-label indexes of a batch (member-major), its label and task weights."""
    b, n_labels = weight.shape[0], len(task)
    member = np.repeat(np.arange(b, dtype=np.int64), n_labels)
    flat_task = member * n_tasks + np.tile(task, b)
    flat_worker = member * n_workers + np.tile(worker, b)
    flat_answer = answer.ravel()
    return flat_task, flat_worker, flat_answer


@dataclass(frozen=True)
class _Shared:
    """The layout when every member has the same answers (a bootstrap): the labels as a
    sparse (tasks x worker·answer) count matrix, so each EM step is two sparse products."""

    counts: object
    """scipy.sparse CSR (n_tasks, n_workers · n_classes)."""
    counts_t: object
    answer_of: np.ndarray
    """The answer code of each column."""


def _shared(task, worker, answer, n_tasks, n_workers, n_classes) -> _Shared:
    from scipy import sparse

    g = n_workers * n_classes
    m = sparse.csr_matrix(
        (np.ones(len(task)), (task, worker * n_classes + answer)), shape=(n_tasks, g)
    )
    m.sum_duplicates()
    return _Shared(m, m.T.tocsr(), np.tile(np.arange(n_classes), n_workers))


def _run(steps, state, answer, weight, task, worker, n_tasks, n_workers, n_classes, tol, cap):
    """EM for every member until its log-likelihood changes by less than `tol` (or `cap`
    iterations): each iteration steps only the members still moving, so a slow replicate
    does not make the others pay. `state` holds per-member arrays, first axis B. `steps`:
    (step for per-member answers, step for shared answers)."""
    task = np.asarray(task, dtype=np.int64)
    worker = np.asarray(worker, dtype=np.int64)
    weight = np.asarray(weight, dtype=float)
    b = len(weight)
    shared = np.ndim(answer) == 1
    if shared:
        context = _shared(task, worker, np.asarray(answer, np.int64), n_tasks, n_workers, n_classes)
        step = steps[1]
    else:
        step = steps[0]
    answer = np.broadcast_to(np.asarray(answer, dtype=np.int64), (b, len(task)))
    has = np.bincount(task, minlength=n_tasks) > 0
    # Tasks without labels carry no likelihood; their posterior stays uniform.
    weight = np.where(has[None, :], weight, 0.0)
    ll = np.full(b, -np.inf)
    converged = np.zeros(b, dtype=bool)
    active = np.arange(b)
    iterations = 0
    sub = state

    def layout(w):
        if shared:
            return context
        return _layout(task, worker, answer[active], w, n_tasks, n_workers, n_classes)

    w = weight
    flat = layout(w)
    while iterations < cap and len(active):
        iterations += 1
        sub, new_ll = step(sub, w, task, flat, n_tasks, n_workers, n_classes)
        moving = ~converged[active]
        done = np.abs(new_ll - ll[active]) < tol
        # A member's fit is the one of its first settled step (a converged member still in
        # the batch stays at its fixed point until the batch shrinks).
        ll[active[moving]] = new_ll[moving]
        converged[active[done]] = True
        settled = converged[active]
        if settled.all() or iterations == cap or settled.sum() * 4 >= len(active):
            # Write the members back; go on with those still moving (a new, smaller layout).
            for key, value in sub.items():
                state[key][active] = value
            keep = ~settled
            active = active[keep]
            sub = {key: value[keep] for key, value in sub.items()}
            w = weight[active]
            flat = layout(w)
    return BatchFit(state["post"], ll, iterations, converged)


def _ds_step(state, tw, task, flat, n_tasks, n_workers, n_classes):
    flat_task, flat_worker, flat_answer = flat
    post = state["post"]
    b = len(tw)
    priors = (post * tw[:, :, None]).sum(axis=1) / np.maximum(tw.sum(axis=1, keepdims=True), _TINY)
    label_w = tw[:, task].ravel()
    weights = post.reshape(b * n_tasks, n_classes)[flat_task] * label_w[:, None]
    cell = flat_worker * n_classes + flat_answer
    counts = np.empty((b * n_workers * n_classes, n_classes))
    for t in range(n_classes):
        counts[:, t] = np.bincount(cell, weights=weights[:, t], minlength=b * n_workers * n_classes)
    counts = counts.reshape(b, n_workers, n_classes, n_classes).transpose(0, 1, 3, 2)
    rows = counts.sum(axis=3, keepdims=True)  # (B, W, truth, answer) / row sums
    errors = np.where(rows > 0, counts / np.maximum(rows, _TINY), 1.0 / n_classes)
    log_errors = np.log(np.maximum(errors, _TINY)).reshape(b * n_workers, n_classes, n_classes)
    per_label = log_errors[flat_worker, :, flat_answer]  # (B·L, truth)
    joint = np.log(np.maximum(priors, _TINY))[:, None, :] + _per_task(
        flat_task, per_label, b, n_tasks
    )
    post, ll = _normalise(joint, tw)
    return {"post": post}, ll


def dawid_skene_batch(
    task: np.ndarray,
    worker: np.ndarray,
    answer: np.ndarray,
    weight: np.ndarray,
    n_tasks: int,
    n_workers: int,
    n_classes: int,
    *,
    start: np.ndarray | None = None,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> BatchFit:
    """Dawid–Skene on every member: `answer` (L,) or (B, L), `weight` (B, n_tasks). `start`
    (n_tasks, C) or (B, n_tasks, C) is the first posterior (a warm start: the full fit's);
    None starts from each member's vote shares, as `em.dawid_skene` does."""
    b = len(weight)
    if start is None:
        answers = np.broadcast_to(np.asarray(answer, dtype=np.int64), (b, len(task)))
        member = np.repeat(np.arange(b, dtype=np.int64), len(task))
        flat_task = member * n_tasks + np.tile(np.asarray(task, dtype=np.int64), b)
        post = _shares(flat_task, answers, b, n_tasks, n_classes)
    else:
        post = np.broadcast_to(start, (b, n_tasks, n_classes)).copy()
    state = {"post": post}
    return _run(
        (_ds_step, _ds_step_shared),
        state,
        answer,
        weight,
        task,
        worker,
        n_tasks,
        n_workers,
        n_classes,
        tolerance,
        max_iterations,
    )


def _mace_step(state, tw, task, flat, n_tasks, n_workers, n_classes):
    flat_task, flat_worker, flat_answer = flat
    b = len(tw)
    post = state["post"]
    competence = state["competence"].reshape(b * n_workers)
    strategy = state["strategy"].reshape(b * n_workers, n_classes)
    label_w = tw[:, task].ravel()
    cell = flat_worker * n_classes + flat_answer
    # M-step (as em._mace_m_step, every label weighted by its task's draws).
    theta = competence[flat_worker]
    xi = strategy[flat_worker, flat_answer]
    post_at = post.reshape(b * n_tasks, n_classes)[flat_task, flat_answer]
    known = post_at * theta / np.maximum(theta + (1 - theta) * xi, _TINY)
    n = np.bincount(flat_worker, weights=label_w, minlength=b * n_workers)
    competence = (
        np.bincount(flat_worker, weights=known * label_w, minlength=b * n_workers) + SMOOTHING
    ) / (n + 2 * SMOOTHING)
    spam_counts = np.bincount(
        cell, weights=(1 - known) * label_w, minlength=b * n_workers * n_classes
    ).reshape(b * n_workers, n_classes)
    strategy = (spam_counts + SMOOTHING) / (
        spam_counts.sum(axis=1, keepdims=True) + n_classes * SMOOTHING
    )
    # E-step (as em._mace_e_step).
    theta = competence[flat_worker]
    spam = (1 - theta) * strategy[flat_worker, flat_answer]
    log_spam = np.log(np.maximum(spam, _TINY))
    lift = np.log(np.maximum(theta + spam, _TINY)) - log_spam
    base = np.bincount(flat_task, weights=log_spam, minlength=b * n_tasks)
    joint = np.bincount(
        flat_task * n_classes + flat_answer, weights=lift, minlength=b * n_tasks * n_classes
    ).reshape(b, n_tasks, n_classes)
    joint += base.reshape(b, n_tasks, 1) - np.log(n_classes)
    post, ll = _normalise(joint, tw)
    new = {
        "post": post,
        "competence": competence.reshape(b, n_workers),
        "strategy": strategy.reshape(b, n_workers, n_classes),
    }
    return new, ll


def mace_batch(
    task: np.ndarray,
    worker: np.ndarray,
    answer: np.ndarray,
    weight: np.ndarray,
    n_tasks: int,
    n_workers: int,
    n_classes: int,
    *,
    start: np.ndarray,
    competence: np.ndarray | None = None,
    strategy: np.ndarray | None = None,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> BatchFit:
    """MACE on every member from the posterior `start` and, when given, the parameters
    `competence` (W,) and `strategy` (W, C) (a warm start: the full fit's), with the answers
    already in the fit's sorted class coding. Weighted counts, the same ½ smoothing. Without
    parameters the first M-step starts as `em.mace`'s majority start does (θ ½, ξ uniform)."""
    b = len(weight)
    theta = np.full(n_workers, 0.5) if competence is None else competence
    xi = np.full((n_workers, n_classes), 1.0 / n_classes) if strategy is None else strategy
    state = {
        "post": np.broadcast_to(start, (b, n_tasks, n_classes)).copy(),
        "competence": np.broadcast_to(theta, (b, n_workers)).copy(),
        "strategy": np.broadcast_to(xi, (b, n_workers, n_classes)).copy(),
    }
    return _run(
        (_mace_step, _mace_step_shared),
        state,
        answer,
        weight,
        task,
        worker,
        n_tasks,
        n_workers,
        n_classes,
        tolerance,
        max_iterations,
    )


def _ds_step_shared(state, tw, task, ctx: _Shared, n_tasks, n_workers, n_classes):
    post = state["post"]
    b, c = len(tw), n_classes
    priors = (post * tw[:, :, None]).sum(axis=1) / np.maximum(tw.sum(axis=1, keepdims=True), _TINY)
    x = (post * tw[:, :, None]).transpose(1, 0, 2).reshape(n_tasks, b * c)
    counts = np.asarray(ctx.counts_t @ x)  # (worker·answer, member·truth)
    counts = counts.reshape(n_workers, c, b, c).transpose(2, 0, 3, 1)  # b, w, truth, answer
    rows = counts.sum(axis=3, keepdims=True)
    errors = np.where(rows > 0, counts / np.maximum(rows, _TINY), 1.0 / c)
    log_errors = np.log(np.maximum(errors, _TINY))  # b, w, truth, answer
    z = log_errors.transpose(1, 3, 0, 2).reshape(n_workers * c, b * c)  # (w·a, b·truth)
    per_task = np.asarray(ctx.counts @ z).reshape(n_tasks, b, c).transpose(1, 0, 2)
    joint = np.log(np.maximum(priors, _TINY))[:, None, :] + per_task
    post, ll = _normalise(joint, tw)
    return {"post": post}, ll


def _mace_step_shared(state, tw, task, ctx: _Shared, n_tasks, n_workers, n_classes):
    post = state["post"]
    b, c = len(tw), n_classes
    theta = state["competence"]  # (b, w)
    xi = state["strategy"]  # (b, w, a)
    # M-step: a label (w, a) "knows" with P(truth = a) · f[w, a], f = θ / (θ + (1 − θ) ξ[a]).
    f = theta[:, :, None] / np.maximum(theta[:, :, None] + (1 - theta[:, :, None]) * xi, _TINY)
    x = (post * tw[:, :, None]).transpose(1, 0, 2).reshape(n_tasks, b * c)
    at = np.asarray(ctx.counts_t @ x).reshape(n_workers * c, b, c)
    seen = at[np.arange(n_workers * c), :, ctx.answer_of]  # (w·a, b): Σ w·P(truth = a)
    seen = seen.reshape(n_workers, c, b).transpose(2, 0, 1)  # b, w, a
    drawn = np.asarray(ctx.counts_t @ tw.T).reshape(n_workers, c, b).transpose(2, 0, 1)
    known = f * seen
    competence = (known.sum(axis=2) + SMOOTHING) / (drawn.sum(axis=2) + 2 * SMOOTHING)
    spam_counts = np.maximum(drawn - known, 0.0)
    strategy = (spam_counts + SMOOTHING) / (spam_counts.sum(axis=2, keepdims=True) + c * SMOOTHING)
    # E-step.
    spam = (1 - competence[:, :, None]) * strategy  # b, w, a
    log_spam = np.log(np.maximum(spam, _TINY))
    lift = np.log(np.maximum(competence[:, :, None] + spam, _TINY)) - log_spam
    base = np.asarray(ctx.counts @ log_spam.transpose(1, 2, 0).reshape(n_workers * c, b))
    z = np.zeros((n_workers, c, b, c))
    for a in range(c):
        z[:, a, :, a] = lift[:, :, a].T
    joint = np.asarray(ctx.counts @ z.reshape(n_workers * c, b * c)).reshape(n_tasks, b, c)
    joint = (joint + base[:, :, None] - np.log(c)).transpose(1, 0, 2)
    post, ll = _normalise(joint, tw)
    return {"post": post, "competence": competence, "strategy": strategy}, ll


def answers_of(posterior: np.ndarray, class_rank: np.ndarray | None = None) -> np.ndarray:
    """Most probable class per member and task (ties: the lowest rank, as `em.Fit.answers`)."""
    if class_rank is None:
        return posterior.argmax(axis=-1)
    order = np.argsort(class_rank)
    return order[posterior[..., order].argmax(axis=-1)]

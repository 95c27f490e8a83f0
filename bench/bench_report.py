"""The report as users run it, against a bare pipeline, at 20k, 100k, 195k and 500k labels;
and early in a large study (20,000 sampled items, 74 labels) against its own `--bootstrap 0`.

    python -m bench.bench_report [--sizes 20000,100000,195000,500000] [--rounds 1]
                                 [--early 20000,74]   # "" skips a scenario

Stores (MNLI, 3 classes, 5 labels per item from a pool of 50 annotators of accuracy 0.55 to
0.95: a realistic label distribution) are built once under /tmp/statsperf-bench and reused.
Per size, in one session and alternated round by round (the machine is shared: ratios, not
absolute times, are the result):

- bare: a fresh process running the plain script below (sqlite3 -> numpy, majority, accuracy,
  `krippendorff.alpha`, Fleiss' κ, pairwise κ), imports included;
- `annotate report STUDY` in a subprocess with default settings (table), `--format json` and
  `--format html`, imports included;
- the function path: `study_report(engine, STUDY)` with default settings, timed in a fresh
  process after its imports.

Prints each time and its ratio to the bare pipeline of the same round (target: the CLI <= 3x).

Early study (`--early ITEMS,LABELS`, the same store with only the first LABELS labels given,
5 per item in sample order): `annotate report STUDY` with default settings against the same
command with `--bootstrap 0` (the baseline: no resampling), each a fresh process, alternated
round by round; wall time and peak RSS, and their ratios. Items without labels add nothing
to the bootstrap: the target is the default report within 1.5x of the baseline in time and
memory (before the aggregation models' refit ran on the labelled items only, it sized its
replicates by every sampled item: 23 s against 2.0 s, 890 MB against 180 MB).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench.common import in_subprocess, print_rows, process_peak, timed

TASK = "glue/mnli-m"
CLASSES = ["entailment", "neutral", "contradiction"]
N_ANNOTATORS = 50
STUDY = "bench"


def build_store(db: Path, items: int, labels: int, seed: int = 1, given: int | None = None) -> None:
    """A finished study: `items` test items with gold, `labels` labels each from distinct
    annotators of a pool of 50 whose accuracy ranges from 0.55 to 0.95. With `given`, a study
    early on: only the first `given` of those labels (items in sample order) are stored."""
    from annotate import specs
    from annotate.workspace import open_workspace

    ws = open_workspace(str(db), create=True)
    ws.engine.dispose()
    protocol = specs.load_protocol("superglue-2019").effective(TASK).model_dump()
    protocol["annotators_per_item"] = labels
    rng = np.random.default_rng(seed)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("BEGIN")
    now = "2024-01-01 00:00:00.000000"
    conn.execute(
        "INSERT INTO dataset (id, task, split, path, sha256, n_items, detail, imported_at) "
        "VALUES (1, ?, 'test', 'bench', 'bench', ?, '{}', ?)",
        (TASK, items, now),
    )
    conn.execute(
        "INSERT INTO study (id, name, task, protocol, test_dataset_id, state, created_at) "
        "VALUES (1, ?, ?, ?, 1, 'test', ?)",
        (STUDY, TASK, json.dumps(protocol), now),
    )
    conn.executemany(
        "INSERT INTO annotator (id, name, failed_logins, created_at) VALUES (?, ?, 0, ?)",
        [(a + 1, f"annotator-{a:02d}", now) for a in range(N_ANNOTATORS)],
    )
    gold = rng.integers(0, 3, items)
    conn.executemany(
        "INSERT INTO item (id, dataset_id, position, source_id, fields, gold, tags) "
        "VALUES (?, 1, ?, ?, ?, ?, NULL)",
        [
            (i + 1, i, str(i), '{"premise": "p", "hypothesis": "h"}', json.dumps(CLASSES[g]))
            for i, g in enumerate(gold.tolist())
        ],
    )
    total = items * labels if given is None else min(given, items * labels)
    per_item = np.clip(total - np.arange(items) * labels, 0, labels).tolist()
    conn.executemany(
        "INSERT INTO studyitem (study_id, item_id, phase, position, n_labels, remaining) "
        "VALUES (1, ?, 'test', ?, ?, ?)",
        [(i + 1, i, per_item[i], labels - per_item[i]) for i in range(items)],
    )
    skill = np.linspace(0.55, 0.95, N_ANNOTATORS)
    who = np.argsort(rng.random((items, N_ANNOTATORS)), axis=1)[:, :labels]
    right = rng.random((items, labels)) < skill[who]
    wrong = (gold[:, None] + rng.integers(1, 3, (items, labels))) % 3
    value = np.where(right, gold[:, None], wrong)
    secs = rng.uniform(2, 30, (items, labels))
    rows = []
    for i in range(items):
        for j in range(per_item[i]):
            s = secs[i, j]
            rows.append(
                (
                    1,
                    i + 1,
                    int(who[i, j]) + 1,
                    json.dumps(CLASSES[value[i, j]]),
                    now,
                    f"2024-01-01 00:00:{int(s):02d}.{int((s % 1) * 1e6):06d}",
                )
            )
    conn.executemany(
        "INSERT INTO label (study_id, item_id, annotator_id, phase, value, shown_at, answered_at, "
        "flag, revisions) VALUES (?, ?, ?, 'test', ?, ?, ?, 0, 0)",
        rows,
    )
    conn.execute("COMMIT")
    conn.close()


# --- the baseline: the same statistics in one plain script ---------------------------------


def baseline(db: Path, k: int) -> dict:
    import krippendorff
    from statsmodels.stats import inter_rater

    def work() -> None:
        conn = sqlite3.connect(db)
        items = conn.execute(
            "SELECT si.item_id, i.gold FROM studyitem si JOIN item i ON i.id = si.item_id "
            "WHERE si.study_id = 1 AND si.phase = 'test' ORDER BY si.position"
        ).fetchall()
        labels = conn.execute(
            "SELECT item_id, annotator_id, value, "
            "(julianday(answered_at) - julianday(shown_at)) * 86400.0 "
            "FROM label WHERE study_id + 0 = 1 AND phase = 'test'"  # a scan: as annotate does
        ).fetchall()
        conn.close()
        item_ids = np.array([r[0] for r in items])
        code_of = {json.dumps(c): n for n, c in enumerate(CLASSES)}
        gold = np.array([code_of[r[1]] for r in items])
        pos = np.searchsorted(item_ids, np.array([r[0] for r in labels]))
        ann = np.array([r[1] for r in labels]) - 1
        uniq, inv = np.unique(np.array([r[2] for r in labels], dtype=object), return_inverse=True)
        code = np.array([code_of[u] for u in uniq])[inv]
        secs = np.array([r[3] for r in labels])
        n, c = len(items), len(CLASSES)
        rng = np.random.default_rng(0)

        def vote(unit: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            counts = np.bincount(unit * c + codes, minlength=n * c).reshape(n, c)
            top = counts.max(axis=1)
            is_top = counts == top[:, None]
            noise = rng.random((n, c)) * is_top
            return noise.argmax(axis=1), counts

        pred, counts = vote(pos, code)
        acc = (pred == gold).mean()
        cm = np.bincount(gold * c + pred, minlength=c * c).reshape(c, c)
        per_ann = np.bincount(ann, weights=code == gold[pos]) / np.bincount(ann)
        order = np.argsort(ann, kind="stable")
        bounds = np.r_[0, np.cumsum(np.bincount(ann))]
        med = [np.median(secs[order[bounds[a] : bounds[a + 1]]]) for a in range(len(bounds) - 1)]
        krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
        inter_rater.fleiss_kappa(counts[counts.sum(axis=1) == k])
        # pairwise Cohen's kappa
        o = np.lexsort((ann, pos))
        u = pos[o]
        i_idx, j_idx = [], []
        for off in range(1, k):
            hit = np.flatnonzero(u[off:] == u[:-off])
            i_idx.append(o[hit])
            j_idx.append(o[hit + off])
        i_, j_ = np.concatenate(i_idx), np.concatenate(j_idx)
        keys, pair = np.unique(ann[i_] * 100 + ann[j_], return_inverse=True)
        nn = np.bincount(pair)
        po = np.bincount(pair, weights=code[i_] == code[j_]) / nn
        ma = np.bincount(pair * c + code[i_], minlength=len(keys) * c).reshape(-1, c) / nn[:, None]
        mb = np.bincount(pair * c + code[j_], minlength=len(keys) * c).reshape(-1, c) / nn[:, None]
        pe = (ma * mb).sum(axis=1)
        _ = (po - pe) / (1 - pe)
        # histogram, unanimous vs split, gold suspects
        top = counts.max(axis=1)
        np.unique(top, return_counts=True)
        unanimous = top == counts.sum(axis=1)
        (pred == gold)[unanimous].mean(), (pred == gold)[~unanimous].mean()
        suspects = np.flatnonzero(pred != gold)
        against = 1 - counts[np.arange(n), gold] / counts.sum(axis=1)
        suspects[np.argsort(-against[suspects], kind="stable")]
        # majority of k, 2 draws each for k = 1, 3 and 5 (as annotate does at this size)
        for kk in (1, 3, 5):
            for _ in range(2):
                key = np.argsort(pos + rng.random(len(pos)), kind="stable")
                g = pos[key]
                starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
                rank = np.arange(len(g)) - np.repeat(starts, np.diff(np.r_[starts, len(g)]))
                chosen = key[rank < kk]
                p, _ = vote(pos[chosen], code[chosen])
                (p == gold).mean()
        assert 0 <= acc <= 1 and cm.sum() == n and len(per_ann) and len(med)

    return timed(work)


def ours(db: Path, bootstrap: int) -> dict:
    import statsmodels.stats.inter_rater  # noqa: F401  (imported before the clock, as above)

    from annotate.report.build import study_report
    from annotate.workspace import open_workspace

    ws = open_workspace(str(db))
    return timed(lambda: study_report(ws.engine, STUDY, bootstrap=bootstrap, seed=1))


def ours_default(db: Path) -> dict:
    from annotate.report.build import study_report
    from annotate.workspace import open_workspace

    ws = open_workspace(str(db))
    return timed(lambda: study_report(ws.engine, STUDY))


def whole_process(*args: str) -> float:
    """Seconds of a fresh `python ARGS` process, imports included."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


STORE_DIR = Path("/tmp/statsperf-bench")
LABELS_PER_ITEM = 5


def store_for(n_labels: int) -> Path:
    """The store of `n_labels` labels (5 per item), built once and reused; its name carries the
    schema revision, so a store an older annotate built is not reused."""
    from annotate.store.schema import SCHEMA_HEAD

    STORE_DIR.mkdir(parents=True, exist_ok=True)
    db = STORE_DIR / f"report-{n_labels}-schema{SCHEMA_HEAD}.db"
    if not db.exists():
        partial = db.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        build_store(partial, n_labels // LABELS_PER_ITEM, LABELS_PER_ITEM)
        partial.rename(db)
    return db


def early_store(items: int, given: int) -> Path:
    """The study of `items` sampled items with only `given` labels so far (5 per item, in
    sample order), built once and reused as `store_for`'s."""
    from annotate.store.schema import SCHEMA_HEAD

    STORE_DIR.mkdir(parents=True, exist_ok=True)
    db = STORE_DIR / f"report-early-{items}-{given}-schema{SCHEMA_HEAD}.db"
    if not db.exists():
        partial = db.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        build_store(partial, items, LABELS_PER_ITEM, given=given)
        partial.rename(db)
    return db


def measure_early(db: Path, rounds: int) -> list[tuple[str, str]]:
    """The early study's rows: `--bootstrap 0` (the baseline) and the default report,
    alternated round by round, each a fresh process; medians over the rounds."""
    report = [sys.executable, "-m", "annotate", "--db", str(db), "report", STUDY]
    runs: dict[str, list[tuple[float, float]]] = {"baseline": [], "default": []}
    for _ in range(rounds):
        runs["baseline"].append(process_peak([*report, "--bootstrap", "0"]))
        runs["default"].append(process_peak(report))
    base_s, base_mb = (float(np.median(v)) for v in zip(*runs["baseline"], strict=True))
    s, mb = (float(np.median(v)) for v in zip(*runs["default"], strict=True))
    return [
        ("report --bootstrap 0 (baseline)", f"{base_s:.2f} s, peak RSS {base_mb:.0f} MB"),
        ("report (table), default settings", f"{s:.2f} s, peak RSS {mb:.0f} MB"),
        ("ratio default / baseline", f"{s / base_s:.2f}x time, {mb / base_mb:.2f}x memory"),
    ]


def measure(db: Path) -> dict[str, float]:
    """One round at one size: bare, then each CLI form and the function path."""
    report = ["-m", "annotate", "--db", str(db), "report", STUDY]
    out = {
        "bare": whole_process(
            "-m", "bench.bench_report", "--run", "baseline", "--db", str(db), "--labels", "5"
        )
    }
    out["report (table)"] = whole_process(*report)
    out["report --format json"] = whole_process(*report, "--format", "json")
    out["report --format html"] = whole_process(*report, "--format", "html")
    out["study_report()"] = in_subprocess(
        "bench.bench_report", "--run", "default", "--db", str(db)
    )["seconds"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="20000,100000,195000,500000")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--labels", type=int, default=LABELS_PER_ITEM)
    parser.add_argument("--run", choices=["ours", "baseline", "default"])
    parser.add_argument("--db")
    parser.add_argument("--bootstrap", type=int, default=0)
    parser.add_argument("--early", default="20000,74", help='ITEMS,LABELS; "" to skip')
    args = parser.parse_args()
    if args.run == "ours":
        print(json.dumps(ours(Path(args.db), args.bootstrap)))
        return
    if args.run == "default":
        print(json.dumps(ours_default(Path(args.db))))
        return
    if args.run == "baseline":
        print(json.dumps(baseline(Path(args.db), args.labels)))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]
    stores = {n: store_for(n) for n in sizes}
    results: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    for _ in range(args.rounds):
        for n in sizes:  # alternate sizes within a round
            results[n].append(measure(stores[n]))
    summary = {}
    for n in sizes:
        rows = []
        for key in results[n][0]:
            times = [r[key] for r in results[n]]
            ratios = [r[key] / r["bare"] for r in results[n]]
            rows.append(
                (
                    key,
                    ", ".join(f"{t:.2f} s" for t in times)
                    + (
                        "" if key == "bare" else "  ratio " + ", ".join(f"{q:.2f}x" for q in ratios)
                    ),
                )
            )
            summary.setdefault(n, {})[key] = {"seconds": times, "ratio": ratios}
        print_rows(f"{n:,} labels ({n // LABELS_PER_ITEM:,} items x 5), default settings", rows)
    if args.early:
        items, given = (int(s) for s in args.early.split(","))
        print_rows(
            f"early study: {items:,} sampled items, {given:,} labels so far",
            measure_early(early_store(items, given), max(args.rounds, 3)),
        )
    print(json.dumps({"bench": "report", "sizes": summary}), file=sys.stderr)


if __name__ == "__main__":
    main()

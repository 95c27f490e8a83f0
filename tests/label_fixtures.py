"""Made-up label files in the real shapes of the tools that write them: an MTurk batch results
CSV (20 item slots per HIT, `Approve`/`Reject` cells left out, a rejected assignment, a 0–100
slider), a Qualtrics export (three header rows), Potato's annotated_instances.jsonl, a Label
Studio JSON export and a long CSV. All text is original, written for these tests."""

from __future__ import annotations

import csv
import io
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

CLASSES = ["entailment", "neutral", "contradiction"]
SLIDER = {"entailment": (70, 100), "neutral": (36, 64), "contradiction": (0, 30)}
BINS = "0-33=contradiction,34-66=neutral,67-100=entailment"
N_SLOTS = 20


def nli_items(n: int, seed: int = 3) -> list[dict]:
    """Premise/hypothesis pairs in the SuperGLUE RTE/CB JSON-lines layout, with gold."""
    rng = random.Random(seed)
    subjects = ["The baker", "A courier", "My aunt", "The pilot", "Our neighbour", "The clerk"]
    verbs = ["painted the fence", "missed the train", "sold the boat", "fixed the radio"]
    items = []
    for i in range(n):
        s, v = subjects[i % len(subjects)], verbs[(i // len(subjects)) % len(verbs)]
        label = CLASSES[rng.randrange(3)]
        hyp = {
            "entailment": f"{s} did something to {v.split()[-1]}s.",
            "neutral": f"{s} was tired on day {i}.",
            "contradiction": f"{s} never {v.replace('ed ', ' ', 1)}.",
        }[label]
        items.append(
            {"premise": f"{s} {v} on day {i}.", "hypothesis": hyp, "label": label, "idx": i}
        )
    return items


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _answer(rng: random.Random, gold: str, skill: float) -> str:
    return gold if rng.random() < skill else rng.choice([c for c in CLASSES if c != gold])


def _slider(rng: random.Random, label: str) -> int:
    low, high = SLIDER[label]
    return rng.randint(low, high)


MTURK_WORKERS = {
    "A1B2C3D4E5F6G7": 0.9,
    "A2ZZTOPW0RK3R9": 0.8,
    "A3QUICKCLICKER": 0.55,
    "A4CAREFULREADR": 0.95,
    "A5NIGHTSHIFT00": 0.75,
}


def mturk_batch(path: Path, items: list[dict], seed: int = 11, na_rate: float = 0.0) -> Path:
    """A batch results file: HITs of 20 slots (the last HIT short), 3 assignments each plus a
    4th on the first HIT (MaxAssignments 4), one rejected assignment, rows without the
    Approve/Reject cells, the answer a 0–100 slider in `Answer.rating0 … Answer.rating19`.
    With `na_rate`, a "not applicable" checkbox per slot (`Answer.na0 …`, "on" when ticked):
    that share of answers ticks it and leaves the slider where it starts, at 50."""
    rng = random.Random(seed)
    meta = [
        "HITId",
        "HITTypeId",
        "Title",
        "Reward",
        "CreationTime",
        "MaxAssignments",
        "AssignmentId",
        "WorkerId",
        "AssignmentStatus",
        "AcceptTime",
        "SubmitTime",
        "AutoApprovalTime",
        "WorkTimeInSeconds",
        "LifetimeApprovalRate",
    ]
    inputs = [
        f"Input.{name}_{n}" for name in ("idx", "premise", "hypothesis") for n in range(N_SLOTS)
    ]
    answers = [f"Answer.rating{n}" for n in range(N_SLOTS)]
    if na_rate:
        answers += [f"Answer.na{n}" for n in range(N_SLOTS)]
    header = meta + inputs + answers + ["Answer.comments", "Approve", "Reject"]
    hits = [items[i : i + N_SLOTS] for i in range(0, len(items), N_SLOTS)]
    workers = list(MTURK_WORKERS)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    start = datetime(2024, 3, 5, 16, 0, tzinfo=UTC)
    assignment = 0
    for h, hit in enumerate(hits):
        n_assign = 4 if h == 0 else 3
        chosen = rng.sample(workers, n_assign + (1 if h == 1 else 0))
        for a, worker in enumerate(chosen):
            assignment += 1
            rejected = h == 1 and a == len(chosen) - 1
            accept = start + timedelta(minutes=37 * assignment)
            work = rng.randint(400, 900)
            submit = accept + timedelta(seconds=work)
            row = [
                f"3HIT{h:04d}XYZ",
                "3TYPEQ",
                "Does the sentence follow?",
                "$1.50",
                "Tue Mar 05 08:00:00 PST 2024",
                str(n_assign),
                f"3ASSIGN{assignment:04d}",
                worker,
                "Rejected" if rejected else "Approved",
                _mturk_time(accept),
                _mturk_time(submit),
                _mturk_time(submit + timedelta(days=3)),
                str(work),
                "100% (12/12)",
            ]
            cells = {}
            for n in range(N_SLOTS):
                item = hit[n] if n < len(hit) else None
                cells[f"Input.idx_{n}"] = "" if item is None else str(item["idx"])
                cells[f"Input.premise_{n}"] = "" if item is None else item["premise"]
                cells[f"Input.hypothesis_{n}"] = "" if item is None else item["hypothesis"]
                if na_rate:
                    cells[f"Answer.na{n}"] = ""
                if item is None:
                    cells[f"Answer.rating{n}"] = ""
                elif na_rate and rng.random() < na_rate:
                    cells[f"Answer.rating{n}"] = "50"
                    cells[f"Answer.na{n}"] = "on"
                else:
                    skill = 0.3 if rejected else MTURK_WORKERS[worker]
                    cells[f"Answer.rating{n}"] = str(
                        _slider(rng, _answer(rng, item["label"], skill))
                    )
            row += [cells[c] for c in inputs + answers]
            row.append("took care" if a == 0 else "")
            writer.writerow(row)  # Approve and Reject left out: the row is 2 cells short
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def _mturk_time(moment: datetime) -> str:
    pacific = moment - timedelta(hours=8)  # March 5th: PST
    return pacific.strftime("%a %b %d %H:%M:%S PST %Y")


def long_csv(path: Path, items: list[dict], seed: int = 5) -> Path:
    """One label per row, with its own column names, seconds and a comment."""
    rng = random.Random(seed)
    rows = ["pair,coder,verdict,secs,when,note"]
    t = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
    for item in items:
        for coder, skill in (("ana", 0.9), ("ben", 0.8), ("cai", 0.7)):
            t += timedelta(seconds=17)
            note = "typo in premise" if (coder == "ben" and item["idx"] == 2) else ""
            rows.append(
                f"{item['idx']},{coder},{_answer(rng, item['label'], skill)},"
                f"{rng.randint(5, 40)},{t.isoformat()},{note}"
            )
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def qualtrics_csv(
    path: Path, items: list[dict], seed: int = 6, time_zone: str | None = None
) -> Path:
    """A Qualtrics export: names, question texts, import ids; one question per item (`item_7`),
    answered with the label's text; PROLIFIC_PID as embedded data. With `time_zone`, the
    dates' import ids name it, as Qualtrics writes (`{"ImportId":"startDate","timeZone":…}`)."""
    rng = random.Random(seed)
    meta = [
        "StartDate",
        "EndDate",
        "Status",
        "IPAddress",
        "Progress",
        "Duration (in seconds)",
        "Finished",
        "RecordedDate",
        "ResponseId",
        "DistributionChannel",
        "UserLanguage",
    ]
    questions = [f"item_{it['idx']}" for it in items]
    header = meta + questions + ["PROLIFIC_PID"]
    texts = [
        *meta,
        *(f"Does the hypothesis follow? {it['hypothesis']}" for it in items),
        "PROLIFIC_PID",
    ]
    dated = {"StartDate", "EndDate", "RecordedDate"}
    ids = [
        json.dumps(
            {"ImportId": m.lower()} | ({"timeZone": time_zone} if time_zone and m in dated else {})
        )
        for m in meta
    ]
    ids += [json.dumps({"ImportId": f"QID{n + 1}"}) for n in range(len(items))]
    ids += [json.dumps({"ImportId": "PROLIFIC_PID"})]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerows([header, texts, ids])
    for r, (pid, skill) in enumerate(
        (
            ("5f1a0c0ffee0000000000001", 0.9),
            ("5f1a0c0ffee0000000000002", 0.85),
            ("5f1a0c0ffee0000000000003", 0.7),
            ("5f1a0c0ffee0000000000004", 0.6),
        )
    ):
        start = datetime(2024, 6, 1, 10, 0) + timedelta(hours=r)
        duration = 300 + 60 * r
        finished = "False" if r == 3 else "True"
        row = [
            start.strftime("%Y-%m-%d %H:%M:%S"),
            (start + timedelta(seconds=duration)).strftime("%Y-%m-%d %H:%M:%S"),
            "IP Address",
            f"203.0.113.{r + 5}",
            "100",
            str(duration),
            finished,
            (start + timedelta(seconds=duration)).strftime("%Y-%m-%d %H:%M:%S"),
            f"R_{r}abcDEF",
            "anonymous",
            "EN",
        ]
        row += [_answer(rng, it["label"], skill).capitalize() for it in items]
        row.append(pid)
        writer.writerow(row)
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def potato_jsonl(path: Path, items: list[dict], seed: int = 7) -> Path:
    """Potato's annotated_instances.jsonl with a user_id per line and a radio scheme."""
    rng = random.Random(seed)
    lines = []
    for user, skill in (("maria", 0.9), ("joon", 0.8), ("tess", 0.75)):
        for item in items:
            answer = _answer(rng, item["label"], skill)
            lines.append(
                {
                    "id": str(item["idx"]),
                    "user_id": user,
                    "displayed_text": item["premise"],
                    "label_annotations": {"inference": {answer: "true"}},
                    "span_annotations": {},
                    "behavioral_data": {
                        "time_string": f"Time spent: 0d 0h 0m {rng.randint(4, 50)}s "
                    },
                }
            )
    return write_jsonl(path, lines)


def labelstudio_json(path: Path, items: list[dict], seed: int = 8) -> Path:
    """A Label Studio JSON export: tasks with data and annotations (choices, lead_time)."""
    rng = random.Random(seed)
    tasks = []
    for n, item in enumerate(items):
        annotations = []
        for user, skill in ((3, 0.9), (4, 0.85), (7, 0.7)):
            done = datetime(2024, 7, 2, 12, 0, tzinfo=UTC) + timedelta(minutes=n * 3 + user)
            annotations.append(
                {
                    "id": 100 * n + user,
                    "completed_by": user,
                    "result": [
                        {
                            "from_name": "inference",
                            "to_name": "text",
                            "type": "choices",
                            "value": {"choices": [_answer(rng, item["label"], skill)]},
                        }
                    ],
                    "was_cancelled": False,
                    "created_at": done.isoformat().replace("+00:00", "Z"),
                    "updated_at": done.isoformat().replace("+00:00", "Z"),
                    "lead_time": round(rng.uniform(3, 40), 3),
                }
            )
        tasks.append(
            {
                "id": 500 + n,
                "data": {
                    "idx": item["idx"],
                    "premise": item["premise"],
                    "hypothesis": item["hypothesis"],
                },
                "annotations": annotations,
            }
        )
    path.write_text(json.dumps(tasks, indent=2), encoding="utf-8")
    return path


def imported_crowd(cli, tmp_path: Path, *, past_k: bool = False) -> str:
    """With the `cli` fixture: study `crowd` of three workers' imported labels on three pairs (k = 3), and a fourth
    worker's label on p0, one past k, when `past_k`; the third worker's pseudonym (A3Z's,
    pseudonyms going in the file's order)."""
    rows = ["pair,premise,hypothesis,worker,answer"]
    for n in range(3):
        for worker, answer in (("A1X", "yes"), ("A2Y", "yes"), ("A3Z", "no")):
            rows.append(f"p{n},The ferry left at dawn {n}.,It left early.,{worker},{answer}")
    if past_k:
        rows.append("p0,The ferry left at dawn 0.,It left early.,A4W,yes")
    crowd = tmp_path / "crowd.csv"
    crowd.write_text("\n".join(rows) + "\n", encoding="utf-8")
    imported = cli(
        "import-labels", crowd, "--task", "superglue/rte", "--study", "crowd",
        "--map", "item=pair,annotator=worker,label=answer",
        "--values", "entailment=yes,not_entailment=no",
    )  # fmt: skip
    assert imported.code == 0, imported.stderr
    trainees = cli("gate", "crowd", "--format", "json").json()["trainees"]
    assert len(trainees) == (4 if past_k else 3)
    return sorted(m["name"] for m in trainees)[2]

"""Protocol rules on the engine, without a screen: the invariants of DESIGN.md, each on both
backends (SQLite and PostgreSQL)."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import Session, select

from annotate.errors import UserError
from annotate.protocol import gate
from annotate.protocol.session import AnnotatorSession, ItemTaken, Phase
from annotate.protocol.studies import TEST, create_study, load_study
from annotate.store.models import GateDecision, Label, LabelRevision, StudyItem, utcnow
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_rows, rte_study, write_jsonl


@pytest.fixture
def db_url(store_url: str) -> str:
    """Every test here runs once on SQLite and once on PostgreSQL (conftest's `workspace` and
    `cli` open this URL)."""
    return store_url


def train(session: AnnotatorSession, right: bool = True) -> None:
    """Answer every training item, right or wrong."""
    while session.phase() is Phase.TRAINING:
        item = session.next_item()
        assert item is not None
        with Session(session.engine) as s:
            from annotate.store.models import Item

            gold = s.get(Item, item.item_id).gold
        wrong = "not_entailment" if gold == "entailment" else "entailment"
        session.submit(item, gold if right else wrong)


def test_sample_is_seeded_and_reproducible(workspace, tmp_path: Path):
    a = rte_study(workspace.engine, tmp_path / "a", name="a", test=20, test_sample=8)
    b = rte_study(workspace.engine, tmp_path / "a", name="b", test=20, test_sample=8)
    c = rte_study(workspace.engine, tmp_path / "a", name="c", test=20, test_sample=8, seed=99)

    def sample(ctx):
        with Session(workspace.engine) as s:
            return [
                si.item_id
                for si in s.exec(
                    select(StudyItem)
                    .where(StudyItem.study_id == ctx.id, StudyItem.phase == TEST)
                    .order_by(StudyItem.position)
                )
            ]

    assert len(sample(a)) == 8 and sample(a) == sample(b) != sample(c)
    assert a.protocol.test_sample == 8


def test_training_and_test_never_overlap_on_one_dataset(workspace, tmp_path: Path):
    from annotate import specs
    from annotate.formats.importer import import_file

    ds = import_file(
        workspace.engine,
        specs.load_task("superglue/rte"),
        write_jsonl(tmp_path / "val.jsonl", rte_rows(30)),
    )
    ctx = create_study(
        workspace.engine,
        "same",
        "superglue/rte",
        "quick",
        train_dataset_id=ds.dataset_id,
        test_dataset_id=ds.dataset_id,
        overrides={"test_sample": 20, "training_items": 20},
    )
    with Session(workspace.engine) as s:
        rows = s.exec(select(StudyItem).where(StudyItem.study_id == ctx.id)).all()
    training = {r.item_id for r in rows if r.phase == "training"}
    test = {r.item_id for r in rows if r.phase == TEST}
    assert len(test) == 20 and len(training) == 10 and not training & test


def test_threshold_gate_decides_at_the_minimum_and_records_evidence(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path, gate_threshold=0.5)
    good = AnnotatorSession.open(workspace.engine, ctx.study.name, "good", create_annotator=True)
    bad = AnnotatorSession.open(workspace.engine, ctx.study.name, "bad", create_annotator=True)
    train(good, right=True)
    train(bad, right=False)
    assert good.phase() is Phase.TEST and bad.phase() is Phase.REJECTED
    assert bad.next_item() is None  # invariant 2: no test item without a passing decision
    with Session(workspace.engine) as s:
        d = s.exec(select(GateDecision).where(GateDecision.annotator_id == bad.annotator_id)).one()
    assert (d.rule, d.threshold, d.score, d.n_items, d.admitted) == (
        "threshold",
        0.5,
        0.0,
        6,
        False,
    )


def test_median_gate_waits_then_decides_in_a_batch(workspace, tmp_path: Path):
    ctx = rte_study(
        workspace.engine, tmp_path, protocol="superglue-2019", train=6, gate_min_items=5
    )
    sessions = [
        AnnotatorSession.open(workspace.engine, ctx.study.name, n, create_annotator=True)
        for n in ("a", "b", "c")
    ]
    train(sessions[0], right=True)
    train(sessions[1], right=True)
    # c answers 3 right then 3 wrong: accuracy 0.5, below the median of (1, 1, 0.5) = 1
    c = sessions[2]
    for i in range(6):
        item = c.next_item()
        with Session(workspace.engine) as s:
            from annotate.store.models import Item

            gold = s.get(Item, item.item_id).gold
        c.submit(
            item, gold if i < 3 else ("entailment" if gold != "entailment" else "not_entailment")
        )
    assert all(s.phase() is Phase.WAITING for s in sessions)
    assert sessions[0].next_item() is None
    # 2 admitted of k = 5: closing warns that the study cannot complete, so it needs force
    decisions = gate.close_training(
        workspace.engine,
        load_study(workspace.engine, ctx.study.name),
        force=True,
        reason="pilot run",
    )
    assert {d.name: d.admitted for d in decisions} == {"a": True, "b": True, "c": False}
    assert all(d.threshold == 1.0 for d in decisions)
    assert [s.phase() for s in sessions] == [Phase.TEST, Phase.TEST, Phase.REJECTED]
    # a trainee who finishes after the close is judged against the recorded median
    late = AnnotatorSession.open(workspace.engine, ctx.study.name, "late", create_annotator=True)
    train(late, right=True)
    assert late.phase() is Phase.TEST


def test_manual_gate(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path, gate_rule="manual")
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    train(s)
    assert s.phase() is Phase.WAITING
    gate.decide_manually(workspace.engine, ctx, "ana", admit=True, reason="trained in person")
    assert s.phase() is Phase.TEST and s.next_item() is not None


def test_test_items_fill_k_distinct_annotators_breadth_first(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path, test=6, annotators_per_item=3)
    crowd = [
        AnnotatorSession.open(workspace.engine, ctx.study.name, f"a{i}", create_annotator=True)
        for i in range(4)
    ]
    for s in crowd:
        train(s)
    first = crowd[0].next_item()
    crowd[0].submit(first, "entailment")
    # the open item is finished before anyone opens a new one
    assert crowd[1].next_item().item_id == first.item_id
    feedback = crowd[1].submit(crowd[1].next_item(), "entailment")
    assert feedback is None  # no feedback in the test phase (invariant 3)
    for s in crowd:
        while (item := s.next_item()) is not None:
            s.submit(item, "not_entailment")
    with Session(workspace.engine) as db:
        labels = db.exec(select(Label).where(Label.study_id == ctx.id, Label.phase == TEST)).all()
    per_item = Counter(label.item_id for label in labels)
    assert set(per_item.values()) == {3} and len(per_item) == 6
    assert len({(label.item_id, label.annotator_id) for label in labels}) == len(labels)


def test_item_view_never_carries_gold(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path)
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    train(s)
    item = s.next_item()
    assert item.phase == TEST
    assert "label" not in item.fields and "gold" not in vars(item)


def test_answer_is_committed_before_submit_returns_and_resume(workspace, tmp_path: Path, db_url):
    ctx = rte_study(workspace.engine, tmp_path)
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    train(s)
    item = s.next_item()
    s.submit(item, "entailment")
    other = open_workspace(db_url)  # another connection sees it at once
    with Session(other.engine) as db:
        assert db.exec(
            select(Label).where(Label.item_id == item.item_id, Label.phase == TEST)
        ).one()
    on_screen = s.next_item()
    # the process "dies" here: a new session resumes with the item that was on the screen
    resumed = AnnotatorSession.open(other.engine, ctx.study.name, "ana").next_item()
    assert resumed.item_id == on_screen.item_id != item.item_id


def test_abandoned_lease_expires_and_the_item_returns_to_the_pool(workspace, tmp_path: Path):
    now = [utcnow()]
    ctx = rte_study(workspace.engine, tmp_path, test=1, annotators_per_item=1, lease_minutes=5)
    a = AnnotatorSession.open(
        workspace.engine, ctx.study.name, "a", create_annotator=True, clock=lambda: now[0]
    )
    b = AnnotatorSession.open(
        workspace.engine, ctx.study.name, "b", create_annotator=True, clock=lambda: now[0]
    )
    train(a)
    train(b)
    held = a.next_item()
    assert b.next_item() is None  # leased to a
    now[0] += timedelta(minutes=6)
    taken = b.next_item()
    assert taken is not None and taken.item_id == held.item_id
    b.submit(taken, "entailment")
    with pytest.raises(ItemTaken):
        a.submit(held, "entailment")  # too late: the item has its k labels


def test_no_item_now_but_one_held_by_a_window_left_open_says_wait_not_done(
    workspace, tmp_path: Path
):
    """The one item b has not labelled is on a's screen (a closed the window without
    quitting): b is told it may come back, and when, not "all done"; c, who labelled it, is
    done; once it has its labels, nothing is left for b either."""
    now = [utcnow()]
    ctx = rte_study(workspace.engine, tmp_path, test=2, annotators_per_item=2, lease_minutes=5)
    a, b, c = (
        AnnotatorSession.open(
            workspace.engine, ctx.study.name, name, create_annotator=True, clock=lambda: now[0]
        )
        for name in ("a", "b", "c")
    )
    for s in (a, b, c):
        train(s)
    x = a.next_item()
    a.submit(x, "entailment")
    b.submit(b.next_item(), "entailment")  # x, closest to complete: complete now
    y = a.next_item()  # a holds y, and leaves it on the screen
    assert y.item_id != x.item_id and c.next_item().item_id == y.item_id
    c.submit(y, "entailment")  # y takes one more label; a's hold is on it
    assert c.next_item() is None and c.held_elsewhere() is None
    assert b.next_item() is None
    waiting = b.held_elsewhere()
    assert waiting is not None and (waiting.items, waiting.minutes) == (1, 5)
    now[0] += timedelta(minutes=2, seconds=30)
    assert b.held_elsewhere().minutes == 3  # rounded up
    now[0] += timedelta(minutes=3)  # a's hold has run out: the item comes to b
    back = b.next_item()
    assert back is not None and back.item_id == y.item_id
    b.submit(back, "entailment")
    assert b.next_item() is None and b.held_elsewhere() is None  # now all done


def test_revising_keeps_the_earlier_answer(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path)
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    train(s)
    s.submit(s.next_item(), "entailment", flag=True, comment="  typo in the premise ")
    item, value = s.last_answer()
    assert value == "entailment"
    s.revise(item, "not_entailment")
    with Session(workspace.engine) as db:
        label = db.exec(select(Label).where(Label.phase == TEST)).one()
        revision = db.exec(select(LabelRevision)).one()
    assert (label.value, label.revisions, label.flag, label.comment) == (
        "not_entailment",
        1,
        True,
        "typo in the premise",
    )
    assert revision.old_value == "entailment"


def test_only_the_previous_answer_can_be_revised(workspace, tmp_path: Path):
    """A form kept from an earlier item (a saved page, the back button) changes nothing."""
    ctx = rte_study(workspace.engine, tmp_path)
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    train(s)
    first = s.next_item()
    s.submit(first, "entailment")
    s.submit(s.next_item(), "entailment")
    with pytest.raises(UserError, match="Only your previous answer can be changed"):
        s.revise(first, "not_entailment")
    with Session(workspace.engine) as db:
        values = [x.value for x in db.exec(select(Label).where(Label.phase == TEST))]
        assert values == ["entailment", "entailment"] and not db.exec(select(LabelRevision)).all()


def test_invalid_answer_is_refused(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path)
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    with pytest.raises(UserError, match="not an answer"):
        s.submit(s.next_item(), "maybe")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.integers(1, 4),
    n_items=st.integers(1, 6),
    steps=st.lists(
        st.tuples(st.integers(0, 5), st.sampled_from(["answer", "abandon", "peek"])), max_size=60
    ),
)
def test_assignment_property(tmp_path_factory, new_store_url, k: int, n_items: int, steps):
    """Whatever order 6 annotators ask, answer, abandon or re-ask in: no item gets more than k
    labels, nobody labels an item twice, and a new item is opened only when no open item
    (1..k-1 labels) can be given to that annotator."""
    tmp = tmp_path_factory.mktemp("prop")
    ws = open_workspace(new_store_url(), create=True)
    ctx = rte_study(ws.engine, tmp, train=1, test=n_items, annotators_per_item=k)
    crowd = [
        AnnotatorSession.open(ws.engine, ctx.study.name, f"a{i}", create_annotator=True)
        for i in range(6)
    ]
    for s in crowd:
        train(s)
    for who, action in steps:
        s = crowd[who]
        with Session(ws.engine) as db:
            counts = {
                si.item_id: si.n_labels
                for si in db.exec(select(StudyItem).where(StudyItem.phase == TEST))
            }
            mine = set(
                db.exec(
                    select(Label.item_id).where(
                        Label.annotator_id == s.annotator_id, Label.phase == TEST
                    )
                )
            )
            from annotate.store.models import Lease

            held = set(db.exec(select(Lease.item_id).where(Lease.annotator_id == s.annotator_id)))
        item = s.next_item()
        if item is not None and action == "answer":
            open_items = [i for i, n in counts.items() if 0 < n < k and i not in mine]
            # (an item already on this annotator's screen comes back first: that is a resume)
            if counts[item.item_id] == 0 and open_items and item.item_id not in held:
                # an open item was skipped only if others hold it on their screens
                from annotate.store.models import Lease

                with Session(ws.engine) as db:
                    leased = Counter(
                        lease.item_id
                        for lease in db.exec(select(Lease))
                        if lease.annotator_id != s.annotator_id
                    )
                assert all(counts[i] + leased[i] >= k for i in open_items)
            s.submit(item, "entailment")
        elif item is not None and action == "abandon":
            s.release()
    with Session(ws.engine) as db:
        labels = db.exec(select(Label).where(Label.phase == TEST)).all()
        counts = {
            si.item_id: si.n_labels
            for si in db.exec(select(StudyItem).where(StudyItem.phase == TEST))
        }
    per_item = Counter(label.item_id for label in labels)
    assert all(n <= k for n in per_item.values())
    assert len({(label.item_id, label.annotator_id) for label in labels}) == len(labels)
    assert all(counts[i] == per_item.get(i, 0) for i in counts)
    ws.engine.dispose()


# --- simulate writes only as synthetic annotators it created ------------------------------------


def test_simulate_refuses_a_real_annotators_name_and_writes_nothing(cli, workspace, tmp_path):
    from sqlalchemy import func, select
    from sqlmodel import Session

    from annotate.store.models import Annotator, Label
    from tests.unit.test_export import simulated_study

    assert cli("annotator", "add", "x1", "--token").code == 0
    simulated_study(workspace.engine, tmp_path, "superglue/rte", k=0)
    refused = cli("simulate", "s", "--prefix", "x", "--annotators", "3", "--accuracy", "0.8")
    assert refused.code == 1 and "'x1' is a real annotator" in refused.stderr
    with Session(workspace.engine) as s:
        assert s.scalar(select(func.count(Label.id))) == 0
        assert [a.name for a in s.scalars(select(Annotator))] == ["x1"]  # x2, x3 not made either
    done = cli("simulate", "s", "--prefix", "sim", "--annotators", "3", "--accuracy", "0.8")
    assert done.code == 0, done.stderr
    again = cli(
        "simulate", "s", "--prefix", "sim", "--annotators", "3", "--accuracy", "0.8"
    )  # its own: reused
    assert again.code == 0, again.stderr
    listed = {
        a["name"]: a["synthetic"] for a in cli("annotator", "list", "--format", "json").json()
    }
    assert listed == {"x1": False, "sim1": True, "sim2": True, "sim3": True}


@pytest.mark.parametrize("wanted", [10, 11])
def test_an_axg_study_samples_whole_minimal_pairs(workspace, tmp_path: Path, wanted: int):
    """AX-g's minimal pairs are rows 2k and 2k+1: a study draws both halves or neither (an odd
    sample size gets one item more), in an order that does not show the halves in a row."""
    from annotate import specs
    from annotate.formats.importer import import_file
    from annotate.store.models import Item

    rows = [
        {
            "premise": f"The clerk said {'she' if i % 2 else 'he'} had signed form {i // 2}.",
            "hypothesis": f"The clerk had signed form {i // 2}.",
            "idx": i,
            "pair_id": 551646 + 2 * i,
            "label": "entailment" if (i // 2) % 2 else "not_entailment",
        }
        for i in range(60)
    ]
    dev = import_file(
        workspace.engine,
        specs.load_task("superglue/rte"),
        write_jsonl(tmp_path / "rte" / "val.jsonl", rte_rows(6)),
    )
    test = import_file(
        workspace.engine,
        specs.load_task("superglue/axg"),
        write_jsonl(tmp_path / "axg" / "AX-g.jsonl", rows),
    )
    ctx = create_study(
        workspace.engine,
        "axg",
        "superglue/axg",
        "quick",
        train_dataset_id=dev.dataset_id,
        test_dataset_id=test.dataset_id,
        overrides={"test_sample": wanted},
    )
    with Session(workspace.engine) as s:
        ids = [
            int(s.get(Item, si.item_id).source_id)
            for si in s.exec(
                select(StudyItem)
                .where(StudyItem.study_id == ctx.id, StudyItem.phase == TEST)
                .order_by(StudyItem.position)
            )
        ]
    assert len(ids) == wanted + wanted % 2
    assert Counter(i // 2 for i in ids) == dict.fromkeys({i // 2 for i in ids}, 2)
    halves_in_a_row = sum(a // 2 == b // 2 for a, b in itertools.pairwise(ids))
    assert halves_in_a_row < len(ids) // 2  # shuffled, not served pair after pair


def test_training_on_a_dev_set_without_gold_names_the_labelled_ones(workspace, tmp_path):
    """The latest dev set (a Hub file without its label column, say) has no gold: the refusal
    named it alone, though another dev set of the task had gold, and not how to pick that."""
    from annotate import specs
    from annotate.formats.importer import import_file

    spec = specs.load_task("superglue/rte")
    engine = workspace.engine
    gold = import_file(engine, spec, write_jsonl(tmp_path / "a" / "val.jsonl", rte_rows(8)))
    rows = [{k: v for k, v in r.items() if k != "label"} for r in rte_rows(8, 100)]
    bare = import_file(engine, spec, write_jsonl(tmp_path / "b" / "val.jsonl", rows), split="dev")
    test = import_file(
        engine, spec, write_jsonl(tmp_path / "t" / "test.jsonl", rte_rows(4, 1000)), split="test"
    )
    with pytest.raises(UserError) as refused:
        create_study(engine, "s", "superglue/rte", "quick", test_dataset_id=test.dataset_id)
    said = str(refused.value)
    assert f"dataset {bare.dataset_id} (superglue/rte dev) has no gold labels" in said
    assert f"labelled datasets to train on: {gold.dataset_id} (--train {gold.dataset_id};" in said


def test_a_study_states_its_own_numbers_in_the_presets_assumptions(cli, workspace, tmp_path):
    """glue-2019's assumptions said "20 training items" and "SuperGLUE's 100 items and 5
    annotators" in a study that drew 6 of its 50 asked-for training items, 12 test items and
    asked k = 3: the datasheet states the study's values, computed from what it drew."""
    rte_study(
        workspace.engine,
        tmp_path,
        protocol="glue-2019",
        train=6,
        test=12,
        training_items=50,
        annotators_per_item=3,
        gate_min_items=4,
        lease_minutes=45,
    )
    report = cli("report", "pilot", "--format", "json", "--bootstrap", "0")
    assert report.code == 0, report.stderr
    said = " ".join(report.json()["datasheet"]["assumptions"])
    assert "we use 6 dev items with feedback" in said
    assert "we use 12 test items and 3 annotators per item" in said
    assert "at least 4 training items" in said
    assert "{" not in said and "SuperGLUE's 100 items" not in said
    sg = rte_study(workspace.engine, tmp_path / "sg", name="sg", protocol="superglue-2019")
    assert "after 30 minutes" in " ".join(sg.protocol.assumptions)


@pytest.mark.parametrize("preset", ["glue-2019", "superglue-2019"])
def test_a_study_with_another_tie_or_gate_rule_does_not_state_the_presets_rule(
    workspace, tmp_path, preset
):
    """A study made with `--set tie_rule=abstain --set gate_rule=threshold` was described as
    breaking ties "at random with the study seed" and (glue-2019) gating on "SuperGLUE's
    median rule": the stored assumptions state the study's own rules."""
    study = rte_study(
        workspace.engine,
        tmp_path,
        protocol=preset,
        tie_rule="abstain",
        gate_rule="threshold",
        gate_threshold=0.8,
    )
    said = " ".join(study.protocol.assumptions)
    assert "broken at random" not in said and "we use SuperGLUE's median rule" not in said
    assert "gets no answer, which scores as wrong" in said
    if preset == "glue-2019":
        assert "training accuracy of at least 0.8" in said
    same = rte_study(workspace.engine, tmp_path / "same", name="same", protocol=preset)
    assert "at random with the study seed" in " ".join(same.protocol.assumptions)
    assert "{" not in " ".join(same.protocol.assumptions)


def test_an_assumption_headed_by_no_setting_is_refused_when_the_protocol_loads(tmp_path):
    """A typo in `{tie_rul=random}` would silently drop the sentence from every study."""
    from annotate.specs import SpecError, load_protocol_file

    path = tmp_path / "mine.toml"
    path.write_text('description = "x"\nassumptions = ["{tie_rul=random} Ties at random."]\n')
    with pytest.raises(SpecError, match="'tie_rul' is no protocol setting"):
        load_protocol_file(path)

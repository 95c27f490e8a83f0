"""Migrations 0015 and 0016 (issue 38): a store as release 0.4.2 left it (schema 11), with a
crowd at work (five Prolific workers w01-w05, live and expired leases), is migrated by
`annotate migrate`: every lease kept, the lease index the next-item query uses added, each
item's leases counted on its row, the next item still skips the leased ones, and the next worker to arrive is w06 (pseudonyms numbered by the database
carry on from the old ones)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from sqlalchemy import MetaData, insert, inspect, text

from annotate.protocol import assignment, crowd
from annotate.protocol.crowd_config import CrowdConfig, with_codes
from annotate.protocol.studies import load_study
from annotate.store import schema
from annotate.store.engine import make_engine
from annotate.store.models import utcnow
from tests.crowd_helpers import STUDY_A, pid, prolific_query
from tests.unit.test_lease_tally import counts_are_exact
from tests.unit.test_migrations import run

ITEMS = 6
K = 2


def store_0_4_2(url: str) -> None:
    """Schema 11, the head of release 0.4.2 (its migrations, as `annotate init` ran them then),
    holding a study whose first two items are leased to K workers each (one of them leased
    past its expiry) and one answered item."""
    from alembic import command

    engine = make_engine(url)
    now = utcnow()
    with engine.begin() as conn:
        command.upgrade(schema._alembic_config(conn), "0011")
        meta = MetaData()
        meta.reflect(conn)
        t = meta.tables
        dataset = conn.execute(
            insert(t["dataset"]).values(
                task="superglue/rte",
                split="test",
                path="old",
                sha256="old",
                n_items=ITEMS,
                detail={"labelled": 1},
                imported_at=now,
            )
        ).inserted_primary_key[0]
        items = [
            conn.execute(
                insert(t["item"]).values(
                    dataset_id=dataset,
                    position=i,
                    source_id=str(i),
                    fields={"premise": f"P{i}.", "hypothesis": f"H{i}."},
                    gold="entailment",
                )
            ).inserted_primary_key[0]
            for i in range(ITEMS)
        ]
        from annotate import specs

        protocol = (
            specs.load_protocol("quick")
            .effective(None, {"annotators_per_item": K, "test_sample": ITEMS, "training_items": 0})
            .model_dump()
        )
        study = conn.execute(
            insert(t["study"]).values(
                name="old",
                task="superglue/rte",
                protocol=protocol,
                test_dataset_id=dataset,
                state="test",
                created_at=now,
                task_spec=specs.load_task("superglue/rte").model_dump(mode="json"),
                crowd=with_codes(CrowdConfig(platform="prolific", study_ids=[STUDY_A])).model_dump(
                    mode="json"
                ),
            )
        ).inserted_primary_key[0]
        conn.execute(
            insert(t["studyitem"]),
            [
                {
                    "study_id": study,
                    "item_id": item,
                    "phase": "test",
                    "position": i,
                    "n_labels": 0,
                    "remaining": K,
                }
                for i, item in enumerate(items)
            ],
        )
        people = [
            conn.execute(
                insert(t["annotator"]).values(
                    name=f"w{n:02d}",
                    failed_logins=0,
                    created_at=now,
                    synthetic=False,
                    platform="prolific",
                    platform_id=pid(n),
                )
            ).inserted_primary_key[0]
            for n in range(1, 6)
        ]
        for who in people:
            conn.execute(
                insert(t["gatedecision"]).values(
                    study_id=study,
                    annotator_id=who,
                    admitted=True,
                    rule="threshold",
                    n_items=0,
                    cohort=[],
                    decided_by="rule",
                    decided_at=now,
                )
            )
        leases = [  # items 0 and 1 fully leased, item 2 leased once but expired
            (items[0], people[0], now + timedelta(minutes=5)),
            (items[0], people[1], now + timedelta(minutes=5)),
            (items[1], people[2], now + timedelta(minutes=5)),
            (items[1], people[3], now + timedelta(minutes=5)),
            (items[2], people[0], now - timedelta(minutes=5)),
        ]
        conn.execute(
            insert(t["lease"]),
            [
                {"study_id": study, "item_id": i, "annotator_id": a, "expires_at": e}
                for i, a, e in leases
            ],
        )
    engine.dispose()


def test_migrating_a_0_4_2_store_keeps_its_leases_and_workers_and_adds_the_lease_index(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path
):
    url = new_store_url()
    store_0_4_2(url)
    engine = make_engine(url)
    with engine.connect() as conn:
        before = conn.execute(text("SELECT * FROM lease ORDER BY id")).all()
    assert "ix_lease_item_expiry" not in {i["name"] for i in inspect(engine).get_indexes("lease")}
    engine.dispose()

    code, _, err = run(url, "migrate")
    assert code == 0, err

    engine = make_engine(url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT * FROM lease ORDER BY id")).all() == before
        version = conn.execute(text("SELECT value FROM meta WHERE key = 'schema_version'"))
        assert version.scalar() == str(int(schema.SCHEMA_HEAD))
    indexes = {i["name"]: i["column_names"] for i in inspect(engine).get_indexes("lease")}
    assert indexes["ix_lease_item_expiry"] == ["study_id", "item_id", "expires_at"]
    # Schema 16: each item's leases counted on its row, from the leases the store held (the
    # expired one too: its floor is past, so the walk counts that item's live leases).
    counts_are_exact(engine)
    with engine.connect() as conn:
        tally = conn.execute(
            text("SELECT leased FROM studyitem WHERE phase = 'test' ORDER BY position")
        ).scalars()
        assert list(tally) == [K, K, 1] + [0] * (ITEMS - 3)
    # The fifth worker is offered the first item not leased to k others: the expired lease
    # on the third item does not count.
    ctx = load_study(engine, "old")
    with engine.connect() as conn:
        fifth = conn.execute(text("SELECT id FROM annotator WHERE name = 'w05'")).scalar()
        found = conn.execute(assignment.NEXT_ITEM, assignment.keys(ctx, fifth, utcnow())).first()
        third = conn.execute(text("SELECT id FROM item WHERE source_id = '2'")).scalar()
    assert found is not None and found[0] == third
    entry = crowd.parse_link(ctx, prolific_query(99))
    assert crowd.enter_by_link(engine, "old", entry).annotator == "w06"
    assert crowd.enter_by_link(engine, "old", crowd.parse_link(ctx, prolific_query(3))) == (
        crowd.Arrival("w03", found_visit(engine, "w03"), False)
    )
    engine.dispose()


def found_visit(engine, name: str) -> int:
    with engine.connect() as conn:
        return conn.execute(
            text(
                "SELECT max(v.id) FROM visit v JOIN annotator a ON a.id = v.annotator_id "
                "WHERE a.name = :n"
            ),
            {"n": name},
        ).scalar()

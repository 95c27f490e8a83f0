"""Each test item's leases, counted on its own row (studyitem.leased, lease_floor), kept by
triggers on the lease table so that every path that takes, moves or gives back a lease keeps
them, in its own transaction.

Why: the next-item walk passes, in the breadth-first order, every item whose places are all
leased. Counting each one's live leases made a hand-out's cost grow with the crowd (1,000
workers: 120 us on SQLite, in the writers' turn; 300-400 us of PostgreSQL's time). With the
count on the row, an item whose leases fill it is passed over at the cost of reading that row.

A lease that ran out still counts in `leased` until it is given back, so `leased` alone could
pass over an item that has room again. `lease_floor` is no later than the earliest expiry of
the item's leases (set on every new lease, cleared when the last goes): while it lies ahead,
no lease of the item has run out and `leased` is exact; once it is past, the walk counts the
item's live leases as before."""

from __future__ import annotations

from sqlalchemy import DDL, Table, event

_SQLITE = [
    """CREATE TRIGGER lease_tally_insert AFTER INSERT ON lease BEGIN
  UPDATE studyitem SET leased = leased + 1,
    lease_floor = CASE WHEN lease_floor IS NULL OR NEW.expires_at < lease_floor
                       THEN NEW.expires_at ELSE lease_floor END
  WHERE study_id = NEW.study_id AND phase = 'test' AND item_id = NEW.item_id;
END""",
    """CREATE TRIGGER lease_tally_delete AFTER DELETE ON lease BEGIN
  UPDATE studyitem SET leased = leased - 1,
    lease_floor = CASE WHEN leased = 1 THEN NULL ELSE lease_floor END
  WHERE study_id = OLD.study_id AND phase = 'test' AND item_id = OLD.item_id;
END""",
    """CREATE TRIGGER lease_tally_move AFTER UPDATE OF item_id ON lease
WHEN NEW.item_id <> OLD.item_id OR NEW.study_id <> OLD.study_id BEGIN
  UPDATE studyitem SET leased = leased - 1,
    lease_floor = CASE WHEN leased = 1 THEN NULL ELSE lease_floor END
  WHERE study_id = OLD.study_id AND phase = 'test' AND item_id = OLD.item_id;
  UPDATE studyitem SET leased = leased + 1,
    lease_floor = CASE WHEN lease_floor IS NULL OR NEW.expires_at < lease_floor
                       THEN NEW.expires_at ELSE lease_floor END
  WHERE study_id = NEW.study_id AND phase = 'test' AND item_id = NEW.item_id;
END""",
]

_POSTGRESQL = [
    """CREATE FUNCTION lease_tally() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE studyitem SET leased = leased - 1,
      lease_floor = CASE WHEN leased = 1 THEN NULL ELSE lease_floor END
    WHERE study_id = OLD.study_id AND phase = 'test' AND item_id = OLD.item_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE studyitem SET leased = leased + 1,
      lease_floor = LEAST(lease_floor, NEW.expires_at)
    WHERE study_id = NEW.study_id AND phase = 'test' AND item_id = NEW.item_id;
  END IF;
  RETURN NULL;
END $$""",
    """CREATE TRIGGER lease_tally_insert_delete AFTER INSERT OR DELETE ON lease
FOR EACH ROW EXECUTE FUNCTION lease_tally()""",
    """CREATE TRIGGER lease_tally_move AFTER UPDATE OF item_id, study_id ON lease
FOR EACH ROW WHEN (NEW.item_id <> OLD.item_id OR NEW.study_id <> OLD.study_id)
EXECUTE FUNCTION lease_tally()""",
]

TRIGGERS = {"sqlite": _SQLITE, "postgresql": _POSTGRESQL}
"""The triggers' DDL by dialect: what a new store gets (install) and migration 0016 adds."""


def install(lease: Table) -> None:
    """Create the triggers with the lease table (SQLModel.metadata.create_all)."""
    for dialect, statements in TRIGGERS.items():
        for statement in statements:
            event.listen(lease, "after_create", DDL(statement).execute_if(dialect=dialect))

"""Examples of a set: author a pair, search, edit with history, retire and restore.

Every change goes through `change_example`, which first copies the example's current values
into a revision: the history of an example is its revisions, oldest first, then the example.

The two directions of a pair (same `pair_id`) change together: an edit of the sentences, tags,
domain or note, a retirement and a restore apply to both, the reverse example getting the
sentences swapped; only the label is per direction. When the sentences change, reviews of the
old ones become stale and a label that was not given again is flagged as unchecked.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, func
from sqlmodel import Session, select

from annotate.curation.curators import stored_name
from annotate.curation.sets import SetInfo, set_row
from annotate.curation.validation import (
    DraftInvalid,
    PairDraft,
    Problem,
    clean_sentence,
    curator_name,
    draft_problems,
    label_problem,
    sentence_key,
    sentence_problems,
    tag_problems,
    tsv_problem,
)
from annotate.errors import UserError
from annotate.store.curation_models import CurationExample, CurationRevision
from annotate.store.engine import write_session
from annotate.store.models import utcnow
from annotate.taxonomy import (
    CATEGORY_OF,
    Tags,
    flat,
    group_tags,
    resolve_category,
    resolve_tag,
    spelt_as,
)

EDITABLE = ("premise", "hypothesis", "label", "tags", "domain", "note")
SNAPSHOT = (*EDITABLE, "retired")
"""The values a revision keeps."""


@dataclass(frozen=True)
class ExampleView:
    id: int
    position: int
    pair_id: int | None
    premise: str
    hypothesis: str
    label: str
    tags: Tags
    domain: str
    note: str
    author: str
    origin: str
    source_id: str | None
    version: int
    retired: bool
    created_at: datetime
    updated_at: datetime
    sentences_version: int = 1
    """The version that brought the current sentences (older reviews are stale)."""
    sentences_changed_at: datetime | None = None
    label_unchecked: bool = False
    """The sentences changed since the label was last confirmed: the label may not fit."""

    @classmethod
    def of(cls, row: CurationExample) -> ExampleView:
        assert row.id is not None
        return cls(
            id=row.id,
            position=row.position,
            pair_id=row.pair_id,
            premise=row.premise,
            hypothesis=row.hypothesis,
            label=row.label,
            tags={k: list(v) for k, v in row.tags.items()},
            domain=row.domain,
            note=row.note,
            author=row.author,
            origin=row.origin,
            source_id=row.source_id,
            version=row.version,
            retired=row.retired,
            created_at=row.created_at,
            updated_at=row.updated_at,
            sentences_version=row.sentences_version,
            sentences_changed_at=row.sentences_changed_at,
            label_unchecked=row.label_unchecked,
        )

    @property
    def fine_tags(self) -> list[str]:
        return flat(self.tags)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["created_at"] = self.created_at.isoformat(timespec="seconds")
        out["updated_at"] = self.updated_at.isoformat(timespec="seconds")
        if self.sentences_changed_at is not None:
            out["sentences_changed_at"] = self.sentences_changed_at.isoformat(timespec="seconds")
        return out


def snapshot(row: CurationExample) -> dict[str, Any]:
    return {name: getattr(row, name) for name in SNAPSHOT}


def change_example(
    session: Session,
    row: CurationExample,
    by: str,
    reason: str,
    values: Mapping[str, Any],
    note: str = "",
) -> None:
    """Keep the example's current values as a revision, then apply `values` (a new version)."""
    assert row.id is not None
    session.add(
        CurationRevision(
            example_id=row.id,
            version=row.version,
            snapshot=snapshot(row),
            changed_by=by,
            reason=reason,
            note=note,
        )
    )
    sentences_before = (row.premise, row.hypothesis)
    for name, value in values.items():
        setattr(row, name, value)
    row.version += 1
    row.updated_at = utcnow()
    if (row.premise, row.hypothesis) != sentences_before:
        # Reviews of the old sentences no longer count, and the label may no longer fit.
        row.sentences_version = row.version
        row.sentences_changed_at = row.updated_at
        row.label_unchecked = True
    if "label" in values:
        row.label_unchecked = False  # a label given with the change is a checked one
    session.add(row)
    session.flush()


def sentence_keys(session: Session, set_id: int, exclude: Collection[int] = ()) -> set[tuple]:
    """The (premise, hypothesis) keys of the set's active examples but those in `exclude`."""
    query = select(CurationExample.id, CurationExample.premise, CurationExample.hypothesis).where(
        CurationExample.set_id == set_id,
        CurationExample.retired == False,  # noqa: E712
    )
    return {sentence_key(p, h) for i, p, h in session.exec(query) if i not in exclude}


def pair_partner(session: Session, row: CurationExample) -> CurationExample | None:
    """The other direction of the example's pair, or None (an unpaired imported row)."""
    if row.pair_id is None:
        return None
    return session.exec(
        select(CurationExample).where(
            CurationExample.set_id == row.set_id,
            CurationExample.pair_id == row.pair_id,
            CurationExample.id != row.id,
        )
    ).first()


def next_numbers(session: Session, set_id: int) -> tuple[int, int]:
    """The next free position and pair number of the set."""
    position, pair = session.exec(
        select(func.max(CurationExample.position), func.max(CurationExample.pair_id)).where(
            CurationExample.set_id == set_id
        )
    ).one()
    return (position if position is not None else -1) + 1, (pair or 0) + 1


def clean_draft(draft: PairDraft) -> PairDraft:
    return PairDraft(
        premise=clean_sentence(draft.premise),
        hypothesis=clean_sentence(draft.hypothesis),
        forward=draft.forward,
        backward=draft.backward,
        tags=list(draft.tags),
        domain=draft.domain.strip(),
        note=draft.note.strip(),
    )


def save_pair(
    engine: Engine, set_name: str, author: str, draft: PairDraft
) -> tuple[ExampleView, ExampleView]:
    """Store a new pair as two examples, premise -> hypothesis and hypothesis -> premise, with a
    shared pair number. Raises DraftInvalid listing every broken rule; nothing is stored then."""
    draft = clean_draft(draft)
    author = curator_name(author)
    with write_session(engine) as session:
        author = stored_name(session, author)
        info = SetInfo.of(set_row(session, set_name, for_update=True))
        problems = draft_problems(draft, info.labels)
        if not any(p.field in ("premise", "hypothesis") for p in problems):
            keys = sentence_keys(session, info.id)
            if sentence_key(draft.premise, draft.hypothesis) in keys or (
                sentence_key(draft.hypothesis, draft.premise) in keys
            ):
                problems.append(Problem("premise", "this pair is already in the set (a duplicate)"))
        if problems:
            raise DraftInvalid(problems)
        assert draft.forward is not None and draft.backward is not None
        position, pair = next_numbers(session, info.id)
        tags = group_tags(draft.tags)
        rows = [
            CurationExample(
                set_id=info.id,
                position=position + n,
                pair_id=pair,
                premise=premise,
                hypothesis=hypothesis,
                label=label,
                tags={k: list(v) for k, v in tags.items()},  # one copy per row
                domain=draft.domain,
                note=draft.note,
                author=author,
            )
            for n, (premise, hypothesis, label) in enumerate(
                [
                    (draft.premise, draft.hypothesis, draft.forward),
                    (draft.hypothesis, draft.premise, draft.backward),
                ]
            )
        ]
        session.add_all(rows)
        session.flush()
        return ExampleView.of(rows[0]), ExampleView.of(rows[1])


# --- finding -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExampleQuery:
    """Filters of a search; all given ones must hold."""

    text: str | None = None
    """Words anywhere in the premise, hypothesis or note (letter case ignored)."""
    tag: str | None = None
    """A fine tag, or a coarse category (any tag in it)."""
    label: str | None = None
    author: str | None = None
    retired: bool | None = False
    """False: active examples only; True: retired only; None: both."""


def tag_test(tag: str):
    """A test of an example's tags: has the fine tag, or any tag of the coarse category."""
    category = resolve_category(tag)
    if category is not None:
        return lambda tags: bool(tags.get(category))
    fine = resolve_tag(tag)
    return lambda tags: fine in tags.get(CATEGORY_OF[fine], [])


def find_examples(engine: Engine, set_name: str, query: ExampleQuery) -> list[ExampleView]:
    """The set's examples matching `query`, in set order."""
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        label = None if query.label is None else spelt_as(query.label, info.labels)
        if query.label is not None and label is None:
            raise UserError(
                f"unknown label {query.label!r}; set {info.name!r} uses {', '.join(info.labels)}"
            )
        has_tag = tag_test(query.tag) if query.tag else None
        statement = select(CurationExample).where(CurationExample.set_id == info.id)
        if query.retired is not None:
            statement = statement.where(CurationExample.retired == query.retired)
        if label is not None:
            statement = statement.where(CurationExample.label == label)
        if query.author is not None:
            author = stored_name(session, query.author)  # "LEA" asks for lea's examples
            statement = statement.where(CurationExample.author == author)
        rows = session.exec(statement.order_by(CurationExample.position)).all()
        needle = _searchable(query.text) if query.text else None
        return [
            ExampleView.of(row)
            for row in rows
            if (has_tag is None or has_tag(row.tags))
            and (
                needle is None
                or needle in _searchable(row.premise)
                or needle in _searchable(row.hypothesis)
                or needle in _searchable(row.note)
            )
        ]


def _searchable(text: str) -> str:
    """Text as a search compares it: letter case and the encoding of accents aside."""
    return unicodedata.normalize("NFC", text).casefold()


def example_row(session: Session, set_id: int, example_id: int) -> CurationExample:
    row = session.get(CurationExample, example_id)
    if row is None or row.set_id != set_id:
        raise UserError(f"no example {example_id} in this set")
    return row


def starting_example(engine: Engine, set_name: str, example_id: int) -> ExampleView:
    """The active example a new pair starts from (`curate author --from ID`, Ctrl+O). Raises
    UserError naming it when the set has no such example or it is retired: a retired pair is
    out of the set, so a copy of it should not come back in unnoticed."""
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        # An id past 64 bits is no example: asked of the store, it overflows the driver.
        row = session.get(CurationExample, example_id) if 0 < example_id < 2**63 else None
        if row is None or row.set_id != info.id:
            raise UserError(f"no example {example_id} in set {info.name!r}")
        if row.retired:
            raise UserError(f"example {example_id} of set {info.name!r} is retired")
        return ExampleView.of(row)


def get_example(engine: Engine, set_name: str, example_id: int) -> ExampleView:
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        return ExampleView.of(example_row(session, info.id, example_id))


# --- changing ------------------------------------------------------------------------------


PAIR_FIELDS = ("tags", "domain", "note")
"""Values both directions of a pair share (the sentences are shared too, swapped)."""


def _checked_changes(
    session: Session,
    info: SetInfo,
    row: CurationExample,
    changes: Mapping[str, Any],
    partner: CurationExample | None,
) -> dict[str, Any]:
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise UserError(f"cannot edit {', '.join(unknown)}; editable: {', '.join(EDITABLE)}")
    values: dict[str, Any] = {}
    for name, value in changes.items():
        if name in ("premise", "hypothesis"):
            values[name] = clean_sentence(str(value))
        elif name == "tags":
            fine = flat(value) if isinstance(value, Mapping) else list(value)
            values[name] = group_tags(fine)  # an unknown tag is an error naming it
        else:
            values[name] = str(value).strip() if value is not None else value
    premise = values.get("premise", row.premise)
    hypothesis = values.get("hypothesis", row.hypothesis)
    problems = sentence_problems(premise, hypothesis)
    if "label" in values:
        problems += label_problem(values["label"], info.labels, "label", "the example")
    if "tags" in values:
        problems += tag_problems(flat(values["tags"]))
    if values.get("domain") is not None:
        problems += tsv_problem(values["domain"], "domain")
    if not problems and {"premise", "hypothesis"} & set(values):
        assert row.id is not None
        pair = {row.id} | ({partner.id} if partner is not None and partner.id else set())
        keys = sentence_keys(session, info.id, pair)
        reverse = sentence_key(hypothesis, premise) if partner is not None else None
        if sentence_key(premise, hypothesis) in keys or reverse in keys:
            problems.append(Problem("premise", "this pair is already in the set (a duplicate)"))
    if problems:
        raise DraftInvalid(problems)
    if "tags" in values and set(flat(values["tags"])) == set(flat(row.tags)):
        del values["tags"]  # the same tags in another order: no change (the file's order stays)
    return {k: v for k, v in values.items() if getattr(row, k) != v}


def _partner_values(
    row: CurationExample, partner: CurationExample, values: Mapping[str, Any]
) -> dict[str, Any]:
    """What the reverse direction must become after `values` changed `row`: the sentences
    swapped, the shared values copied; its own label stays."""
    out: dict[str, Any] = {}
    if {"premise", "hypothesis"} & set(values):
        out["premise"], out["hypothesis"] = row.hypothesis, row.premise
    for name in PAIR_FIELDS:
        if name in values:
            value = getattr(row, name)
            # Tags: a copy of their own, so the two rows never share one JSON value.
            out[name] = {k: list(v) for k, v in value.items()} if name == "tags" else value
    return {k: v for k, v in out.items() if getattr(partner, k) != v}


def edit_example(
    engine: Engine,
    set_name: str,
    example_id: int,
    editor: str,
    changes: Mapping[str, Any],
    note: str = "",
) -> ExampleView:
    """Change some of an example's values (premise, hypothesis, label, tags as fine tags,
    domain, note); the previous values stay in its history. No change: no new version. The
    reverse direction of its pair follows (sentences swapped; its label stays but is flagged
    when the sentences changed). Giving the label confirms it, even unchanged."""
    editor = curator_name(editor)
    with write_session(engine) as session:
        editor = stored_name(session, editor)
        info = SetInfo.of(set_row(session, set_name))
        row = example_row(session, info.id, example_id)
        partner = pair_partner(session, row)
        values = _checked_changes(session, info, row, changes, partner)
        if values:
            change_example(session, row, editor, "edit", values, note)
        elif "label" in changes and row.label_unchecked:
            row.label_unchecked = False  # the same label, given again: confirmed
            session.add(row)
        if partner is not None and values:
            follow = _partner_values(row, partner, values)
            if follow:
                change_example(session, partner, editor, "edit", follow, note)
        session.flush()
        return ExampleView.of(row)


def set_retired(
    engine: Engine, set_name: str, example_id: int, by: str, retired: bool, note: str = ""
) -> ExampleView:
    """Retire an example and the reverse direction of its pair (they leave searches, reviews,
    statistics and exports but are never deleted), or bring both back."""
    by = curator_name(by)
    with write_session(engine) as session:
        by = stored_name(session, by)
        info = SetInfo.of(set_row(session, set_name))
        row = example_row(session, info.id, example_id)
        if row.retired == retired:
            state = "retired" if retired else "active"
            raise UserError(f"example {example_id} is {state} already")
        partner = pair_partner(session, row)
        rows = [r for r in (row, partner) if r is not None and r.retired != retired]
        if not retired:
            others = sentence_keys(session, info.id, {r.id for r in rows if r.id is not None})
            for r in rows:
                if sentence_key(r.premise, r.hypothesis) in others:
                    raise UserError(
                        f"example {r.id} cannot come back: the set has the same pair again"
                    )
        for r in rows:
            change_example(
                session, r, by, "retire" if retired else "restore", {"retired": retired}, note
            )
        return ExampleView.of(row)


def partner_of(engine: Engine, set_name: str, example_id: int) -> ExampleView | None:
    """The reverse direction of the example's pair, if it has one."""
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        partner = pair_partner(session, example_row(session, info.id, example_id))
        return ExampleView.of(partner) if partner is not None else None


def example_history(engine: Engine, set_name: str, example_id: int) -> list[dict[str, Any]]:
    """Every version of the example, oldest first: its values; who made that version, how,
    when and why (`made_by`, `made_change`, `made_at`, `made_note`); and who changed it to the
    next version (`changed_by`, `change`, ...; the last entry is the current state)."""
    with Session(engine) as session:
        info = SetInfo.of(set_row(session, set_name))
        row = example_row(session, info.id, example_id)
        revisions = session.exec(
            select(CurationRevision)
            .where(CurationRevision.example_id == example_id)
            .order_by(CurationRevision.version)
        ).all()
        history = [
            {
                "version": r.version,
                **r.snapshot,
                "changed_by": r.changed_by,
                "change": r.reason,
                "change_note": r.note,
                "changed_at": r.changed_at.isoformat(timespec="seconds"),
            }
            for r in revisions
        ]
        history.append({"version": row.version, **snapshot(row), "change": "current"})
        # The first version was made by its author (or the import); each later one by the
        # change recorded on the version before it.
        made = [
            {
                "made_by": row.author,
                "made_change": "authored" if row.origin == "authored" else "imported",
                "made_at": row.created_at.isoformat(timespec="seconds"),
                "made_note": "",
            }
        ]
        made += [
            {
                "made_by": h["changed_by"],
                "made_change": h["change"],
                "made_at": h["changed_at"],
                "made_note": h["change_note"],
            }
            for h in history[:-1]
        ]
        return [h | m for h, m in zip(history, made, strict=True)]

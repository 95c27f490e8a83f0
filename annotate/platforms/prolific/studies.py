"""The Prolific studies of an annotate study: drafted from it, published, paused, stopped; the
admitted workers' participant group; and where each stands beside annotate's own counts.

A crowd study with a gate runs as two Prolific studies on one annotate study: the training
study (A) ends on the `training_done` code, and the test study (B) is open only to the
participant group that `group` fills with the workers the gate admitted (its filter is set
when the draft is made: Prolific allows no filter change once a study is published).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import aliased
from sqlmodel import Session

from annotate.errors import UserError
from annotate.platforms.prolific import ledger
from annotate.platforms.prolific.client import Prolific
from annotate.protocol import crowd, gate, pay
from annotate.protocol.crowd_config import A_STUDY_ON, CrowdConfig, validate_config
from annotate.protocol.studies import TEST, StudyContext
from annotate.store.engine import write_session
from annotate.store.models import Annotator, ProlificStudy, StudyItem, Visit, utcnow
from annotate.wording import shell_word

ROLES = ("training", "test")
ROLE_TEXT = {"training": "training (A)", "test": "test (B)", "all": "every phase"}
OUTCOMES_OF = {
    "training": ("training_done", "screened_out", "study_full", "no_consent"),
    "test": ("completed", "screened_out", "study_full", "no_consent", "not_admitted"),
}
"""The outcomes a worker can reach by each link: the completion codes each study carries."""
CODE_TYPES = {
    "completed": "COMPLETED",
    "training_done": "FOLLOW_UP_STUDY",
    "no_consent": "NO_CONSENT",
    "screened_out": "OTHER",
    "study_full": "OTHER",
    "not_admitted": "OTHER",
}
"""Prolific's label for each code (api-reference/studies/create-study: code_type)."""
APPROVED_OUTCOMES = ("completed", "training_done", "screened_out", "study_full")
"""Outcomes `sync` approves after annotate's checks: the worker did what was asked, or was
stopped by the study (screened out, no item left) and is paid for the time, as the final page
promises. no_consent and not_admitted are listed for the researcher (ask for a return)."""
TRANSITIONS = {"publish": "PUBLISH", "pause": "PAUSE", "start": "START", "stop": "STOP"}
STATUS_AFTER = {
    "publish": "ACTIVE",
    "pause": "PAUSED",
    "start": "ACTIVE",
    "stop": "AWAITING REVIEW",
}
PROLIFIC_COUNTS = ("ACTIVE", "AWAITING REVIEW", "APPROVED", "REJECTED", "RETURNED", "TIMED-OUT")


@dataclass(frozen=True)
class Draft:
    """What `create` asks Prolific for, per study (computed first, then sent)."""

    role: str
    name: str
    minutes: int
    reward_cents: int
    places: int
    body: dict[str, Any]


@dataclass(frozen=True)
class Estimate:
    training_minutes: int
    test_minutes: int
    training_places: int
    test_places: int
    seconds_per_item: float
    source: str


def prolific_studies(engine: Engine, ctx: StudyContext) -> list[ProlificStudy]:
    with Session(engine) as session:
        rows = list(
            session.scalars(
                select(ProlificStudy)
                .where(ProlificStudy.study_id == ctx.id)
                .order_by(ProlificStudy.id)
            )
        )
        for row in rows:
            session.expunge(row)
    return rows


def require_studies(engine: Engine, ctx: StudyContext) -> list[ProlificStudy]:
    rows = prolific_studies(engine, ctx)
    if not rows:
        raise UserError(
            f"study {ctx.study.name!r} has no Prolific studies yet: `annotate prolific create "
            f"{shell_word(ctx.study.name)} --url URL --hourly-rate RATE` drafts them"
        )
    return rows


def study_of_role(engine: Engine, ctx: StudyContext, role: str) -> ProlificStudy:
    for row in require_studies(engine, ctx):
        if row.role == role:
            return row
    raise UserError(f"study {ctx.study.name!r} has no Prolific {role} study")


def prolific_config(ctx: StudyContext) -> CrowdConfig:
    config = crowd.require_config(ctx)
    if config.platform != "prolific":
        raise UserError(
            f"study {ctx.study.name!r} is {A_STUDY_ON[config.platform]}, not a Prolific one"
        )
    return config


# --- estimates -------------------------------------------------------------------------------


def estimate(engine: Engine, ctx: StudyContext, seconds_per_item: float, source: str) -> Estimate:
    """Minutes per study from the seconds an answer takes (two minutes more for consent and
    guidelines, one for the exit), and places from the plan: study B needs enough admitted
    workers to give every test item its k labels in batches; a median gate admits about half
    of study A, so A has twice as many places."""
    seconds_per_item = pay.positive_rate(seconds_per_item, "--seconds-per-item")
    protocol = ctx.protocol
    with Session(engine) as session:
        n_test = int(
            session.scalar(
                select(func.count()).where(StudyItem.study_id == ctx.id, StudyItem.phase == TEST)
            )
            or 0
        )
    training = protocol.training_quota(protocol.training_items)
    batch = protocol.max_test_items_per_annotator or max(1, n_test)
    needed = max(1, math.ceil(n_test * protocol.annotators_per_item / batch))
    return Estimate(
        training_minutes=max(1, math.ceil(training * seconds_per_item / 60) + 2),
        test_minutes=max(1, math.ceil(batch * seconds_per_item / 60) + 1),
        training_places=2 * needed,
        test_places=needed,
        seconds_per_item=seconds_per_item,
        source=source,
    )


def reward_cents(minutes: int, hourly_rate: float) -> int:
    """The base reward of a study: its estimated time at the hourly rate, in cents (up)."""
    hourly_rate = pay.positive_rate(hourly_rate)
    return math.ceil(round(hourly_rate * minutes / 60 * 100, 6))


# --- create ----------------------------------------------------------------------------------


def completion_codes(config: CrowdConfig, role: str) -> list[dict[str, Any]]:
    """The codes a study carries, each with its action: every code is reviewed by `annotate
    prolific sync`, which approves after annotate's own checks (MANUALLY_REVIEW on Prolific),
    so nothing is approved that annotate did not count."""
    codes = [config.code(o) for o in OUTCOMES_OF[role]]
    if len(set(codes)) != len(codes):
        raise UserError(
            "two outcomes of this study share a completion code; Prolific needs them unique "
            "within a study: give each its own under [codes]"
        )
    return [
        {
            "code": config.code(outcome),
            "code_type": CODE_TYPES[outcome],
            "actor": "participant",
            "actions": [{"action": "MANUALLY_REVIEW"}],
        }
        for outcome in OUTCOMES_OF[role]
    ]


def drafts(
    ctx: StudyContext,
    config: CrowdConfig,
    page_url: str,
    estimate_: Estimate,
    hourly_rate: float,
    group_id: str,
    *,
    title: str | None = None,
    description: str | None = None,
) -> list[Draft]:
    """The two draft studies' bodies (api-reference/studies/create-study)."""
    title = title or f"Label sentence pairs ({ctx.study.name})"
    what = description or (
        "You will read short texts and answer a question about each. A first study trains you "
        "with feedback; a second one, for those invited, has the items that count."
    )
    out = []
    for role, minutes, places in (
        ("training", estimate_.training_minutes, estimate_.training_places),
        ("test", estimate_.test_minutes, estimate_.test_places),
    ):
        name = f"{title}: {'training' if role == 'training' else 'test items'}"
        reward = reward_cents(minutes, hourly_rate)
        body: dict[str, Any] = {
            "name": name,
            "internal_name": f"annotate {ctx.study.name} {role}",
            "description": what,
            "external_study_url": crowd.study_link(page_url, config, role),
            "prolific_id_option": "url_parameters",
            "completion_codes": completion_codes(config, role),
            "estimated_completion_time": minutes,
            "reward": reward,
            "total_available_places": places,
            "device_compatibility": ["desktop"],
            "filters": (
                [{"filter_id": "participant_group_allowlist", "selected_values": [group_id]}]
                if role == "test"
                else []
            ),
        }
        out.append(Draft(role, name, minutes, reward, places, body))
    return out


def create(
    engine: Engine,
    ctx: StudyContext,
    client: Prolific,
    page_url: str,
    estimate_: Estimate,
    hourly_rate: float,
    *,
    workspace_id: str | None = None,
    title: str | None = None,
    description: str | None = None,
    checked: bool = False,
) -> list[ProlificStudy]:
    """Draft the training and test studies on Prolific (and the admitted workers' group that
    B's filter allows), store their ids with the study, and accept them on its link.
    `checked`: the user looked on Prolific after an earlier run whose answer was lost, and
    removed what it may have made: those calls count as not made."""
    config = prolific_config(ctx)
    if not re.match(r"^https?://[^/\s]+", page_url):
        raise UserError(f"--url {page_url[:60]!r}: give the page's address, https://HOST/")
    # The drafts send workers to this address, so it is the study's public one (as `study
    # crowd --url` stores it): `serve` accepts answers from it. Checked before any call.
    validate_config({**config.model_dump(), "public_url": page_url}, f"--url {page_url[:60]!r}")
    if prolific_studies(engine, ctx):
        raise UserError(
            f"study {ctx.study.name!r} has its Prolific studies already "
            f"(`annotate prolific status {shell_word(ctx.study.name)}`)"
        )
    name = ctx.study.name
    for role in ("group", *ROLES):
        left = ledger.get(engine, f"create:{name}:{role}")
        if left is not None and left.state == ledger.PENDING:
            if checked:
                ledger.finish(engine, left.key, {"checked": True}, state=ledger.FAILED)
                continue
            raise UserError(
                f"an earlier `prolific create {name}` lost Prolific's answer while making its "
                f"{role}: look on Prolific for what it may have left (a draft study or a "
                "participant group named after the study), delete it, then run create again "
                "with --checked"
            )
    if workspace_id is None:
        spaces = client.workspaces()
        if not spaces:
            raise UserError("Prolific lists no workspace for this token: pass --workspace ID")
        workspace_id = str(spaces[0]["id"])
    # What an earlier run made before a call of it was refused is used, not made again.
    key = f"create:{name}:group"
    earlier = ledger.get(engine, key)
    if earlier is not None and earlier.state == ledger.DONE:
        group_id = str(earlier.detail["group_id"])
    else:
        ledger.begin(engine, ctx, key, "create", workspace_id, {"what": "participant group"})
        with ledger.asking(engine, key):
            group = client.create_group(
                workspace_id,
                f"annotate {name}: admitted",
                "Workers the gate admitted to the test study",
            )
        group_id = str(group["id"])
        ledger.finish(engine, key, {"group_id": group_id})
    made: dict[str, tuple[Draft, str, str]] = {}
    for draft in drafts(
        ctx, config, page_url, estimate_, hourly_rate, group_id, title=title,
        description=description,
    ):  # fmt: skip
        key = f"create:{name}:{draft.role}"
        earlier = ledger.get(engine, key)
        if earlier is not None and earlier.state == ledger.DONE:
            made[draft.role] = (draft, str(earlier.detail["prolific_id"]), "UNPUBLISHED")
            continue
        ledger.begin(engine, ctx, key, "create", workspace_id, {"role": draft.role})
        with ledger.asking(engine, key):
            study = client.create_study(draft.body)
        made[draft.role] = (draft, str(study["id"]), str(study.get("status") or "UNPUBLISHED"))
        ledger.finish(engine, key, {"prolific_id": str(study["id"])})
    data = config.model_dump()
    data["training_study_id"] = made["training"][1]
    data["test_study_id"] = made["test"][1]
    data["public_url"] = page_url
    crowd.set_config(engine, name, validate_config(data, f"study {name!r}"))
    with write_session(engine) as session:
        for role, (draft, prolific_id, status) in made.items():
            session.add(
                ProlificStudy(
                    study_id=ctx.id,
                    role=role,
                    prolific_id=prolific_id,
                    status=status,
                    reward_cents=draft.reward_cents,
                    group_id=group_id if role == "test" else None,
                )
            )
    return prolific_studies(engine, ctx)


# --- publish, pause, start, stop -------------------------------------------------------------


def transition(
    engine: Engine, ctx: StudyContext, client: Prolific, role: str, verb: str
) -> ProlificStudy:
    """One call: PUBLISH, PAUSE, START or STOP the study of `role`; its status is stored.
    Study B is published only once `fill_group` has put admitted workers in its group."""
    row = study_of_role(engine, ctx, role)
    if verb == "publish":
        _require_unpublished(engine, ctx, row)
    if role == "test" and verb == "publish":
        _require_group(engine, ctx)
    n = len(ledger.entries(engine, ctx, verb)) + 1
    key = f"{verb}:{row.prolific_id}:{n}"
    ledger.begin(engine, ctx, key, verb, row.prolific_id)
    with ledger.asking(engine, key):
        answer = client.transition_study(row.prolific_id, TRANSITIONS[verb])
    status = str(answer.get("status") or STATUS_AFTER[verb])
    ledger.finish(engine, key, {"status": status})
    with write_session(engine) as session:
        stored = session.get(ProlificStudy, row.id)
        assert stored is not None
        stored.status = status
    return study_of_role(engine, ctx, role)


def _require_unpublished(engine: Engine, ctx: StudyContext, row: ProlificStudy) -> None:
    """A study is published once: Prolific refuses a second PUBLISH, and the researcher who
    ran `publish` again (a paused study to reopen, or not sure the first run went through)
    is told what the study is and what reopens it, with nothing asked of Prolific."""
    published = [
        e
        for e in ledger.entries(engine, ctx, "publish")
        if e.target == row.prolific_id and e.state == ledger.DONE
    ]
    if not published:
        return
    name, word = ctx.study.name, shell_word(ctx.study.name)
    raise UserError(
        f"{ROLE_TEXT[row.role]} of {name}, Prolific study {row.prolific_id}, was published "
        f"already (last read: {row.status}); nothing was asked of Prolific. `annotate "
        f"prolific status {word}` reads it again; `annotate prolific start {word} --part "
        f"{row.role}` reopens it once paused"
    )


# --- the admitted group ----------------------------------------------------------------------


def _require_group(engine: Engine, ctx: StudyContext) -> None:
    """Study B's filter allows its participant group only: published with the group empty
    (the gate not closed, or `prolific group` not run), nobody can take it, and the places
    wait on Prolific for workers who are never let in."""
    name = ctx.study.name
    filled = [e for e in ledger.entries(engine, ctx, "group") if e.state == ledger.DONE]
    if any((e.detail or {}).get("members") for e in filled):
        return
    first = f"`annotate prolific group {shell_word(name)}`"
    if gate.closure_of(engine, ctx) is None and ctx.protocol.gate_rule == "median":
        first = f"close the gate (`annotate gate {shell_word(name)} --close`), then run {first}"
    elif filled:
        first = f"admit workers at the gate, then run {first} again (it found nobody admitted)"
    else:
        first = f"run {first}"
    raise UserError(
        f"study B of {name} was not published: its participant group is empty, so no worker "
        f"could take it; {first} first (a group you filled on Prolific's site is not seen "
        "here: publish study B there)"
    )


def fill_group(engine: Engine, ctx: StudyContext, client: Prolific) -> tuple[str, int, int]:
    """After the gate is closed: the admitted workers join the group study B's filter allows
    (Prolific ignores members already in, so a second run adds only the newly admitted).
    Returns the group, how many admitted workers are in it and how many this run added: the
    ledger keeps whom each answered run put in, by annotator id (never a platform id)."""
    row = study_of_role(engine, ctx, "test")
    if row.group_id is None:
        raise UserError("the Prolific test study has no participant group")
    if gate.closure_of(engine, ctx) is None and ctx.protocol.gate_rule == "median":
        raise UserError(
            f"the gate of {ctx.study.name} is not closed yet: pause the training study "
            f"(`annotate prolific pause {shell_word(ctx.study.name)} --part training`), then "
            f"`annotate gate {shell_word(ctx.study.name)} --close`"
        )
    admitted = crowd.admitted_workers(engine, ctx, "prolific")
    runs = ledger.entries(engine, ctx, "group")
    already = {a for e in runs if e.state == ledger.DONE for a in e.detail.get("annotators", [])}
    key = f"group:{row.group_id}:{len(runs) + 1}"
    detail = {"members": len(admitted), "annotators": sorted(admitted)}
    ledger.begin(engine, ctx, key, "group", row.group_id, detail)
    if admitted:
        with ledger.asking(engine, key):
            client.add_to_group(row.group_id, sorted(admitted.values()))
    ledger.finish(engine, key)
    return row.group_id, len(admitted), len(set(admitted) - already)


# --- status ----------------------------------------------------------------------------------


def annotate_counts(engine: Engine, ctx: StudyContext, prolific_id: str) -> dict[str, int]:
    """Visits by this Prolific study's link: open (no outcome yet, not ended), left (ended
    with no outcome: a submission returned or timed out, which `sync` ends) and each outcome.
    A window the worker replaced by a newer one (a second tab, the link opened again) with no
    outcome of its own is not counted: the newer one is; nor is a window opened after the
    worker took their code (Prolific counts one submission, judged by that code)."""
    ended = Visit.departed_at.is_not(None)
    earlier = aliased(Visit)
    took_a_code = (
        select(earlier.id)
        .where(
            earlier.study_id == Visit.study_id,
            earlier.annotator_id == Visit.annotator_id,
            earlier.platform_study_id == Visit.platform_study_id,
            earlier.outcome.is_not(None),
        )
        .exists()
    )
    with Session(engine) as session:
        rows = session.execute(
            select(Visit.outcome, ended, func.count())
            .where(
                Visit.study_id == ctx.id,
                Visit.platform_study_id == prolific_id,
                Visit.outcome.is_not(None) | (Visit.superseded_at.is_(None) & ~took_a_code),
            )
            .group_by(Visit.outcome, ended)
        ).all()
    counts: dict[str, int] = {}
    for outcome, gone, n in rows:
        key = str(outcome) if outcome is not None else ("left" if gone else "open")
        counts[key] = counts.get(key, 0) + int(n)
    return counts


def record_counts(engine: Engine, row_id: int, counts: dict[str, int], status: str | None) -> None:
    """Keep what Prolific said (for `annotate status`, which makes no call)."""
    with write_session(engine) as session:
        stored = session.get(ProlificStudy, row_id)
        assert stored is not None
        stored.counts = {k: int(counts.get(k, 0)) for k in PROLIFIC_COUNTS}
        stored.counted_at = utcnow()
        if status is not None:
            stored.status = status


def count_statuses(submissions: list[dict[str, Any]]) -> dict[str, int]:
    """Submissions per status, as Prolific's counts endpoint gives them."""
    counts: dict[str, int] = {}
    for sub in submissions:
        key = str(sub.get("status") or "")
        counts[key] = counts.get(key, 0) + 1
    return counts


def last_known(engine: Engine, ctx: StudyContext) -> list[dict[str, Any]]:
    """Each Prolific study as last read (no call): status, Prolific's counts and when they
    were read, beside annotate's visits by its link. [] for a study not on Prolific."""
    return [
        {
            "role": row.role,
            "prolific_id": row.prolific_id,
            "status": row.status,
            "prolific": dict(row.counts),
            "counted_at": row.counted_at.isoformat(timespec="seconds") if row.counted_at else None,
            "annotate": annotate_counts(engine, ctx, row.prolific_id),
        }
        for row in prolific_studies(engine, ctx)
    ]


def status(engine: Engine, ctx: StudyContext, client: Prolific) -> list[dict[str, Any]]:
    """Each Prolific study: its status and submissions per status (Prolific's counts), beside
    annotate's visits by its link and what the ledger records."""
    out = []
    for row in require_studies(engine, ctx):
        study = client.study(row.prolific_id)
        counts = client.submission_counts(row.prolific_id)
        current = str(study.get("status") or row.status)
        record_counts(engine, row.id or 0, counts, current)
        out.append(
            {
                "role": row.role,
                "prolific_id": row.prolific_id,
                "status": current,
                "reward_cents": row.reward_cents,
                "prolific": {k: int(counts.get(k, 0)) for k in PROLIFIC_COUNTS},
                "annotate": annotate_counts(engine, ctx, row.prolific_id),
                "group_id": row.group_id,
            }
        )
    return out


def pseudonyms(engine: Engine) -> dict[str, str]:
    """Prolific participant id -> pseudonym, for lines the researcher reads."""
    with Session(engine) as session:
        return {
            str(pid): name
            for name, pid in session.execute(
                select(Annotator.name, Annotator.platform_id).where(
                    Annotator.platform == "prolific"
                )
            ).all()
        }

"""A local stand-in for Prolific's API, served over HTTP on the loopback, for the tests of
`annotate prolific`. Each endpoint follows the request and response shapes of Prolific's API
reference (https://docs.prolific.com/api-reference/…, named at each route), under the same
paths below /api/v1/ and with the same `Authorization: Token <token>` header; only the fields
annotate reads or sends are modelled. It keeps every request it receives (`requests`), so a
test can check what annotate asked for, and how many times.

What Prolific's own pages do for a participant (reserve a place, come back with a completion
code, return a submission, time out) is done through `/_participant/…` routes (no token), so
a worker driven by the test, or a helper process, can take part:

    with running_standin(TOKEN) as api:            # api.url: the base to give --api-url
        session = api.start(study_id, participant) # the SESSION_ID of the new submission
        api.complete(session, code)                # the worker came back with a code
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import count
from typing import Any

PREFIX = "/api/v1"
REJECTION_CATEGORIES = {
    "TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
    "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER",
}  # fmt: skip
CODE_TYPES = {
    "COMPLETED", "FAILED_ATTENTION_CHECK", "FOLLOW_UP_STUDY", "GIVE_BONUS", "INCOMPATIBLE_DEVICE",
    "NO_CONSENT", "OTHER", "FIXED_SCREENOUT",
}  # fmt: skip
"""api-reference/studies/create-study: BaseStudyCompletionCodesItemsCodeType."""
ACTIONS = {
    "AUTOMATICALLY_APPROVE", "MANUALLY_REVIEW", "REQUEST_RETURN", "ADD_TO_PARTICIPANT_GROUP",
    "REMOVE_FROM_PARTICIPANT_GROUP",
}  # fmt: skip
COUNTED = (
    "ACTIVE", "APPROVED", "AWAITING REVIEW", "REJECTED", "RESERVED", "RETURNED", "TIMED-OUT",
    "PARTIALLY APPROVED", "SCREENED OUT",
)  # fmt: skip
"""api-reference/studies/count-study-submissions-by-status: the keys of the answer."""


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class Received:
    method: str
    path: str
    """Below /api/v1, with its trailing slash: `studies/ID/transition/`."""
    query: dict[str, str]
    body: Any
    authorized: bool


@dataclass
class State:
    token: str
    workspace: str = "5e9b9c9b0f9c9a0001b1ca2f"
    studies: dict[str, dict[str, Any]] = field(default_factory=dict)
    submissions: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    bulk: dict[str, dict[str, Any]] = field(default_factory=dict)
    paid: list[dict[str, Any]] = field(default_factory=list)
    """One entry per pay call: the bulk payment's lines (Prolific pays again on a repeat)."""
    requests: list[Received] = field(default_factory=list)
    faults: list[tuple[str, str, int]] = field(default_factory=list)
    """(method, path prefix, status): answer the next matching request with that status."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Any = field(default_factory=lambda: count(1))

    def new_id(self, kind: int) -> str:
        return f"{kind:02x}{next(self.ids):022x}"

    # --- what participants do on Prolific's own pages --------------------------------------

    def start(self, study_id: str, participant: str) -> str:
        """A participant takes a place: a new submission (ACTIVE); its id is the SESSION_ID."""
        with self.lock:
            study = self.studies[study_id]
            if study["status"] != "ACTIVE":
                raise PermissionError(f"study {study_id} is {study['status']}")
            taken = [
                s for s in self.submissions.values()
                if s["study_id"] == study_id and s["status"] not in ("RETURNED", "TIMED-OUT")
            ]  # fmt: skip
            if len(taken) >= study["total_available_places"]:
                raise PermissionError("study full")
            for f in study.get("filters", []):
                if f["filter_id"] == "participant_group_allowlist":
                    allowed = set()
                    for group in f["selected_values"]:
                        allowed |= set(self.groups[group]["members"])
                    if participant not in allowed:
                        raise PermissionError("not in the study's participant group")
            sid = self.new_id(0xC0)
            self.submissions[sid] = {
                "id": sid,
                "participant_id": participant,
                "study_id": study_id,
                "status": "ACTIVE",
                "started_at": now(),
                "completed_at": None,
                "study_code": None,
                "is_complete": False,
                "bonus_payments": [],
            }
            return sid

    def complete(self, session: str, code: str) -> None:
        """The participant came back to Prolific with a code: AWAITING REVIEW (or what the
        code's actions say)."""
        with self.lock:
            sub = self.submissions[session]
            sub.update(status="AWAITING REVIEW", study_code=code, completed_at=now(),
                       is_complete=True)  # fmt: skip
            study = self.studies[sub["study_id"]]
            for c in study["completion_codes"]:
                if c["code"] != code:
                    continue
                for action in c["actions"]:
                    if action["action"] == "AUTOMATICALLY_APPROVE":
                        sub["status"] = "APPROVED"
                    elif action["action"] == "ADD_TO_PARTICIPANT_GROUP":
                        self.groups[action["participant_group"]]["members"].append(
                            sub["participant_id"]
                        )

    def leave(self, session: str, status: str) -> None:
        """RETURNED (the participant gave the place back) or TIMED-OUT."""
        with self.lock:
            self.submissions[session]["status"] = status

    def of(self, method: str, path_start: str) -> list[Received]:
        return [r for r in self.requests if r.method == method and r.path.startswith(path_start)]


class _Refused(Exception):
    def __init__(self, status: int, detail: Any):
        self.status = status
        self.detail = detail


def _need(condition: bool, detail: Any, status: int = 400) -> None:
    if not condition:
        raise _Refused(status, detail)


def _study_view(study: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in study.items()}


def _api(state: State, method: str, path: str, query: dict[str, str], body: Any):
    """One API request: (status, JSON answer)."""
    parts = [p for p in path.split("/") if p]
    # api-reference/workspaces/get-workspaces
    if method == "GET" and parts == ["workspaces"]:
        return 200, {"results": [{"id": state.workspace, "title": "Stand-in lab"}]}
    # api-reference/participant-groups/create-participant-group
    if method == "POST" and parts == ["participant-groups"]:
        _need(isinstance(body, dict) and body.get("name"), {"name": ["required"]})
        _need(body.get("workspace_id") == state.workspace, {"workspace_id": ["unknown"]})
        gid = state.new_id(0x60)
        members = list(body.get("participant_ids") or [])
        state.groups[gid] = {"id": gid, "name": body["name"], "members": members,
                             "workspace_id": state.workspace,
                             "description": body.get("description")}  # fmt: skip
        return 201, {
            "id": gid, "name": body["name"], "workspace_id": state.workspace,
            "description": body.get("description"), "participant_count": len(members),
            "feeder_studies": [], "is_deleted": False,
        }  # fmt: skip
    # api-reference/participant-groups/add-to-participant-group
    if (
        method == "POST"
        and len(parts) == 3
        and parts[0] == "participant-groups"
        and (parts[2] == "participants")
    ):
        group = state.groups.get(parts[1])
        _need(group is not None, {"detail": "Not found."}, 404)
        ids = body.get("participant_ids") if isinstance(body, dict) else None
        _need(isinstance(ids, list), {"participant_ids": ["required"]})
        for pid in ids:
            if pid not in group["members"]:
                group["members"].append(pid)
        return 200, {"results": [{"participant_id": p, "datetime_created": now()}
                                 for p in group["members"]]}  # fmt: skip
    # api-reference/studies/create-study
    if method == "POST" and parts == ["studies"]:
        _need(isinstance(body, dict), {"detail": "JSON object expected"})
        missing = [
            k for k in ("name", "description", "external_study_url", "completion_codes",
                        "estimated_completion_time", "reward", "total_available_places")
            if k not in body
        ]  # fmt: skip
        _need(not missing, {k: ["This field is required."] for k in missing})
        codes = body["completion_codes"]
        _need(isinstance(codes, list) and codes, {"completion_codes": ["required"]})
        values = [c.get("code") for c in codes]
        _need(len(set(values)) == len(values), {"completion_codes": ["codes must be unique"]})
        for c in codes:
            _need(c.get("code_type") in CODE_TYPES, {"code_type": [c.get("code_type")]})
            for a in c.get("actions", []):
                _need(a.get("action") in ACTIONS, {"action": [a.get("action")]})
        for k in ("estimated_completion_time", "reward", "total_available_places"):
            _need(isinstance(body[k], int) and body[k] > 0, {k: ["a positive integer"]})
        for f in body.get("filters", []):
            if f["filter_id"] == "participant_group_allowlist":
                for g in f["selected_values"]:
                    _need(g in state.groups, {"filters": [f"unknown group {g}"]})
        sid = state.new_id(0x66)
        state.studies[sid] = {**body, "id": sid, "status": "UNPUBLISHED"}
        return 201, _study_view(state.studies[sid])
    if len(parts) >= 2 and parts[0] == "studies":
        study = state.studies.get(parts[1])
        _need(study is not None, {"detail": "Not found."}, 404)
        # api-reference/studies/get-study
        if method == "GET" and len(parts) == 2:
            return 200, _study_view(study)
        # api-reference/studies/publish-study (the transition endpoint)
        if method == "POST" and parts[2:] == ["transition"]:
            action = body.get("action") if isinstance(body, dict) else None
            moves = {
                "PUBLISH": ({"UNPUBLISHED"}, "ACTIVE"),
                "PAUSE": ({"ACTIVE"}, "PAUSED"),
                "START": ({"PAUSED"}, "ACTIVE"),
                "STOP": ({"ACTIVE", "PAUSED"}, "AWAITING REVIEW"),
            }
            _need(action in moves, {"action": [f"{action!r} is not a valid choice"]})
            before, after = moves[action]
            _need(
                study["status"] in before, {"detail": f"cannot {action} a {study['status']} study"}
            )
            study["status"] = after
            return 200, {"id": study["id"], "status": after}
        # api-reference/studies/get-study-submissions: its one query parameter is `ordering`,
        # and `results` is "List of all submissions matching the criteria": no page, so a
        # client's limit and offset are ignored and every call answers the whole list.
        if method == "GET" and parts[2:] == ["submissions"]:
            subs = [s for s in state.submissions.values() if s["study_id"] == study["id"]]
            return 200, {"results": subs}
        # api-reference/studies/count-study-submissions-by-status
        if method == "GET" and parts[2:] == ["submissions", "counts"]:
            subs = [s for s in state.submissions.values() if s["study_id"] == study["id"]]
            counts = {k: sum(s["status"] == k for s in subs) for k in COUNTED}
            return 200, {**counts, "TOTAL": len(subs)}
    # api-reference/submissions/transition-submission (idempotent)
    if (
        method == "POST"
        and len(parts) == 3
        and parts[0] == "submissions"
        and (parts[2] == "transition")
    ):
        sub = state.submissions.get(parts[1])
        _need(sub is not None, {"detail": "Not found."}, 404)
        action = body.get("action") if isinstance(body, dict) else None
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}.get(action or "")
        _need(target is not None, {"action": [f"{action!r} is not a valid choice"]})
        if action == "REJECT":
            _need(len(body.get("message") or "") >= 100, {"message": ["at least 100 characters"]})
            _need(body.get("rejection_category") in REJECTION_CATEGORIES,
                  {"rejection_category": ["required"]})  # fmt: skip
        if sub["status"] == target:
            return 200, dict(sub)  # the same request twice: ignored
        _need(sub["status"] == "AWAITING REVIEW", {"detail": f"submission is {sub['status']}"})
        sub["status"] = target
        return 200, dict(sub)
    # api-reference/bonuses/create-bonus-payments: nothing is paid yet
    if method == "POST" and parts == ["submissions", "bonus-payments"]:
        study = state.studies.get(str(body.get("study_id")))
        _need(study is not None, {"study_id": ["unknown study"]})
        took = {s["participant_id"] for s in state.submissions.values()
                if s["study_id"] == study["id"]}  # fmt: skip
        lines, wrong = [], []
        for line in str(body.get("csv_bonuses") or "").splitlines():
            pid, _, amount = line.partition(",")
            if pid not in took:
                wrong.append(pid)
            lines.append((pid, float(amount)))
        _need(lines and not wrong, {"csv_bonuses": [f"not in the study: {', '.join(wrong)}"]})
        cents = round(sum(a for _, a in lines) * 100)
        fees = round(cents * 0.3)
        bid = state.new_id(0xB0)
        state.bulk[bid] = {"id": bid, "study": study["id"], "lines": lines}
        return 201, {"id": bid, "study": study["id"], "amount": cents, "fees": fees, "vat": 0,
                     "total_amount": cents + fees}  # fmt: skip
    # api-reference/bonuses/pay-bonus-payments: NOT idempotent (pays again on a repeat)
    if (
        method == "POST"
        and len(parts) == 3
        and parts[0] == "bulk-bonus-payments"
        and (parts[2] == "pay")
    ):
        bulk = state.bulk.get(parts[1])
        _need(bulk is not None, {"detail": "Not found."}, 404)
        state.paid.append({"bulk": bulk["id"], "lines": list(bulk["lines"])})
        return 202, {}
    raise _Refused(404, {"detail": f"no route {method} /{path}"})


def make_app(state: State):
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def api(request: Request) -> Response:
        path = request.path_params["path"]
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            body = None
        authorized = request.headers.get("authorization") == f"Token {state.token}"
        with state.lock:
            state.requests.append(
                Received(request.method, path, dict(request.query_params), body, authorized)
            )
            for i, (method, start, status) in enumerate(state.faults):
                if method == request.method and path.startswith(start):
                    del state.faults[i]
                    headers = {"Retry-After": "0"} if status == 429 else {}
                    return JSONResponse({"detail": "try again"}, status, headers=headers)
            if not authorized:
                return JSONResponse({"error": {"detail": "Invalid token."}}, 401)
            try:
                status, answer = _api(state, request.method, path, dict(request.query_params), body)
            except _Refused as refused:
                return JSONResponse({"error": {"detail": refused.detail}}, refused.status)
        return JSONResponse(answer, status)

    async def participant(request: Request) -> Response:
        what = request.path_params["what"]
        data = await request.json()
        try:
            if what == "start":
                return JSONResponse({"session_id": state.start(data["study_id"], data["pid"])})
            if what == "complete":
                state.complete(data["session_id"], data["code"])
            elif what in ("return", "time-out"):
                state.leave(data["session_id"], "RETURNED" if what == "return" else "TIMED-OUT")
            else:
                return JSONResponse({"detail": "no such step"}, 404)
        except PermissionError as exc:
            return JSONResponse({"detail": str(exc)}, 403)
        return JSONResponse({})

    return Starlette(
        routes=[
            Route(PREFIX + "/{path:path}", api, methods=["GET", "POST", "PATCH", "DELETE"]),
            Route("/_participant/{what}", participant, methods=["POST"]),
        ]
    )


@dataclass
class StandIn:
    url: str
    """The API's base, as --api-url or ANNOTATE_PROLIFIC_API takes it."""
    root: str
    state: State

    def start(self, study_id: str, participant: str) -> str:
        return self.state.start(study_id, participant)

    def complete(self, session: str, code: str) -> None:
        self.state.complete(session, code)


@contextmanager
def running_standin(token: str) -> Iterator[StandIn]:
    """The stand-in on a free loopback port, served by uvicorn in a thread of this process."""
    import uvicorn

    state = State(token)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(make_app(state), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    root = f"http://127.0.0.1:{port}"
    try:
        yield StandIn(f"{root}{PREFIX}/", root, state)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

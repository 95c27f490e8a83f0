"""Prolific's API over HTTP (httpx): the calls annotate makes, retried with backoff where that
is safe.

Every path below follows Prolific's API reference (docs.prolific.com/api-reference), under the
base https://api.prolific.com/api/v1/ with the header `Authorization: Token <token>`.
Reads and idempotent calls (a submission's transition is idempotent, Prolific says) retry on
429, 5xx and network errors. Paying a bulk bonus is not idempotent ("sending multiple requests
with the same bulk bonus payment ID will result in participants being paid multiple times"):
it retries only when the request was certainly not acted on (429, or no connection made).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from annotate import install_hint
from annotate.errors import UserError

DEFAULT_API = "https://api.prolific.com/api/v1/"
ATTEMPTS = 5


class ProlificError(UserError):
    """A call Prolific refused or that never got an answer: one line, never the token.
    `refused`: Prolific certainly did not act on it (it answered 4xx, 429 until the last try,
    or no connection was made), so asking again is safe."""

    def __init__(self, message: str, *, status: int | None = None, refused: bool = False):
        super().__init__(message)
        self.status = status
        self.refused = refused


class ProlificUnsure(ProlificError):
    """A call that may or may not have been acted on (a lost answer to a payment)."""


def participant_of(submission: Mapping[str, Any]) -> str:
    """The participant's Prolific id in a submission as the API lists it (`participant_id`;
    `participant` in older answers), or "" when it names none."""
    return str(submission.get("participant_id") or submission.get("participant") or "")


def token_from_settings() -> str:
    """ANNOTATE_PROLIFIC_TOKEN, or a clear error (the token is read from the environment only)."""
    from annotate.settings import settings

    secret = settings().prolific_token
    if secret is None or not secret.get_secret_value().strip():
        raise UserError(
            "set ANNOTATE_PROLIFIC_TOKEN to your Prolific API token (Prolific: Settings, API "
            "tokens); annotate reads it from the environment only and never stores it"
        )
    return secret.get_secret_value().strip()


def _detail(response: Any) -> str:
    """A short, single-line account of Prolific's refusal (its own words, cut)."""
    try:
        body = response.json()
    except ValueError:
        body = response.text
    text = " ".join(str(body).split())
    return text[:300]


class Prolific:
    """One researcher's connection to Prolific's API."""

    def __init__(
        self,
        token: str,
        base_url: str = DEFAULT_API,
        *,
        sleep: Callable[[float], None] = time.sleep,
        attempts: int = ATTEMPTS,
        timeout: float = 30.0,
        transport: Any = None,
    ):
        try:
            import httpx
        except ImportError:
            raise UserError(
                f"`annotate prolific` needs httpx: {install_hint('prolific')}"
            ) from None
        self._httpx = httpx
        self._sleep = sleep
        self._attempts = attempts
        self.base_url = base_url.rstrip("/") + "/"
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Token {token}", "User-Agent": "annotate"},
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Prolific:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the one way a request is made ------------------------------------------------------

    def _call(
        self, method: str, path: str, *, json: Any = None, params: Any = None, once: bool = False
    ) -> Any:
        """The JSON answer of one call. `once`: a call that must not be repeated if it may have
        been acted on (retried only on 429 and on a connection never made)."""
        httpx = self._httpx
        what = f"{method} {path}"
        for attempt in range(self._attempts):
            last = attempt == self._attempts - 1
            try:
                response = self._http.request(method, path, json=json, params=params)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if last:
                    raise ProlificError(
                        f"Prolific: {what}: cannot connect to {self.base_url} "
                        f"({type(exc).__name__})",
                        refused=True,
                    ) from None
                self._sleep(self._backoff(attempt, None))
                continue
            except httpx.TransportError as exc:
                if once:
                    raise ProlificUnsure(
                        f"Prolific: {what}: the answer was lost ({type(exc).__name__}); it may "
                        "have been acted on"
                    ) from None
                if last:
                    raise ProlificError(
                        f"Prolific: {what}: no answer ({type(exc).__name__})"
                    ) from None
                self._sleep(self._backoff(attempt, None))
                continue
            status = response.status_code
            if status == 429 or (status >= 500 and not once):
                if last:
                    raise ProlificError(
                        f"Prolific: {what}: {status} after {self._attempts} tries",
                        status=status,
                        refused=status == 429,
                    )
                self._sleep(self._backoff(attempt, response.headers.get("Retry-After")))
                continue
            if status >= 500:
                raise ProlificUnsure(
                    f"Prolific: {what}: {status}; it may have been acted on", status=status
                )
            if status >= 400:
                hint = ""
                if status == 401:  # the one refusal whose cause is the user's setting
                    hint = (
                        "; the token in ANNOTATE_PROLIFIC_TOKEN is wrong or no longer valid "
                        "(Prolific: Settings, API tokens)"
                    )
                raise ProlificError(
                    f"Prolific refused {what} ({status}): {_detail(response)}{hint}",
                    status=status,
                    refused=True,
                )
            if not response.content:
                return {}
            try:
                return response.json()
            except ValueError:
                # Read as nothing, a list of submissions or counts would be zeros, stored;
                # a call that acts has acted, and what it made is not known.
                unreadable = ProlificUnsure if once or method != "GET" else ProlificError
                raise unreadable(
                    f"Prolific: {what}: answered {status} with a body that is not JSON"
                    + ("; it may have been acted on" if method != "GET" else ""),
                    status=status,
                ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _backoff(attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return min(60.0, max(0.0, float(retry_after)))
            except ValueError:
                pass
        return min(30.0, 0.5 * 2**attempt)

    # --- studies (api-reference/studies) ----------------------------------------------------

    def workspaces(self) -> list[dict[str, Any]]:
        """GET workspaces/ (api-reference/workspaces/get-workspaces)."""
        return list(self._call("GET", "workspaces/").get("results", []))

    def create_study(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST studies/: a draft study (api-reference/studies/create-study). Not repeated
        after an answer that may follow its making (a second draft)."""
        return self._call("POST", "studies/", json=body, once=True)

    def study(self, study_id: str) -> dict[str, Any]:
        """GET studies/{id}/ (api-reference/studies/get-study)."""
        return self._call("GET", f"studies/{study_id}/")

    def transition_study(self, study_id: str, action: str) -> dict[str, Any]:
        """POST studies/{id}/transition/ {action: PUBLISH | PAUSE | START | STOP}
        (api-reference/studies/publish-study)."""
        body = {"action": action}  # a repeat of one made would be refused: said as unsure
        return self._call("POST", f"studies/{study_id}/transition/", json=body, once=True)

    def submission_counts(self, study_id: str) -> dict[str, int]:
        """GET studies/{id}/submissions/counts/ (api-reference/studies/count-study-submissions-
        by-status): submissions per status."""
        counts = self._call("GET", f"studies/{study_id}/submissions/counts/")
        return {str(k): int(v or 0) for k, v in counts.items()}

    def submissions(self, study_id: str) -> list[dict[str, Any]]:
        """GET studies/{id}/submissions/ (api-reference/studies/get-study-submissions): the
        whole list in one answer (the reference gives it no page parameters), each submission
        once. Checked against Prolific's own count, read first: a list shorter than it would
        leave submissions unreviewed and unpaid, so it is an error, not a partial sync."""
        total = int(self.submission_counts(study_id).get("TOTAL", 0))
        answer = self._call("GET", f"studies/{study_id}/submissions/")
        listed = {str(sub["id"]): sub for sub in answer.get("results", [])}
        if len(listed) < total:
            raise ProlificError(
                f"Prolific: GET studies/{study_id}/submissions/ listed {len(listed)} of the "
                f"study's {total} submissions; nothing was done"
            )
        return list(listed.values())

    # --- submissions (api-reference/submissions) --------------------------------------------

    def transition_submission(self, submission_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST submissions/{id}/transition/ {action: APPROVE | REJECT, message,
        rejection_category} (api-reference/submissions/transition-submission; idempotent)."""
        return self._call("POST", f"submissions/{submission_id}/transition/", json=body)

    # --- participant groups (api-reference/participant-groups) ------------------------------

    def create_group(self, workspace_id: str, name: str, description: str) -> dict[str, Any]:
        """POST participant-groups/ (api-reference/participant-groups/create-participant-group)."""
        body = {"name": name, "workspace_id": workspace_id, "description": description}
        return self._call("POST", "participant-groups/", json=body, once=True)

    def add_to_group(self, group_id: str, participant_ids: list[str]) -> dict[str, Any]:
        """POST participant-groups/{id}/participants/ (api-reference/participant-groups/add-to-
        participant-group): members already in are ignored."""
        return self._call(
            "POST",
            f"participant-groups/{group_id}/participants/",
            json={"participant_ids": participant_ids},
        )

    # --- bonuses (api-reference/bonuses) ----------------------------------------------------

    def set_up_bonuses(self, study_id: str, csv_bonuses: str) -> dict[str, Any]:
        """POST submissions/bonus-payments/ {study_id, csv_bonuses} (api-reference/bonuses/
        create-bonus-payments): nothing is paid yet; the answer has the bulk payment's id and
        its total in cents."""
        body = {"study_id": study_id, "csv_bonuses": csv_bonuses}
        return self._call("POST", "submissions/bonus-payments/", json=body, once=True)

    def pay_bonuses(self, bulk_id: str) -> dict[str, Any]:
        """POST bulk-bonus-payments/{id}/pay/ (api-reference/bonuses/pay-bonus-payments): not
        idempotent, so made once."""
        return self._call("POST", f"bulk-bonus-payments/{bulk_id}/pay/", once=True)

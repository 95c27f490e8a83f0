"""A crowd study's platform settings: read from the researcher's TOML file, stored with the study
(`study.crowd`), and read back by every front end through annotate/protocol/crowd.py.

    platform = "prolific"                 # prolific | mturk | link
    study_ids = ["64b1f0c2a3d4e5f6a7b8c9d0"]     # platform studies whose links lead to every phase
    training_study_id = "..."             # the median gate as two platform studies: the
    test_study_id = "..."                 #   training link and the test link
    consent = '''You are invited to ...'''
    guidelines = '''Extra words shown above the task's guidelines.'''
    completion_url = "https://example.org/done?code={code}"   # link platform only
    public_url = "https://annotate.example.org/"   # where `annotate serve` is reached

Every key is described in docs/reference/crowd-toml.md.

    [codes]                               # completion codes per outcome (generated if absent)
    completed = "C1X9Q2ZT"
    screened_out = "SCR4PLQ8"

    [[survey]]                            # an optional exit survey
    name = "difficulty"
    prompt = "How hard were the items?"
    kind = "choice"
    choices = ["easy", "about right", "hard"]
"""

from __future__ import annotations

import re
import secrets
import string
import tomllib
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from annotate.errors import UserError, explain_validation

PLATFORMS = ("prolific", "mturk", "link")
OUTCOMES = (
    "completed",
    "screened_out",
    "study_full",
    "no_consent",
    "training_done",
    "not_admitted",
)
"""Every way a crowd worker leaves a study, each with its own completion code:
completed (their batch of test items), screened_out (refused by the gate), study_full (no test
item left for them), no_consent ("I do not agree"), training_done (the training link of the
two-study median gate), not_admitted (the test link, for a worker the gate did not admit)."""

CODE_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PROLIFIC_ID = re.compile(r"^[0-9a-f]{24}$")
"""Prolific participant, study and session ids: 24 hexadecimal characters."""
MTURK_ID = re.compile(r"^[A-Z0-9]{10,40}$")
"""MTurk HIT and assignment ids (and worker ids, which also start with A)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SurveyQuestion(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,40}$")
    """The key the answer is stored and exported under."""
    prompt: str = Field(min_length=1, max_length=500)
    kind: Literal["text", "choice"] = "text"
    choices: list[str] = Field(default_factory=list)
    required: bool = False
    max_length: int = Field(1000, ge=1, le=10000)
    """Longest free-text answer taken."""

    @model_validator(mode="after")
    def _choices_fit_kind(self) -> SurveyQuestion:
        if self.kind == "choice" and len(self.choices) < 2:
            raise ValueError(f"survey question {self.name!r}: a choice needs at least 2 choices")
        if self.kind == "text" and self.choices:
            raise ValueError(f'survey question {self.name!r}: choices need kind = "choice"')
        return self


class CrowdConfig(_Strict):
    platform: Literal["prolific", "mturk", "link"]
    study_ids: list[str] = Field(default_factory=list)
    """Platform studies (Prolific STUDY_ID, MTurk hitId, the generic link's `study`) whose link
    leads through every phase. MTurk and the generic link accept any when none is listed."""
    training_study_id: str | None = None
    test_study_id: str | None = None
    """The median gate as two platform studies on one annotate study: the training link ends on
    the training_done code; the test link admits only workers the gate admitted."""
    codes: dict[str, str] = Field(default_factory=dict)
    consent: str | None = None
    guidelines: str | None = None
    survey: list[SurveyQuestion] = Field(default_factory=list)
    completion_url: str | None = None
    """Generic link only: where to send a worker on exit; {code} becomes the code."""
    public_url: str | None = None
    """The address workers' browsers reach `annotate serve` at (`study crowd --url`): the
    links to paste start with it, and `serve` takes its origin as its own public one (the
    origin check of every POST) unless `serve --public-url` says otherwise."""

    @field_validator("codes")
    @classmethod
    def _known_outcomes(cls, codes: dict[str, str]) -> dict[str, str]:
        for outcome, code in codes.items():
            if outcome not in OUTCOMES:
                known = ", ".join(OUTCOMES)
                # The error names the key (`codes: …`): the message says only what is wrong.
                raise ValueError(f"unknown outcome {outcome!r} (known: {known})")
            if not CODE_PATTERN.match(code):
                raise ValueError(f"{code!r} for {outcome} is not 1-64 of A-Z, a-z, 0-9, - or _")
        return codes

    @model_validator(mode="after")
    def _ids_fit_platform(self) -> CrowdConfig:
        ids = [*self.study_ids, *filter(None, [self.training_study_id, self.test_study_id])]
        for study_id in ids:
            if self.platform == "prolific" and not PROLIFIC_ID.match(study_id):
                raise ValueError(f"{study_id!r} is not a Prolific study id (24 hex characters)")
            if self.platform == "mturk" and not MTURK_ID.match(study_id):
                raise ValueError(
                    f"{study_id!r} is not an MTurk HIT id (10 to 40 capitals and digits)"
                )
            if not re.match(r"^[A-Za-z0-9_.-]{1,64}$", study_id):
                raise ValueError(f"{study_id!r} is not a study id (letters, digits, . - _)")
        if len(set(ids)) != len(ids):
            raise ValueError("a platform study id is listed twice")
        if (self.training_study_id is None) != (self.test_study_id is None):
            raise ValueError("training_study_id and test_study_id go together (two-study gate)")
        if self.completion_url is not None:
            if self.platform != "link":
                raise ValueError("completion_url is for the generic link platform only")
            if not re.match(r"^https?://", self.completion_url):
                raise ValueError("completion_url must be an http(s) address")
        if self.public_url is not None:
            parts = urlsplit(self.public_url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError("public_url must be an http(s) address with a host")
            if parts.query or parts.fragment:
                raise ValueError("public_url takes no ?query or #fragment (the links add theirs)")
        names = [q.name for q in self.survey]
        if len(set(names)) != len(names):
            raise ValueError("two survey questions have the same name")
        return self

    def code(self, outcome: str) -> str:
        return self.codes[outcome]

    @property
    def accepted(self) -> dict[str, str]:
        """Platform study id -> the link's role (all, training, test)."""
        roles = dict.fromkeys(self.study_ids, "all")
        if self.training_study_id and self.test_study_id:
            roles[self.training_study_id] = "training"
            roles[self.test_study_id] = "test"
        return roles


def new_code() -> str:
    """A completion code: 8 capitals and digits, as Prolific's own look."""
    alphabet = string.ascii_uppercase + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(8))


def with_codes(config: CrowdConfig, keep: dict[str, str] | None = None) -> CrowdConfig:
    """Every outcome with a code: the file's own, else the one stored before (codes already
    given to workers must not change), else a new one; never one another outcome has."""
    codes = dict(config.codes)
    for outcome in OUTCOMES:
        if outcome in codes:
            continue
        taken = {c.upper() for c in codes.values()}
        code = (keep or {}).get(outcome)
        while code is None or code.upper() in taken:
            code = new_code()
        codes[outcome] = code
    return config.model_copy(update={"codes": {o: codes[o] for o in OUTCOMES}})


def require_unique_codes(config: CrowdConfig, origin: str) -> None:
    """Refuse settings that give two outcomes one code: a code tells the platform how a
    worker left, and Prolific refuses two completion codes alike within a study. (Checked
    where settings are given, not on stored ones, which stay readable.)"""
    seen: dict[str, str] = {}
    for outcome, code in config.codes.items():
        if code.upper() in seen:
            raise UserError(
                f"{origin}: invalid crowd settings: codes.{outcome}: {code!r} is also the code "
                f"of {seen[code.upper()]} (each outcome needs its own code)"
            )
        seen[code.upper()] = outcome


def keep_stored(data: dict[str, Any], keep: CrowdConfig | None) -> dict[str, Any]:
    """New settings (a crowd file) over the stored ones `keep`: what workers' links already
    depend on is kept unless the new settings give their own: the public address, and the
    two-study gate's platform studies (made by `prolific create` or named before). Without
    them the links' studies would be refused, mid-study, for a typo fixed in the consent
    text. (The completion codes are kept by with_codes.)"""
    if keep is None:
        return data
    out = dict(data)
    if out.get("public_url") is None:
        out["public_url"] = keep.public_url
    same = out.get("platform", keep.platform) == keep.platform
    if same and not out.get("training_study_id") and not out.get("test_study_id"):
        out["training_study_id"] = keep.training_study_id
        out["test_study_id"] = keep.test_study_id
    return out


A_STUDY_ON = {
    "prolific": "a Prolific study",
    "mturk": "an MTurk study",
    "link": "a study by plain link",
}
"""What a crowd study is, by its platform, in a sentence ("an MTurk study", not "a mturk")."""


def validate_config(
    data: dict[str, Any], origin: str, options: dict[str, str] | None = None
) -> CrowdConfig:
    """`data` as crowd settings; a mistake is one UserError naming `origin`, and, for settings
    given on a command line, each setting by its option (`options`: key -> "--option")."""
    try:
        return CrowdConfig.model_validate(data)
    except ValidationError as exc:
        why = explain_validation(exc)
        for key, option in (options or {}).items():
            why = re.sub(rf"\b{key}\b", option, why)
        raise UserError(f"{origin}: invalid crowd settings: {why}") from None


def read_config_file(path: Path, platform: str | None = None) -> CrowdConfig:
    """The researcher's crowd TOML; `platform` (from --crowd) fills or must match its own."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if platform is not None and data.setdefault("platform", platform) != platform:
        raise UserError(f"{path}: platform = {data['platform']!r}, but --crowd {platform}")
    return validate_config(data, str(path))


def stored(study_crowd: dict[str, Any] | None, origin: str) -> CrowdConfig | None:
    """The config a study stored (None for a study without crowd settings)."""
    return None if study_crowd is None else validate_config(study_crowd, origin)

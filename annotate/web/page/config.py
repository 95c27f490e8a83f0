"""What one page server is started with (`annotate serve`'s options)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine

from annotate.web.limits import SignInLimiter


@dataclass
class PageConfig:
    engine: Engine
    study: str
    secret: str
    origins: set[str]
    require_tokens: bool = True
    secure: bool = False
    annotator: str | None = None
    """A one-person server (`serve --as NAME`): the name is fixed."""
    poll_seconds: float = 5.0
    limiter: SignInLimiter = field(default_factory=SignInLimiter)

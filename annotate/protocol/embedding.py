"""Who may show a study's page inside a frame, and where its forms may be sent, besides the
page itself: the one place this is decided (the page's security headers ask here).

MTurk shows an ExternalQuestion in a frame on its worker sites, and the worker's exit is a
form posted to `turkSubmitTo/mturk/externalSubmit` (crowd.parse_link accepts only MTurk's own
submit hosts there). Every other study is framed by nobody and posts only to itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotate.protocol.crowd import MTURK_SUBMIT_HOSTS
from annotate.protocol.crowd_config import CrowdConfig

MTURK_FRAME_ORIGINS = ("https://worker.mturk.com", "https://workersandbox.mturk.com")
"""MTurk's worker sites (live and sandbox), whose task page frames an ExternalQuestion."""


@dataclass(frozen=True)
class Embedding:
    frame_ancestors: tuple[str, ...] = ()
    """Origins whose pages may frame this one (none: no frame at all)."""
    form_targets: tuple[str, ...] = ()
    """Origins this page's forms may post to, besides its own."""

    @property
    def framed(self) -> bool:
        return bool(self.frame_ancestors)


def embedding(config: CrowdConfig | None) -> Embedding:
    """A study's embedding: MTurk's frame and submit origins for an MTurk crowd study,
    nothing for any other. The submit hosts' answer (externalSubmit) may redirect the frame
    to the worker site, and Chromium checks a form's redirects against form-action too."""
    if config is None or config.platform != "mturk":
        return Embedding()
    submit = tuple(f"https://{host}" for host in MTURK_SUBMIT_HOSTS)
    return Embedding(MTURK_FRAME_ORIGINS, tuple(dict.fromkeys(submit + MTURK_FRAME_ORIGINS)))

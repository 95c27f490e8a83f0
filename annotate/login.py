"""Who runs this process: what the researcher's decisions record as `by` when no name is given
(`gate`, `flags`, the console)."""

from __future__ import annotations

import getpass


def login_name() -> str:
    """The login name, or "researcher" where there is none (some containers)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "researcher"

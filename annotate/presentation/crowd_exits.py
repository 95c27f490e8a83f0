"""A crowd study's exits in words, as `status` and the console print them: one line per
platform study (its link, then each code and how many workers left with it), then who
abandoned. From protocol.status.crowd_counts' data."""

from __future__ import annotations

from itertools import groupby
from typing import Any

from annotate.wording import count_of


def exit_lines(crowd: dict[str, Any]) -> list[str]:
    lines = []
    exits = crowd.get("exits", [])
    for study, group in groupby(exits, key=lambda e: (e["platform_study"], e["link"])):
        platform_study, link = study
        codes = ", ".join(f"{e['outcome']} ({e['code']}) {e['workers']}" for e in group)
        name = platform_study or "any study"
        lines.append(f"{crowd['platform']} study {name} ({link} link): {codes}")
    if not exits:
        lines.append(f"{crowd['platform']}: no worker has left with a code yet")
    lines.append(
        f"abandoned (left without a code, quiet past the lease): "
        f"{count_of(crowd.get('abandoned_workers', 0), 'worker')}"
    )
    return lines

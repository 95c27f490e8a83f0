"""What later releases changed on purpose in the numbers an old release printed, shared by the
migration tests that compare a migrated store's output with the old release's."""

from __future__ import annotations

import json

import pytest


def tags_counted_once(old: dict, now: dict) -> dict:
    """`annotate curate stats --format json` as the old release printed it (`old`), with the
    tag agreement's codings as they are counted since each sentence pair counts once (both
    directions carry one tag set): checked first to be no more than before, on the same tags
    and categories, each α, the mean Jaccard index and the exact-match share unchanged (every
    pair of the old stores was tagged alike in both directions)."""
    fixed = json.loads(json.dumps(old))
    then, got = fixed.get("review", {}).get("tags"), now.get("review", {}).get("tags")
    if not then:
        return fixed
    for key in ("mean_jaccard", "exact_match"):
        assert got[key] == pytest.approx(then[key]), key
    for group in ("per_tag", "per_category"):
        assert set(got[group]) == set(then[group]), group
        for name, entry in then[group].items():
            assert got[group][name]["alpha"] == entry["alpha"], (group, name)
            assert 0 < got[group][name]["codings"] <= entry["codings"], (group, name)
            entry["codings"] = got[group][name]["codings"]
    return fixed

"""The shared wording of an ETA: to the hour within the horizon, honest beyond it."""

from __future__ import annotations

from datetime import timedelta

from annotate.wording import eta


def test_an_eta_is_given_to_the_hour_only_within_thirty_days():
    assert eta(timedelta(seconds=45)) == "45 s"
    assert eta(timedelta(minutes=12)) == "12 min"
    assert eta(timedelta(hours=3, minutes=20)) == "3 h 20 min"
    assert eta(timedelta(days=2, hours=4)) == "2 d 4 h"
    assert eta(timedelta(days=30)) == "30 d 0 h"
    assert eta(timedelta(days=30, hours=1)) == "more than 30 days at the current pace"
    assert eta(timedelta(days=115, hours=6)) == "more than 30 days at the current pace"

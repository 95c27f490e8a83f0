"""Where the annotator stands in the phase: `Training 2/5 · 50% right`, and the (done, total)
of the progress bar."""

from __future__ import annotations

from annotate.protocol.catch import REFRESHER, REFRESHER_ITEMS
from annotate.protocol.session import ItemView, Progress
from annotate.protocol.studies import TRAINING
from annotate.terminal_text import SafeText as Text


def status_phase(item: ItemView) -> str:
    """What the status line counts for `item`: its phase, or the refresher round."""
    return REFRESHER if item.refresher else item.phase


def phase_counts(phase: str, progress: Progress) -> tuple[int, int]:
    """(done, total) for the bar: training answers of the quota, test-stream answers of the
    annotator's test items (the study's, each seen at most once, or their batch) and the catch
    items planned among them, which look like test items."""
    if phase == TRAINING:
        return progress.training_done, progress.training_quota
    if phase == REFRESHER:
        return progress.refresher_done, progress.refresher_total or REFRESHER_ITEMS
    return progress.stream_done, progress.stream_total


def describe_progress(phase: str, progress: Progress) -> Text:
    done, total = phase_counts(phase, progress)
    name = {TRAINING: "Training", REFRESHER: "Refresher"}.get(phase, "Test")
    text = Text.assemble((name, "bold"), f" {done}/{total}")
    if phase == TRAINING and progress.training_done:
        text.append(f" · {progress.training_accuracy:.0%} right", style="dim")
    return text

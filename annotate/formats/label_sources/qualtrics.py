"""A Qualtrics CSV export (and the Prolific surveys built in it): three header rows (names,
question texts, import ids), then one row per response; each question column is an item."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import tzinfo
from pathlib import Path

from annotate.errors import DataFileError, UserError
from annotate.formats.label_sources.cells import (
    cell_text,
    csv_rows,
    need,
    number_text,
    padded,
    read_text,
)
from annotate.formats.label_sources.labels import LabelFile, RawLabel
from annotate.formats.label_sources.options import ReadOptions
from annotate.formats.label_sources.source import LabelSource, Peek
from annotate.formats.label_sources.times import (
    SHARED_SPAN_NOTE,
    lay_end_to_end,
    named_zone,
    parse_time,
    seconds,
    share_span,
)

QUALTRICS_META = {
    "StartDate",
    "EndDate",
    "Status",
    "IPAddress",
    "Progress",
    "Duration (in seconds)",
    "Finished",
    "RecordedDate",
    "ResponseId",
    "RecipientLastName",
    "RecipientFirstName",
    "RecipientEmail",
    "ExternalReference",
    "LocationLatitude",
    "LocationLongitude",
    "DistributionChannel",
    "UserLanguage",
}
IMPORT_ID = '{"ImportId"'
NOT_PARTICIPANTS = {"survey preview", "survey test", "1", "2", "17"}
"""Status of the researcher's own responses (Preview Survey, generated test responses; 1, 2
and 17 in a numeric export): exported beside the participants', but nobody's labels."""
DURATION = "Duration (in seconds)"


class QualtricsSource(LabelSource):
    name = "qualtrics"
    description = "Qualtrics export"
    unit = "response"
    map_keys = ("item", "annotator")
    reads_fields = False

    def claims(self, peek: Peek) -> bool:
        """The third header row holds the import ids: `{"ImportId":"QID1"}`."""
        rows = peek.table
        return len(rows) >= 3 and any(c.strip().startswith(IMPORT_ID) for c in rows[2])

    def read(self, path: Path, options: ReadOptions) -> LabelFile:
        return read_qualtrics(path, options.mapping)


def read_qualtrics(path: Path, mapping: dict[str, str]) -> LabelFile:
    """Each question column is one item: its id is the column name, or the first group of the
    `--map item=REGEX` that the column names must match. The annotator is PROLIFIC_PID when
    the survey records it, else ResponseId (`--map annotator=COLUMN`). Unfinished responses
    (Finished False) and the researcher's previews and test responses (Status) are left out."""
    table = csv_rows(path, read_text(path))
    if len(table) < 4:
        raise DataFileError(path, None, "no responses (a Qualtrics export has three header rows)")
    names = [c.strip() for c in table[0][1]]
    import_ids = table[2][1]
    if not all(c.strip().startswith("{") for c in import_ids if c.strip()):
        raise DataFileError(
            path, table[2][0], 'the third row is not Qualtrics import ids ({"ImportId": …})'
        )
    pattern = None
    if "item" in mapping:
        try:
            pattern = re.compile(mapping["item"])
        except re.error as exc:
            raise UserError(
                f"--map item={mapping['item']}: not a regular expression ({exc})"
            ) from None
    questions: dict[str, str] = {}
    zones: dict[str, tzinfo] = {}  # StartDate/EndDate: the zone the export wrote them in
    for index, name in enumerate(names):
        raw_id = import_ids[index] if index < len(import_ids) else ""
        try:
            meta = json.loads(raw_id) if raw_id.strip() else {}
            qid = str(meta.get("ImportId", ""))
            if name in {"StartDate", "EndDate"} and meta.get("timeZone"):
                zones[name] = named_zone(str(meta["timeZone"]), path, table[2][0], name)
        except RecursionError:
            raise DataFileError(
                path, table[2][0], f"column {name}: import id nested too deeply to read"
            ) from None
        except (ValueError, AttributeError):  # bad JSON, a number too long to read
            shown = raw_id if len(raw_id) <= 60 else raw_id[:60] + "…"
            raise DataFileError(path, table[2][0], f"column {name}: import id {shown!r}") from None
        if pattern is not None:
            match = pattern.fullmatch(name)
            if match:
                questions[name] = match.group(1) if match.groups() else name
        elif name not in QUALTRICS_META and qid.startswith("QID") and not qid.endswith("_TEXT"):
            questions[name] = name
    if not questions:
        raise DataFileError(path, table[0][0], "no question columns (pass --map item=REGEX)")
    annotator = need(
        path,
        table[0][0],
        names,
        mapping.get("annotator"),
        ("prolific_pid", "workerid", "responseid"),
        "annotator",
    )
    position = {n: i for i, n in enumerate(names)}
    labels: list[RawLabel] = []
    excluded: Counter[str] = Counter()
    n_responses = 0
    for number, cells in table[3:]:
        row = padded(path, number, cells, len(names))

        def cell(column: str, row: list[str] = row) -> str | None:
            return cell_text(row[position[column]]) if column in position else None

        if (cell("Status") or "").lower() in NOT_PARTICIPANTS:
            excluded["survey previews and tests"] += 1
            continue
        worker = cell(annotator)
        if not worker:
            raise DataFileError(path, number, f"missing {annotator}")
        if (cell("Finished") or "true").lower() in {"false", "0"}:
            excluded["unfinished responses"] += 1
            continue
        n_responses += 1
        mine = [
            RawLabel(number, item, worker, value)
            for column, item in questions.items()
            if (value := cell(column)) is not None
        ]
        start, end = cell("StartDate"), cell("EndDate")
        share_span(
            mine,
            parse_time(start, path, number, "StartDate", zones.get("StartDate")) if start else None,
            parse_time(end, path, number, "EndDate", zones.get("EndDate")) if end else None,
            seconds(
                number_text(row[position[DURATION]]) if DURATION in position else None,
                path,
                number,
                DURATION,
            ),
        )
        labels += mine
    if not labels:
        raise DataFileError(path, None, "no answers in the file")
    dates = lay_end_to_end(labels, path)  # a duration without StartDate or EndDate
    return LabelFile(
        platform="prolific" if annotator.lower() == "prolific_pid" else "qualtrics",
        path=path,
        format="qualtrics",
        dates=dates,
        labels=labels,
        n_assignments=n_responses,
        n_excluded=dict(excluded),
        has_times=any(lab.shown_at is not None for lab in labels),
        time_note=SHARED_SPAN_NOTE,
    )

"""Rich tables of curation data for the terminal. Sentences, tags, names and notes come from
people: every cell and title is a `rich.text.Text`, never parsed as markup."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from annotate.curation.examples import ExampleView
from annotate.curation.review import DecisionView, Opinion, QueueEntry, ReviewView
from annotate.taxonomy import TAXONOMY
from annotate.terminal_text import SafeText as Text
from annotate.wording import fixed


def _table(title: str, headings: Sequence[str]) -> Table:
    table = Table(title=Text(title), title_justify="left")
    for heading in headings:
        table.add_column(Text(heading), overflow="fold")
    return table


def _row(table: Table, *cells: Any) -> None:
    table.add_row(*(Text(_cell(c)) for c in cells))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return fixed(value)
    return str(value)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else ""


def sets_table(rows: list[dict[str, Any]]) -> Table:
    table = _table("Curation sets", ["Set", "Labels", "Examples", "Retired", "Created by"])
    for r in rows:
        _row(table, r["name"], r["labels"], r["examples"], r["retired"], r["created_by"])
    return table


def taxonomy_table() -> Table:
    table = _table("GLUE diagnostic taxonomy (exact spellings)", ["Category", "Fine tags"])
    for coarse, tags in TAXONOMY.items():
        _row(table, coarse, "; ".join(tags))
    return table


def examples_table(examples: Sequence[ExampleView], title: str) -> Table:
    table = _table(
        title, ["Id", "Pair", "Label", "Tags", "Domain", "Author", "Premise", "Hypothesis"]
    )
    for e in examples:
        label = e.label + (" (to check)" if e.label_unchecked else "")
        label += " (retired)" if e.retired else ""
        tags = "; ".join(e.fine_tags)
        _row(table, e.id, e.pair_id, label, tags, e.domain, e.author, e.premise, e.hypothesis)
    return table


def example_tables(
    example: ExampleView,
    history: list[dict[str, Any]],
    reviews: Sequence[ReviewView] = (),
    decisions: Sequence[DecisionView] = (),
) -> list[Table]:
    detail = _table(f"Example {example.id}", ["Field", "Value"])
    for key, value in example.as_dict().items():
        if key == "tags":
            value = "; ".join(example.fine_tags)
        elif key == "label_unchecked" and value:
            value = "yes: the sentences changed since the label was set; review or edit it"
        _row(detail, key, value)
    # Each row says who made that version, and how: the change that led to it.
    versions = _table(
        "History (oldest first)",
        ["Version", "Label", "Tags", "Premise", "Hypothesis", "Retired", "Made by", "Note"],
    )
    for h in history:
        tags = "; ".join(t for ts in h["tags"].values() for t in ts)
        made = f"{h['made_by']} ({h['made_change']}, {h['made_at'][:16].replace('T', ' ')})"
        _row(
            versions,
            h["version"],
            h["label"],
            tags,
            h["premise"],
            h["hypothesis"],
            h["retired"],
            made,
            h["made_note"],
        )
    tables = [detail, versions, reviews_table(reviews)]
    if decisions:
        tables.append(decisions_table(decisions))
    return tables


def decisions_table(decisions: Sequence[DecisionView]) -> Table:
    """Who settled the example's disagreements, to what and why (also when the author's label
    was kept, which leaves no new version in the history)."""
    table = _table(
        f"Adjudication ({len(decisions)})",
        ["Settled by", "Label", "Tags", "When", "Note", "Author's override reason"],
    )
    for d in decisions:
        when = d.decided_at.isoformat(timespec="seconds")
        _row(table, d.decided_by, d.label, "; ".join(d.tags), when, d.note, d.override_reason or "")
    return table


def reviews_table(reviews: Sequence[ReviewView]) -> Table:
    table = _table(
        f"Reviews ({len(reviews)})" if reviews else "Reviews: none yet",
        ["Reviewer", "Label", "Tags", "Saw version", "Counts", "When", "Note"],
    )
    for r in reviews:
        counts = "no: stale (sentences edited since)" if r.stale else "yes"
        when = r.created_at.isoformat(timespec="seconds")
        _row(table, r.reviewer, r.label, "; ".join(r.tags), r.example_version, counts, when, r.note)
    return table


def _opinion(o: Opinion) -> str:
    # A review of the reverse direction is in the entry for its tags (they belong to the pair):
    # its label is of the other direction, not a second label by the same person for this one.
    who = f"{o.who} ({o.role})" if o.role not in ("author", "reviewer") else o.who
    return f"{who}: {o.label} [{'; '.join(o.tags)}]"


def queue_table(entries: Sequence[QueueEntry], title: str) -> Table:
    table = _table(title, ["Id", "Disputed", "Author", "Opinions", "Premise", "Hypothesis"])
    for entry in entries:
        e = entry.example
        opinions = " | ".join(_opinion(o) for o in entry.opinions)
        _row(table, e.id, ", ".join(entry.disputed), e.author, opinions, e.premise, e.hypothesis)
    return table


# --- statistics ------------------------------------------------------------------------------


def _label_headings(stats: dict[str, Any]) -> list[str]:
    return [f"% {label}" for label in stats["labels"]]


def _shares(counts: dict[str, int], total: int) -> list[str]:
    return [_pct(n, total) for n in counts.values()]


def stats_tables(stats: dict[str, Any]) -> list[Table]:
    """Overview, Table 2 of the GLUE paper (coarse categories), fine tags, labels, domains,
    review coverage and agreement."""
    n = stats["examples"]
    overview = _table(f"Set {stats['set']}", ["", ""])
    for key in ("label_scheme", "examples", "pairs", "retired", "untagged", "duplicates"):
        _row(overview, key.replace("_", " "), stats[key])
    _row(overview, "labels to check (sentences edited)", stats["labels_unchecked"])
    _row(overview, "authors", ", ".join(f"{a} {c}" for a, c in stats["authors"].items()))

    coarse = _table(
        "Examples per coarse category (GLUE paper, Table 2)",
        ["Category", "Count", *_label_headings(stats)],
    )
    for category, entry in stats["coarse"].items():
        _row(coarse, category, entry["count"], *_shares(entry["labels"], entry["count"]))

    fine = _table("Examples per fine tag", ["Tag", "Count", *_label_headings(stats)])
    for category, tags in stats["fine"].items():
        fine.add_row(Text(category, style="bold"))
        for tag, entry in tags.items():
            _row(fine, f"  {tag}", entry["count"], *_shares(entry["labels"], entry["count"]))

    labels = _table("Labels", ["Label", "Count", "Share"])
    for label, count in stats["labels"].items():
        _row(labels, label, count, _pct(count, n))

    domains = _table("Domains", ["Domain", "Count", "Share"])
    for domain, count in stats["domains"].items():
        _row(domains, domain, count, _pct(count, n))
    return [overview, coarse, fine, labels, domains, *review_tables(stats["review"])]


def _alpha_cell(entry: dict[str, Any]) -> Any:
    """The α, or why there is none (e.g. every coder gave the same value)."""
    return entry.get("note", "undefined") if entry["alpha"] is None else entry["alpha"]


def review_tables(review: dict[str, Any]) -> list[Table]:
    summary = _table("Second opinions", ["", ""])
    coverage = review["coverage"]
    _row(summary, "reviewed examples", review["reviewed_examples"])
    _row(summary, "coverage", f"{100 * coverage:.1f}%" if coverage is not None else "")
    _row(summary, "reviews", review["reviews"])
    _row(summary, "coders", ", ".join(review["coders"]))
    _row(summary, "open disagreements", review["open_disagreements"])
    if review["labels"] is None:
        return [summary]
    labels, tags = review["labels"], review["tags"]
    _row(summary, "label α (Krippendorff, nominal)", _alpha_cell(labels))
    _row(summary, "label pairwise agreement", labels["pairwise_agreement"])
    _row(summary, "tag sets: mean Jaccard", tags["mean_jaccard"])
    _row(summary, "tag sets: identical", tags["exact_match"])
    per_tag = _table("Tag agreement (α on present/absent)", ["Category / tag", "Codings", "α"])
    # Each category, then its own tags under it (per_tag names each tag's category).
    categories = list(dict.fromkeys([*tags["per_category"], *TAXONOMY]))
    for category in categories:
        entry = tags["per_category"].get(category)
        under = {t: e for t, e in tags["per_tag"].items() if e["category"] == category}
        if entry is None and not under:
            continue
        if entry is not None:
            _row(per_tag, category, entry["codings"], _alpha_cell(entry))
        for tag, tag_entry in under.items():
            _row(per_tag, f"  {tag}", tag_entry["codings"], _alpha_cell(tag_entry))
    return [summary, per_tag]

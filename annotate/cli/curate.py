"""`annotate curate COMMAND SET …`: diagnostic sets, from import to authoring, review and export.

One subcommand per mode, the set name always first after it; the TUI commands (author, review,
adjudicate) import Textual lazily.
"""

from __future__ import annotations

import difflib
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperGroup

from annotate.cli.context import ROW_ID, app, options
from annotate.cli.output import console, print_json, say, warn
from annotate.wording import count_of, shell_word

if TYPE_CHECKING:
    from annotate.workspace import Workspace

HELP = """Curate diagnostic sets: NLI pairs built by a minimal edit, labelled in both directions
and tagged with the GLUE taxonomy (4 categories, 33 tags).

\b
Every command but `sets` and `tags` takes the set name first:
  annotate curate COMMAND SET [ARGS]...
`annotate curate COMMAND --help` shows a command's options and an example."""

# The flags of the one-command interface this replaced, and the subcommand each one became:
# an old invocation gets a usage error that names the new form instead of "No such option".
_OLD_FLAGS = {
    "--create": "create",
    "--import": "import",
    "--review": "review",
    "--adjudicate": "adjudicate",
    "--list": "list",
    "--search": "list",
    "--tag": "list",
    "--label": "list",
    "--author": "list",
    "--retired": "list",
    "--show": "show",
    "--edit": "edit",
    "--retire": "retire",
    "--restore": "restore",
    "--queue": "queue",
    "--stats": "stats",
    "--export": "export",
    "--tags": "tags",
}
# Old flags whose value became the argument after SET (`--show ID` → `show SET ID`).
_VALUE_BECAME_ARGUMENT = {
    "--import": "FILE",
    "--show": "ID",
    "--edit": "ID",
    "--retire": "ID",
    "--restore": "ID",
    "--export": "PATH",
}
# Old flags that were only a mode switch; the list filters stay, as options of `list`.
_SWITCH_ONLY = {"--create", "--review", "--adjudicate", "--list", "--queue", "--stats", "--tags"}
_NEEDS_NAME = {"author", "review", "adjudicate", "edit", "retire", "restore"}


def old_style_hint(args: list[str], commands: list[str]) -> str:
    """The message for `annotate curate ARGS` when ARGS does not start with a subcommand:
    a typo gets the nearest command, the old flag style gets its new spelling."""
    first = args[0]
    if not first.startswith("-"):
        near = difflib.get_close_matches(first, commands, n=1, cutoff=0.75)
        if near:
            listed = ", ".join(commands)
            return f"{first!r} is not a command; did you mean {near[0]!r}? (commands: {listed})"
    return (
        f"{first!r} is not a command; `annotate curate` takes a command, then the set name: try "
        f"`{shlex.join(_new_spelling(args))}`"
    )


def _new_spelling(args: list[str]) -> list[str]:
    """`annotate curate SET --show 3 --format json` → `annotate curate show SET 3 --format json`:
    the mode flag becomes the command, its value the argument after SET, the rest stays."""
    set_name, rest = (args[0], args[1:]) if not args[0].startswith("-") else ("SET", args)
    flags = [arg.partition("=")[0] for arg in rest]
    mode = next((flag for flag in flags if flag in _OLD_FLAGS), None)
    if mode is not None:
        command = _OLD_FLAGS[mode]
    elif "--as" in flags:
        command = "author"  # `annotate curate SET --as NAME` opened the authoring screen
    elif set_name == "SET":
        command = "sets"  # `annotate curate [--format json]` listed the sets
    else:
        command = "stats"  # a bare `annotate curate SET` showed the statistics
    words = ["annotate", "curate", command]
    if command not in ("sets", "tags"):
        words.append(set_name)
    if mode is not None and mode in _VALUE_BECAME_ARGUMENT:
        at = flags.index(mode)
        flag, inline, value = rest[at].partition("=")
        if inline:
            rest = rest[:at] + rest[at + 1 :]
        else:
            value = next(iter(rest[at + 1 :]), _VALUE_BECAME_ARGUMENT[flag])
            rest = rest[:at] + rest[at + 2 :]
        words.append(value)
    words += [arg for arg in rest if arg not in _SWITCH_ONLY]  # one command per call
    if command in _NEEDS_NAME and "--as" not in flags:
        words += ["--as", "NAME"]
    return words


class CurateGroup(TyperGroup):
    """The curate commands; an argument list that does not start with one (a typo, or the old
    `annotate curate SET --MODE` style) gets a usage error naming the new spelling."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            hint = old_style_hint(args, list(self.commands))
            raise typer.BadParameter(hint, ctx=ctx, param_hint="COMMAND")
        return super().parse_args(ctx, args)


curate_app = typer.Typer(cls=CurateGroup, help=HELP, no_args_is_help=True)
app.add_typer(curate_app, name="curate")


def _example(line: str) -> str:
    # `\b` keeps click from re-wrapping the example (rich_markup_mode=None: plain click help).
    return f"\b\nExample:\n  {line}"


SetName = Annotated[str, typer.Argument(metavar="SET", help="The diagnostic set")]
ExampleId = Annotated[int, typer.Argument(metavar="ID", help="The example's id", **ROW_ID)]
CuratorName = Annotated[
    str | None, typer.Option("--as", metavar="NAME", help="Your curator name (recorded)")
]
OutputFormat = Annotated[str, typer.Option("--format", metavar="FORMAT", help="table or json")]
Reason = Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why (kept in the history)")]


def _output_format(fmt: str | None) -> str:
    fmt = fmt or "table"
    if fmt not in ("table", "json"):
        raise typer.BadParameter(
            "use table or json (glue|superglue go with `annotate curate export`)",
            param_hint="--format",
        )
    return fmt


def _need_name(name: str | None, command: str) -> str:
    if not name:
        raise typer.BadParameter(f"`annotate curate {command}` records who did it: add --as NAME")
    return name


def _parse_settings(settings: list[str]) -> dict[str, object]:
    from annotate.taxonomy import parse_tag_list

    changes: dict[str, object] = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {setting!r}", param_hint="--set")
        key = key.strip()
        changes[key] = parse_tag_list(value) if key == "tags" else value
    return changes


def _workspace(ctx: typer.Context, create: bool = False) -> Workspace:
    from annotate.store.curation_models import ensure_curation_tables

    ws = options(ctx).workspace(create=create)
    ensure_curation_tables(ws.engine)  # a store made before curation existed
    return ws


# --- sets as a whole ---------------------------------------------------------------------------


@curate_app.command("sets", epilog=_example("annotate curate sets --format json"))
def sets_command(ctx: typer.Context, fmt: OutputFormat = "table") -> None:
    """List the diagnostic sets with their sizes."""
    from annotate.curation.render import sets_table
    from annotate.curation.sets import set_rows

    out = _output_format(fmt)
    rows = set_rows(_workspace(ctx).engine)
    if out == "json":
        print_json(rows)
    elif not rows:
        say(
            "no curation sets yet: `annotate curate create SET` or "
            "`annotate curate import SET FILE`"
        )
    else:
        console().print(sets_table(rows))


@curate_app.command("tags", epilog=_example("annotate curate tags"))
def tags_command() -> None:
    """Print the taxonomy: 4 coarse categories, 33 tags, as spelt in the files."""
    from annotate.curation.render import taxonomy_table

    console().print(taxonomy_table())


@curate_app.command("create", epilog=_example("annotate curate create my-ax --two-way --as lea"))
def create_command(
    ctx: typer.Context,
    set_name: SetName,
    two_way: Annotated[
        bool, typer.Option("--two-way", help="entailment / not_entailment labels (AX-b)")
    ] = False,
    name: CuratorName = None,
) -> None:
    """Create an empty set (three-way labels unless --two-way)."""
    from annotate.curation.sets import create_set

    scheme = "two-way" if two_way else "three-way"
    engine = _workspace(ctx, create=True).engine
    info = create_set(engine, set_name, scheme=scheme, created_by=name or "")
    say(f"set {info.name!r} created ({', '.join(info.labels)})")


@curate_app.command("import", epilog=_example("annotate curate import diag diagnostic-full.tsv"))
def import_command(
    ctx: typer.Context,
    set_name: SetName,
    path: Annotated[Path, typer.Argument(metavar="FILE", help="diagnostic-full.tsv or AX-b.jsonl")],
    name: CuratorName = None,
    fmt: OutputFormat = "table",
) -> None:
    """Import diagnostic-full.tsv or AX-b.jsonl as content (creates SET; a file already in it
    is skipped, and so are pairs already in the set)."""
    from annotate.curation.importing import import_diagnostic

    out = _output_format(fmt)
    summary = import_diagnostic(_workspace(ctx, create=True).engine, set_name, path, name or "")
    if out == "json":
        print_json(summary.__dict__)
    elif summary.already_imported:
        warn(f"{path}: already imported into set {set_name!r} (same sha256); skipped")
    else:
        skipped = (
            f"{count_of(summary.skipped, 'example')} "
            f"({count_of(summary.skipped_pairs, 'pair')}) skipped: already in the set"
        )
        if not summary.rows:
            warn(f"{path}: nothing imported into set {set_name!r}; {skipped}")
            return
        labels = ", ".join(f"{n} {label}" for label, n in summary.labels.items())
        created = " (new set)" if summary.created else ""
        say(
            f"set {set_name!r}{created}: {count_of(summary.rows, 'example')} "
            f"({count_of(summary.pairs, 'pair')}; "
            f"{labels}) imported from {path}" + (f"; {skipped}" if summary.skipped else "")
        )


# --- the screens -------------------------------------------------------------------------------

AUTHOR_HELP = """Write new pairs in the terminal (TUI).

\b
Tab moves between fields; labels with 1/2/3 or e/n/c; in the tag filter, type and press Enter
to toggle the best match (↓ into the list, Space toggles); Ctrl+S saves, Ctrl+R clears,
Ctrl+O starts from an example, Ctrl+Q quits (all three ask first when a pair is
half-written). --from ID (or Ctrl+O) fills the form with an example's sentences, tags and
domain, to edit into a new pair; the labels are left for you to give. A pair needs both
sentences (different, not already in the set), both directions labelled and at least one
tag; more than 40% of words changed gets a warning. Pasted line breaks are joined with a space."""

REVIEW_HELP = """Give blind second opinions on others' examples (TUI).

You see only the sentences, never the author's labels or tags. New and changed work comes
first (pairs written in the tool, or whose sentences were edited: newest first), then the
imported examples with the fewest reviews. Ctrl+N skips an example: it goes to the back of
your queue, next time too; Ctrl+Q quits (asking first when a label, tag or note is not yet
submitted). --author, --since and --tag narrow the queue."""

ADJUDICATE_HELP = """Settle the disagreements you may settle (TUI).

A disagreement is settled by someone who neither wrote nor reviewed the example; its author
only with --override REASON (recorded with the decision). History is kept."""


@curate_app.command(
    "author", help=AUTHOR_HELP, epilog=_example("annotate curate author diag --as lea --from 12")
)
def author_command(
    ctx: typer.Context,
    set_name: SetName,
    name: CuratorName = None,
    start_from: Annotated[
        int | None,
        typer.Option(
            "--from",
            metavar="ID",
            help="Start from this example (its sentences and tags; not its labels)",
            **ROW_ID,
        ),
    ] = None,
) -> None:
    _run_tui(ctx, set_name, _need_name(name, "author"), start_from=start_from)


@curate_app.command(
    "review",
    help=REVIEW_HELP,
    epilog=_example("annotate curate review diag --as sam --author lea --since 2026-12-01"),
)
def review_command(
    ctx: typer.Context,
    set_name: SetName,
    name: CuratorName = None,
    author: Annotated[
        str | None, typer.Option("--author", metavar="NAME", help="Only examples by this curator")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="DATE",
            help="Only examples written or edited on or after DATE (YYYY-MM-DD, UTC)",
        ),
    ] = None,
    tag: Annotated[
        str | None,
        typer.Option("--tag", metavar="TAG", help="Only examples with this tag or category"),
    ] = None,
) -> None:
    from annotate.curation.curators import known_curator
    from annotate.curation.review import ReviewFilter, review_progress

    wanted = ReviewFilter(author=author, since=_parse_since(since), tag=_checked_tag(tag))
    reviewer = _need_name(name, "review")
    engine = _workspace(ctx).engine
    if review_progress(engine, set_name, reviewer, wanted).remaining == 0:
        # No screen to open: the set's examples by others all have this reviewer's opinion,
        # or none of them matches the filter. Said as the screen would say it.
        who = known_curator(engine, reviewer)
        narrowed = wanted.words()
        which = f"among examples {narrowed} (your filter)" if narrowed else "by others"
        say(f"{who}: nothing to review in set {set_name!r} {which}; no screen opened.")
        return
    _run_tui(ctx, set_name, reviewer, review=True, wanted=wanted, engine=engine)


def _parse_since(value: str | None):  # -> datetime | None
    from datetime import UTC, datetime

    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not a date; use YYYY-MM-DD (or YYYY-MM-DDTHH:MM)", param_hint="--since"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _checked_tag(tag: str | None) -> str | None:
    from annotate.taxonomy import resolve_category, resolve_tag

    if tag is not None and resolve_category(tag) is None:
        resolve_tag(tag)  # an unknown tag is a UserError naming it
    return tag


@curate_app.command(
    "adjudicate", help=ADJUDICATE_HELP, epilog=_example("annotate curate adjudicate diag --as kim")
)
def adjudicate_command(
    ctx: typer.Context,
    set_name: SetName,
    name: CuratorName = None,
    override: Annotated[
        str | None,
        typer.Option(
            "--override",
            metavar="REASON",
            help="Settle your own examples too; REASON (why nobody else can) is recorded",
        ),
    ] = None,
) -> None:
    if override is not None and not override.strip():
        raise typer.BadParameter("say why you settle your own examples", param_hint="--override")
    _run_tui(
        ctx,
        set_name,
        _need_name(name, "adjudicate"),
        adjudicate=True,
        override_reason=override or "",
    )


def _run_tui(
    ctx: typer.Context,
    set_name: str,
    name: str,
    review: bool = False,
    adjudicate: bool = False,
    wanted=None,  # ReviewFilter | None (imported lazily)
    override_reason: str = "",
    start_from: int | None = None,
    engine=None,  # Engine | None: the store, when the command has opened it already
) -> None:
    # Textual costs ~0.3 s to import: only the screen commands pay for it.
    from annotate.tui.curate.app import create_curate_app

    engine = engine or _workspace(ctx).engine
    tui = create_curate_app(
        engine,
        set_name,
        name,
        review=review,
        adjudicate=adjudicate,
        wanted=wanted,
        override_reason=override_reason,
        start_from=start_from,
    )
    tui.run()
    say(tui.summary())


# --- examples ----------------------------------------------------------------------------------


@curate_app.command("list", epilog=_example("annotate curate list diag --tag Negation"))
def list_command(
    ctx: typer.Context,
    set_name: SetName,
    search: Annotated[
        str | None,
        typer.Option("--search", metavar="TEXT", help="Text in premise, hypothesis or note"),
    ] = None,
    tag: Annotated[
        str | None,
        typer.Option("--tag", metavar="TAG", help="A fine tag or a coarse category"),
    ] = None,
    label: Annotated[
        str | None, typer.Option("--label", metavar="LABEL", help="A label of the set")
    ] = None,
    author: Annotated[
        str | None, typer.Option("--author", metavar="NAME", help="Examples by this curator")
    ] = None,
    retired: Annotated[
        bool, typer.Option("--retired", help="List retired examples instead")
    ] = False,
    fmt: OutputFormat = "table",
) -> None:
    """List the examples, filtered by text, tag, label or author."""
    from annotate.curation.examples import ExampleQuery, find_examples
    from annotate.curation.render import examples_table

    out = _output_format(fmt)
    query = ExampleQuery(text=search, tag=tag, label=label, author=author, retired=retired)
    found = find_examples(_workspace(ctx).engine, set_name, query)
    if out == "json":
        print_json([e.as_dict() for e in found])
        return
    what = ("retired " if retired else "") + ("example" if len(found) == 1 else "examples")
    console().print(examples_table(found, f"{len(found)} {what} in {set_name}"))


@curate_app.command("show", epilog=_example("annotate curate show diag 3"))
def show_command(
    ctx: typer.Context, set_name: SetName, example_id: ExampleId, fmt: OutputFormat = "table"
) -> None:
    """Show one example with its history, its reviews and how any disagreement was settled."""
    from annotate.curation.examples import example_history, get_example
    from annotate.curation.render import example_tables
    from annotate.curation.review import example_decisions, example_reviews

    out = _output_format(fmt)
    engine = _workspace(ctx).engine
    example = get_example(engine, set_name, example_id)
    history = example_history(engine, set_name, example_id)
    reviews = example_reviews(engine, set_name, example_id)
    decisions = example_decisions(engine, set_name, example_id)
    if out == "json":
        print_json(
            {
                "example": example.as_dict(),
                "history": history,
                "reviews": [r.as_dict() for r in reviews],
                "decisions": [d.as_dict() for d in decisions],
            }
        )
        return
    for table in example_tables(example, history, reviews, decisions):
        console().print(table)


@curate_app.command(
    "edit",
    epilog=_example(
        'annotate curate edit diag 3 --as lea --set label=neutral --set "tags=Negation;Quantifiers"'
    ),
)
def edit_command(
    ctx: typer.Context,
    set_name: SetName,
    example_id: ExampleId,
    name: CuratorName = None,
    settings: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY=VALUE",
            help='Repeatable; KEY: premise, hypothesis, label, tags (as "A;B"), domain, note',
        ),
    ] = None,
    reason: Reason = "",
    fmt: OutputFormat = "table",
) -> None:
    """Change an example (a new version; the old one stays in the history). The reverse
    direction of its pair changes with it (sentences swapped, same tags, domain and note; its
    own label stays). When the sentences change, reviews of the old ones stop counting and a
    label not given again is flagged "to check"; --set label=... confirms it."""
    from annotate.curation.examples import edit_example, get_example, partner_of

    out = _output_format(fmt)
    by = _need_name(name, "edit")
    if not settings:
        raise typer.BadParameter("say what to change: --set KEY=VALUE", param_hint="--set")
    engine = _workspace(ctx).engine
    old = get_example(engine, set_name, example_id)
    before = partner_of(engine, set_name, example_id)
    partner_before = before.version if before is not None else None
    example = edit_example(engine, set_name, example_id, by, _parse_settings(settings), reason)
    partner = partner_of(engine, set_name, example.id)
    if out == "json":
        print_json(example.as_dict())
        return
    moved = (old.premise, old.hypothesis) != (example.premise, example.hypothesis)
    say(f"example {example.id} is at version {example.version}{_to_check(example, moved)}")
    if partner is not None and partner.version != partner_before:
        say(
            f"its reverse, example {partner.id}, changed with it (version {partner.version})"
            + _to_check(partner, moved)
        )


def _to_check(example, sentences_changed: bool) -> str:  # ExampleView
    """Why the example's label is to check: this edit changed its sentences, or an earlier
    one did and no label has been given since (a note's edit did not flag it)."""
    if not example.label_unchecked:
        return ""
    if sentences_changed:
        return "; its label is flagged to check (the sentences changed)"
    return (
        "; its label is still to check (its sentences changed in an earlier version; "
        "--set label=... confirms it)"
    )


@curate_app.command(
    "retire", epilog=_example('annotate curate retire diag 3 --as lea --reason "duplicate"')
)
def retire_command(
    ctx: typer.Context,
    set_name: SetName,
    example_id: ExampleId,
    name: CuratorName = None,
    reason: Reason = "",
) -> None:
    """Retire an example and the reverse direction of its pair: never deleted, `annotate curate
    restore` brings them back."""
    _set_retired(ctx, set_name, example_id, _need_name(name, "retire"), True, reason)


@curate_app.command("restore", epilog=_example("annotate curate restore diag 3 --as lea"))
def restore_command(
    ctx: typer.Context,
    set_name: SetName,
    example_id: ExampleId,
    name: CuratorName = None,
    reason: Reason = "",
) -> None:
    """Bring a retired example (and the reverse direction of its pair) back."""
    _set_retired(ctx, set_name, example_id, _need_name(name, "restore"), False, reason)


def _set_retired(
    ctx: typer.Context, set_name: str, example_id: int, by: str, retire: bool, reason: str
) -> None:
    from annotate.curation.examples import partner_of, set_retired

    engine = _workspace(ctx).engine
    example = set_retired(engine, set_name, example_id, by, retire, reason)
    partner = partner_of(engine, set_name, example_id)
    both = f" and its reverse, example {partner.id}," if partner is not None else ""
    if retire:
        again = f"annotate curate restore {set_name} {example.id}"
        state = f"retired (kept in the store; `{again}` brings it back)"
    else:
        state = "active again"
    say(f"example {example.id}{both} {state}")


# --- review state, statistics, export ----------------------------------------------------------


@curate_app.command("queue", epilog=_example("annotate curate queue diag --format json"))
def queue_command(ctx: typer.Context, set_name: SetName, fmt: OutputFormat = "table") -> None:
    """Show the disagreement queue."""
    from annotate.curation.render import queue_table
    from annotate.curation.review import disagreement_queue

    out = _output_format(fmt)
    entries = disagreement_queue(_workspace(ctx).engine, set_name)
    if out == "json":
        print_json(
            [
                {
                    "example": e.example.as_dict(),
                    "disputed": e.disputed,
                    "opinions": [o.__dict__ for o in e.opinions],
                }
                for e in entries
            ]
        )
        return
    console().print(
        queue_table(entries, f"{count_of(len(entries), 'open disagreement')} in {set_name}")
    )


@curate_app.command("stats", epilog=_example("annotate curate stats diag"))
def stats_command(ctx: typer.Context, set_name: SetName, fmt: OutputFormat = "table") -> None:
    """Counts per category and tag, labels, domains, review coverage and agreement."""
    from annotate.curation.render import stats_tables
    from annotate.curation.stats import set_statistics

    out = _output_format(fmt)
    stats = set_statistics(_workspace(ctx).engine, set_name)
    if out == "json":
        print_json(stats)
        return
    for table in stats_tables(stats):
        console().print(table)


EXPORT_HELP = """Write the active examples in the original layout.

GLUE: CRLF TSV, tags in their category columns (diagnostic-full.tsv); SuperGLUE: AX-b JSON
lines, two-way labels. Import the file back with `annotate import glue/ax PATH --split test`
(or superglue/axb) to run a human study on it."""


@curate_app.command(
    "export",
    help=EXPORT_HELP,
    epilog=_example("annotate curate export diag new-ax.jsonl --format superglue"),
)
def export_command(
    ctx: typer.Context,
    set_name: SetName,
    path: Annotated[Path, typer.Argument(metavar="PATH", help="The file to write")],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="glue or superglue (default: glue for three-way labels, else superglue)",
        ),
    ] = None,
) -> None:
    from annotate.curation.export import export_set

    if fmt is not None and fmt not in ("glue", "superglue"):
        raise typer.BadParameter(f"{fmt!r}: export writes glue or superglue", param_hint="--format")
    summary = export_set(_workspace(ctx).engine, set_name, path, fmt)
    say(
        f"{count_of(summary.rows, 'example')} of set {set_name!r} written to {path} "
        f"({summary.format} "
        f"layout); to run a human study on them: annotate import {summary.task} {path} "
        "--split test"
    )
    # The file holds one label per example: a disputed or unchecked one goes out as it stands.
    if summary.open_disagreements:
        warn(
            f"{count_of(summary.open_disagreements, 'example')} written while a review disputes "
            "its label or tags, not settled yet "
            f"(`annotate curate queue {shell_word(set_name)}` lists them)"
        )
    if summary.unchecked_labels:
        warn(
            f'{count_of(summary.unchecked_labels, "example")} written with a label "to check" '
            "(its sentences were edited since; "
            f"`annotate curate list {shell_word(set_name)}` marks them)"
        )

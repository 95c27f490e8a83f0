"""One or more examples at the foot of every command's --help, kept in one table.

`attach(app)` writes them into the Typer app's command infos before click builds the commands.
A command that sets its own `epilog` (the curation commands do) keeps it. A test checks that
every command's help ends with an example, so a new command needs its line here.
"""

from __future__ import annotations

import typer
from typer.main import get_command_name

EXAMPLES: dict[str, list[str]] = {
    "": ["annotate demo --simulate", "annotate --db study.db status rte-2026"],
    "migrate": ["annotate --db study.db migrate", "annotate --db study.db migrate --format json"],
    "backup": ["annotate backup copy.db", "annotate --db study.db backup /mnt/usb/study-copy.db"],
    "check": ["annotate --db study.db check"],
    "serve": ["annotate serve rte-2026", "annotate serve --console rte-2026"],
    "console": ["annotate console", "annotate console rte-2026"],
    "init": ["annotate init", "annotate --db postgresql+psycopg://lab@db-host/annotate init"],
    "tasks": ["annotate tasks", "annotate tasks --format json"],
    "protocols": ["annotate protocols"],
    "import": [
        "annotate import superglue/rte ~/data/RTE",
        "annotate import SST-2 ~/glue_data/SST-2/dev.tsv",
        "annotate import superglue/cb super_glue",
        "annotate import superglue/cb cb.jsonl --split validation "
        "--label-names entailment,contradiction,neutral",
        "annotate import examples/toy/toy.toml examples/toy/dev.jsonl --split dev --map text=title",
    ],
    "import-labels": [
        "annotate import-labels crowd.csv --task superglue/rte --study rte-crowd "
        "--map item=pair,annotator=worker,label=answer --values 'entailment=yes,not_entailment=no'"
    ],
    "datasets": ["annotate datasets", "annotate datasets --format json"],
    "demo": ["annotate demo", "annotate demo --simulate --dir demo-run"],
    "export": [
        "annotate export rte-2026 --to out --format superglue --zip",
        "annotate export rte-2026 --to out --format labels --summary json",
        "annotate export --benchmark superglue --to out --fill-from preds/",
    ],
    "label": ["annotate label rte-2026 --as ana"],
    "plan": [
        "annotate plan --task superglue/rte --accuracy 0.85 --k 5 --half-width 0.03",
        "annotate plan --pilot rte-pilot --half-width 0.03 --set hourly_rate=23.75",
    ],
    "report": [
        "annotate report rte-2026",
        "annotate report rte-2026 --format html > rte.html",
        "annotate report --benchmark superglue --model preds/roberta --format latex",
        "annotate report --schema > report-schema.json",
    ],
    "agreement": ["annotate agreement labels.csv --level ordinal"],
    "score": ["annotate score out/RTE.jsonl --gold ~/data/RTE/val.jsonl"],
    "compare": ["annotate compare rte-2026 --model preds/roberta/RTE.jsonl"],
    "gate": [
        "annotate gate rte-2026",
        "annotate gate rte-2026 --close",
        'annotate gate rte-2026 --admit ana --reason "trained in person"',
    ],
    "status": ["annotate status rte-2026", "annotate status rte-2026 --format json"],
    "flags": [
        "annotate flags rte-2026",
        'annotate flags rte-2026 --exclude 17 --reason "the premise is truncated"',
    ],
    "simulate": ["annotate simulate rte-2026 --annotators 10 --accuracy 0.85 --close-gate"],
    "pay": [
        "annotate pay rte-prolific --hourly-rate 12 --base-pay 2 --format prolific --to bonus.csv"
    ],
    "survey": ["annotate survey rte-prolific --to survey.csv"],
    "study crowd": ["annotate study crowd rte-prolific --url https://annotate.example.org/"],
    "prolific": ["annotate prolific status rte-prolific"],
    "prolific create": [
        "annotate prolific create rte-prolific --url https://annotate.example.org/ "
        "--hourly-rate 12 --pilot rte-pilot"
    ],
    "prolific publish": ["annotate prolific publish rte-prolific --part training"],
    "prolific pause": ["annotate prolific pause rte-prolific --part training"],
    "prolific start": ["annotate prolific start rte-prolific --part test"],
    "prolific stop": ["annotate prolific stop rte-prolific --part test"],
    "prolific group": ["annotate prolific group rte-prolific"],
    "prolific sync": [
        "annotate prolific sync rte-prolific",
        'annotate prolific sync rte-prolific --reject w07 --reason "…at least 100 characters…"',
    ],
    "prolific pay": [
        "annotate prolific pay rte-prolific --hourly-rate 12",
        "annotate prolific pay rte-prolific --hourly-rate 12 --yes",
    ],
    "prolific status": ["annotate prolific status rte-prolific --format json"],
    "annotator show": ["annotate annotator show w01"],
    "curate": ["annotate curate import diag diagnostic-full.tsv", "annotate curate stats diag"],
    "study": ["annotate study list"],
    "study create": [
        "annotate study create rte-2026 --task superglue/rte --protocol superglue-2019 "
        "--train val --test test",
        "annotate study create t2 --task examples/toy/toy.toml --protocol quick --set seed=3",
    ],
    "study list": ["annotate study list", "annotate study list --format json"],
    "study show": ["annotate study show rte-2026"],
    "annotator": ["annotate annotator add ana --token"],
    "annotator add": ["annotate annotator add ana", "annotate annotator add ana --token"],
    "annotator token": [
        "annotate annotator token ana",
        "annotate annotator token ana --format json",
    ],
    "annotator list": ["annotate annotator list"],
}
"""Command path (`""` is `annotate` itself) -> example command lines."""


def epilog(lines: list[str]) -> str:
    # `\b` keeps click from re-wrapping the lines (rich_markup_mode=None: plain click help).
    heading = "Example:" if len(lines) == 1 else "Examples:"
    return "\b\n" + heading + "\n" + "\n".join(f"  {line}" for line in lines)


def attach(app: typer.Typer, prefix: str = "") -> None:
    """Give every command of `app` (and of its groups) its examples, unless it has its own."""
    if prefix in EXAMPLES and not app.info.epilog:
        app.info.epilog = epilog(EXAMPLES[prefix])
    for info in app.registered_commands:
        name = info.name or get_command_name(info.callback.__name__)
        path = f"{prefix} {name}".strip()
        if path in EXAMPLES and not info.epilog:
            info.epilog = epilog(EXAMPLES[path])
    for group in app.registered_groups:
        path = f"{prefix} {group.name}".strip()
        if path in EXAMPLES and not group.epilog:
            group.epilog = epilog(EXAMPLES[path])
        attach(group.typer_instance, path)

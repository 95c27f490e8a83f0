"""MkDocs hook: docs/report-schema.md shows the JSON Schema of `annotate report --format json`,
generated from the report's models when the site is built (`annotate report --schema` prints
the same schema), so the page cannot drift from what the report writes.

docs/report-schema.md holds the introduction and the line `<!-- schema -->`, which this hook
replaces with one table per object of the report and the schema itself.
`python docs/hooks/report_schema.py` prints the generated Markdown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

MARKER = "<!-- schema -->"
PAGE = "report-schema.md"
ROOTS = ("StudyReport", "BenchmarkReport")


def _refs(node: Any) -> list[str]:
    """The definitions `node` refers to, in the order they appear."""
    if isinstance(node, dict):
        found = [node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else []
        return found + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def _order(definitions: dict[str, Any]) -> list[str]:
    """The report's objects from the top down, each where it is first met."""
    seen: list[str] = []
    queue = list(ROOTS)
    while queue:
        name = queue.pop(0)
        if name not in seen:
            seen.append(name)
            queue += _refs(definitions[name])
    return seen + sorted(set(definitions) - set(seen))


def _type(node: dict[str, Any]) -> str:
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in node:
        return " or ".join(_type(n) for n in node["anyOf"])
    kind = node.get("type")
    if kind == "array":
        return f"list of {_type(node.get('items', {}))}"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"object of {_type(node['additionalProperties'])}"
    return kind or "any"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def markdown() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from annotate.report.model.schema import report_schema

    schema = report_schema()
    definitions = schema["definitions"]
    parts = []
    for name in _order(definitions):
        node = definitions[name]
        rows = [
            f"| `{key}` | {_type(prop)} | {'yes' if key in node.get('required', []) else ''} "
            f"| {_cell(prop.get('description', ''))} |"
            for key, prop in node.get("properties", {}).items()
        ]
        intro = _cell(node.get("description", ""))
        parts.append(
            f"### {name}\n\n"
            + (f"{intro}\n\n" if intro else "")
            + "| Key | Type | Always written | Meaning |\n|---|---|---|---|\n"
            + "\n".join(rows)
            + "\n"
        )
    text = json.dumps(schema, indent=2, ensure_ascii=False)
    parts.append(f"## The schema\n\n```json\n{text}\n```\n")
    return "\n".join(parts)


def on_page_markdown(text: str, page, config, files) -> str:  # MkDocs' hook signature
    if page.file.src_uri == PAGE:
        if MARKER not in text:
            raise ValueError(f"docs/{PAGE} lost its {MARKER} line")
        return text.replace(MARKER, markdown())
    return text


if __name__ == "__main__":
    sys.stdout.write(markdown())

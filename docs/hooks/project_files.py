"""MkDocs hook: the Changelog and Citation pages show the repository's own CHANGELOG.md and
CITATION.cff when the site is built, so the site and the files cannot differ.

docs/changelog.md and docs/citation.md each hold a short introduction and a marker line that
this hook replaces: the changelog's text (its title dropped: the page has its own), and the
citation file with the BibTeX entry cffconvert makes from it.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHANGELOG_MARKER = "<!-- changelog -->"
CITATION_MARKER = "<!-- citation -->"


def changelog() -> str:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return text.split("\n", 1)[1].lstrip() if text.startswith("# ") else text


def citation() -> str:
    from cffconvert.cli.create_citation import create_citation

    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    bibtex = create_citation(str(ROOT / "CITATION.cff"), None).as_bibtex(reference="annotate")
    return (
        f"BibTeX:\n\n```bibtex\n{bibtex.strip()}\n```\n\n"
        "The repository's `CITATION.cff` (Citation File Format 1.2):\n\n"
        f"```yaml\n{cff.strip()}\n```\n"
    )


def on_page_markdown(text: str, page, config, files) -> str:  # MkDocs' hook signature
    for uri, marker, fill in (
        ("changelog.md", CHANGELOG_MARKER, changelog),
        ("citation.md", CITATION_MARKER, citation),
    ):
        if page.file.src_uri == uri:
            if marker not in text:
                raise ValueError(f"docs/{uri} lost its {marker} line")
            return text.replace(marker, fill())
    return text

"""The page's Jinja environment."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).parent / "templates"


@cache
def environment() -> jinja2.Environment:
    """The page's templates, autoescaped whatever their names: all text is HTML-escaped."""
    from annotate.protocol.flags import COMMENT_MAX_CHARS
    from annotate.wording import seconds

    templates = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, auto_reload=False
    )
    templates.globals["comment_max_chars"] = COMMENT_MAX_CHARS
    templates.filters["seconds"] = seconds  # "5 seconds", as the terminal app says it
    return templates


def compiled() -> jinja2.Environment:
    """The environment with every template compiled now, not by the first arrivals of a
    burst."""
    templates = environment()
    for name in templates.list_templates(extensions=["html"]):
        templates.get_template(name)
    return templates

"""What textual-serve runs for each browser tab: `python -m annotate.web.session STUDY
[--as NAME]`, on the store named by ANNOTATE_DB (set by `annotate serve`)."""

from __future__ import annotations

import argparse
import logging
import sys

from annotate.errors import UserError
from annotate.settings import settings
from annotate.text import terminal_safe
from annotate.workspace import open_workspace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m annotate.web.session")
    parser.add_argument("study")
    parser.add_argument("--as", dest="annotator", default=None)
    args = parser.parse_args(argv)
    from annotate.web.app import WebLabelApp

    log_to_the_server()
    try:
        ws = open_workspace()
        required = settings().serve_tokens == "required"
        app = WebLabelApp(ws.engine, args.study, args.annotator, require_token=required)
    except UserError as exc:
        print(f"error: {terminal_safe(str(exc))}", file=sys.stderr)
        return 1
    app.run()
    return 0


def log_to_the_server() -> None:
    """Send this tab's log (its refused sign-ins) to the process's own stderr, which
    textual-serve passes to the server's output when the tab ends. While the app runs Textual
    takes sys.stderr for itself, and a warning written there never reached the server's log."""
    handler = logging.StreamHandler(sys.__stderr__)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("annotate.serve")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


if __name__ == "__main__":
    sys.exit(main())

"""What textual-serve runs for each tab of `annotate serve --console`: `python -m
annotate.web.console [STUDY] [--as NAME]`, on the store named by ANNOTATE_DB."""

from __future__ import annotations

import argparse
import sys

from annotate.errors import UserError
from annotate.text import terminal_safe
from annotate.workspace import open_workspace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m annotate.web.console")
    parser.add_argument("study", nargs="?", default=None)
    parser.add_argument("--as", dest="researcher", default=None)
    args = parser.parse_args(argv)
    from annotate.tui.console.app import create_console_app

    try:
        ws = open_workspace()
        app = create_console_app(ws.engine, args.study, researcher=args.researcher)
    except UserError as exc:
        print(f"error: {terminal_safe(str(exc))}", file=sys.stderr)
        return 1
    app.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a crashed screen leaves behind: a traceback without local variables (Textual shows
them by default: a typed token, a store password) and with connection URLs' passwords
redacted. Mixed into every app of the package (annotator, console, curator, web page)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from annotate.text import redacted, terminal_safe


class SafeCrash:
    """Overrides Textual's fatal-error report (App._fatal_error) for the apps below."""

    def _fatal_error(self) -> None:
        import rich
        from rich.traceback import Traceback

        self.bell()  # type: ignore[attr-defined]
        out = io.StringIO()
        Console(file=out, width=100, color_system=None, legacy_windows=False).print(
            Traceback(show_locals=False, width=100, suppress=[rich])
        )
        self._exit_renderables.append(  # type: ignore[attr-defined]
            Text(terminal_safe(redacted(out.getvalue())))
        )
        self._close_messages_no_wait()  # type: ignore[attr-defined]

"""A researcher console, open on a study, in a process of its own (for bench_console): the real
app, headless, polling the store at its real interval. It prints "ready" once the study screen
shows its first data, runs until its stdin closes, then prints what it did as JSON.

    python -m bench.console_worker DB_URL STUDY
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time


async def run(url: str, study: str) -> dict:
    from annotate.tui.console.app import create_console_app
    from annotate.tui.console.screens.study import StudyScreen
    from annotate.workspace import open_workspace

    engine = open_workspace(url).engine
    app = create_console_app(engine, study)
    polls: list[float] = []
    check = app.check_for_changes

    def timed_check() -> None:
        start = time.perf_counter()
        check()
        polls.append(time.perf_counter() - start)

    app.check_for_changes = timed_check  # type: ignore[method-assign]
    async with app.run_test(size=(160, 50)) as pilot:
        while not (isinstance(app.screen, StudyScreen) and app.screen.loaded):
            await pilot.pause(0.05)  # the first full read of the study
        screen = app.screen
        loads_before = screen.loads
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        return {
            "polls": len(polls),
            "poll_ms_median": 1000 * statistics.median(polls) if polls else None,
            "reloads": screen.loads - loads_before,
            "labels_on_screen": screen.progress.labels_total if screen.progress else None,
        }


def main() -> None:
    url, study = sys.argv[1], sys.argv[2]
    print(json.dumps(asyncio.run(run(url, study))), flush=True)


if __name__ == "__main__":
    main()

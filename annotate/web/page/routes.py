"""Every URL of the page, in one table."""

from __future__ import annotations

from starlette.routing import BaseRoute, Route

from annotate.web.page import consent, entry, items, static


def routes() -> list[BaseRoute]:
    return [
        Route("/", entry.index),
        Route("/screen", entry.screen),
        Route("/signin", entry.sign_in, methods=["POST"]),
        Route("/start", entry.start, methods=["POST"]),
        Route("/answer", items.answer, methods=["POST"]),
        Route("/revise", items.revise),
        Route("/quit", consent.quit_, methods=["POST"]),
        Route("/consent", consent.consent, methods=["POST"]),
        Route("/reclaim", items.reclaim, methods=["POST"]),
        Route("/survey", consent.survey, methods=["POST"]),
        Route("/favicon.ico", static.favicon),
        static.static_files(),
    ]

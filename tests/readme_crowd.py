"""Prolific workers for the docs' crowd recipe (its hidden setup blocks run this): they arrive
by the study's link, consent, and answer at about the accuracy asked for, right or wrong by a
seeded draw against the stored gold (never shown to their sessions).

    python -m tests.readme_crowd STUDY training|test --workers N [--accuracy 0.85]
"""

from __future__ import annotations

import argparse
import random

from annotate.protocol import crowd
from annotate.protocol.session import AnnotatorSession
from annotate.workspace import open_workspace
from tests.crowd_helpers import gold, prolific_query, wrong


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("study")
    parser.add_argument("phase", choices=["training", "test"])
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--accuracy", type=float, default=0.85)
    args = parser.parse_args()
    engine = open_workspace().engine
    ctx = crowd.load_study(engine, args.study)
    config = crowd.require_config(ctx)
    study_id = config.training_study_id if args.phase == "training" else config.test_study_id
    rng = random.Random(7)
    for n in range(1, args.workers + 1):
        skill = min(1.0, rng.gauss(args.accuracy, 0.06))
        entry = crowd.parse_link(ctx, prolific_query(n, study_id))
        arrival = crowd.enter_by_link(engine, args.study, entry)
        if crowd.needs_consent(engine, args.study, arrival.annotator):
            crowd.record_consent(engine, args.study, arrival.annotator, True)
        session = AnnotatorSession.open(engine, args.study, arrival.annotator)
        session.attach_window(arrival.visit_id)
        while (item := session.next_item()) is not None and item.phase in ("training", "test"):
            if item.phase != args.phase:
                break
            truth = gold(engine, item)
            session.submit(item, truth if rng.random() < skill else wrong(truth))
        if crowd.peek_exit(engine, args.study, arrival.annotator) is not None:
            if crowd.survey_due(engine, args.study, arrival.annotator):
                crowd.record_survey(engine, args.study, arrival.annotator, {})
            crowd.exit_for(engine, args.study, arrival.annotator)


if __name__ == "__main__":
    main()

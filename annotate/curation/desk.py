"""One curator at one set: the calls the curation screens make, in one object.

The screens never touch the store themselves, and in review mode they can only ask for a
`BlindExample`, which carries no label or tags to show.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import Engine

from annotate.curation import review
from annotate.curation.curators import known_curator
from annotate.curation.examples import (
    ExampleQuery,
    ExampleView,
    find_examples,
    save_pair,
    starting_example,
)
from annotate.curation.review import BlindExample, QueueEntry, ReviewFilter, ReviewProgress
from annotate.curation.sets import SetInfo, load_set
from annotate.curation.validation import PairDraft, curator_name
from annotate.taxonomy import DOMAINS


class CurationDesk:
    def __init__(
        self,
        engine: Engine,
        info: SetInfo,
        curator: str,
        wanted: ReviewFilter | None = None,
        override_reason: str = "",
    ) -> None:
        self.engine = engine
        self.info = info
        self.curator = curator
        self.wanted = wanted or ReviewFilter()
        """Which examples the reviewer asked for (--author, --since, --tag)."""
        self.override_reason = override_reason.strip()
        """Why this curator settles their own examples too (--override); empty: they do not."""

    @classmethod
    def open(
        cls,
        engine: Engine,
        set_name: str,
        curator: str,
        wanted: ReviewFilter | None = None,
        override_reason: str = "",
    ) -> CurationDesk:
        """Raises UserError when the set does not exist or no curator name is given."""
        name = curator_name(curator)
        info = load_set(engine, set_name)
        # "LÉA" works as "Léa" when that is how her name was first recorded: shown so, too.
        return cls(engine, info, known_curator(engine, name), wanted, override_reason)

    @property
    def labels(self) -> tuple[str, ...]:
        return self.info.labels

    def domains(self) -> list[str]:
        """The GLUE domains and any other domain the set already uses (for suggestions)."""
        used = {e.domain for e in find_examples(self.engine, self.info.name, ExampleQuery())}
        return sorted(set(DOMAINS) | {d for d in used if d})

    # authoring
    def save_pair(self, draft: PairDraft) -> tuple[ExampleView, ExampleView]:
        return save_pair(self.engine, self.info.name, self.curator, draft)

    def starting_point(self, example_id: int) -> ExampleView:
        """An active example of the set to start a new pair from (UserError naming it if not)."""
        return starting_example(self.engine, self.info.name, example_id)

    # reviewing
    def next_blind(self, skip: Collection[int] = ()) -> BlindExample | None:
        return review.next_for_review(self.engine, self.info.name, self.curator, skip, self.wanted)

    def next_with_progress(
        self, skip: Collection[int] = ()
    ) -> tuple[BlindExample | None, ReviewProgress]:
        """`next_blind` and `review_progress` from one read of the set."""
        return review.next_with_progress(
            self.engine, self.info.name, self.curator, skip, self.wanted
        )

    def review_progress(self) -> ReviewProgress:
        return review.review_progress(self.engine, self.info.name, self.curator, self.wanted)

    def skip_review(self, example_id: int) -> None:
        """Pass over an example: it waits at the back of this reviewer's queue, next time too."""
        review.skip_for_review(self.engine, self.info.name, self.curator, example_id)

    def pair_tagged_with(self, example_id: int) -> int | None:
        """The example whose review by this curator already tagged this one's pair."""
        return review.pair_tags_reviewed(self.engine, self.info.name, self.curator, example_id)

    def blind(self, example_id: int) -> BlindExample | None:
        """The example as it is now, if it is still this reviewer's to review."""
        return review.blind_example(self.engine, self.info.name, self.curator, example_id)

    def submit_review(
        self, example: BlindExample, label: str | None, tags: Sequence[str], note: str = ""
    ) -> None:
        """Review the example as the screen showed it (`review.ExampleChanged` when its
        sentences changed since)."""
        review.submit_review(
            self.engine,
            self.info.name,
            self.curator,
            example.id,
            label,
            tags,
            note,
            version=example.version,
        )

    # adjudicating
    def queue(self) -> list[QueueEntry]:
        return review.disagreement_queue(
            self.engine, self.info.name, self.curator, override=bool(self.override_reason)
        )

    def queue_entry(self, example_id: int) -> QueueEntry | None:
        """The example's open disagreement as it stands now, if this curator may settle it."""
        return next((e for e in self.queue() if e.example.id == example_id), None)

    def settle(
        self, shown: QueueEntry, label: str | None, tags: Sequence[str], note: str = ""
    ) -> ExampleView:
        """Settle the example as the screen showed it, with the reviews it showed
        (`review.ExampleChanged` when it changed since, or got a new review)."""
        return review.settle(
            self.engine,
            self.info.name,
            shown.example.id,
            self.curator,
            label,
            tags,
            note,
            self.override_reason,
            version=shown.example.version,
            reviews_seen=shown.review_ids,
        )

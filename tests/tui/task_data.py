"""Small item files for every layout (original text, in each task's real file format)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from annotate import specs
from tests import fixtures as fx
from tests.tui.support import without_labels

SST2_TEST = (
    "index\tsentence\n"
    "0\tan utterly charming [MASK] of a film . \n"
    "1\tthe jokes land with a thud . \n"
)

STSB_TEST = (
    "index\tsentence1\tsentence2\n"
    "0\tA man plays a guitar.\tSomeone is playing the guitar.\n"
    "1\tTwo cats sleep on a sofa.\tA train leaves the station.\n"
)

COPA_DEV = [
    {
        "premise": "The man turned on the faucet.",
        "choice1": "The toilet filled with water.",
        "choice2": "Water flowed from the spout.",
        "question": "effect",
        "label": 1,
        "idx": 0,
    },
]
COPA_TEST = [
    {
        "premise": "The pond froze over.",
        "choice1": "The temperature dropped below zero.",
        "choice2": "Children went swimming in it.",
        "question": "cause",
        "idx": 10,
    },
    {
        "premise": "The girl dropped the glass.",
        "choice1": "It shattered on the tiles.",
        "choice2": "It filled with juice.",
        "question": "effect",
        "idx": 11,
    },
]


def wic_row(idx: int, word: str, s1: str, s2: str, label: bool | None) -> dict:
    """A WiC row with the target's character offsets computed from the sentences."""
    w1 = s1.index(word)
    w2 = s2.index(word)
    row = {
        "word": word,
        "sentence1": s1,
        "sentence2": s2,
        "start1": w1,
        "end1": w1 + len(word),
        "start2": w2,
        "end2": w2 + len(word),
        "idx": idx,
    }
    if label is not None:
        row["label"] = label
    return row


WIC_DEV = [
    wic_row(0, "bank", "We sat on the bank of the river.", "The bank raised its rates.", False)
]
WIC_TEST = [
    wic_row(10, "run", "They run a small bakery.", "She went for a run at dawn.", None),
    wic_row(11, "light", "Turn on the light, please.", "The light from the window was warm.", None),
]

WSC_DEV = [
    {
        "text": "The trophy did not fit in the suitcase because it was too big.",
        "target": {
            "span1_index": 0,
            "span1_text": "The trophy",
            "span2_index": 9,
            "span2_text": "it",
        },
        "label": True,
        "idx": 0,
    },
]
WSC_TEST = [
    {
        "text": "Mara thanked Ines because she had helped with the move.",
        "target": {"span1_index": 0, "span1_text": "Mara", "span2_index": 4, "span2_text": "she"},
        "idx": 10,
    },
    {
        "text": "The cup sat on the tray until it was carried off.",
        "target": {
            "span1_index": 4,
            "span1_text": "the tray",
            "span2_index": 7,
            "span2_text": "it",
        },
        "idx": 11,
    },
]

CB_DEV = [
    {
        "premise": "A: I doubt that he ever left town. B: Really?",
        "hypothesis": "he ever left town",
        "label": "contradiction",
        "idx": 0,
    },
]
CB_TEST = [
    {"premise": "I think the shop has closed.", "hypothesis": "the shop has closed", "idx": 10},
    {"premise": "Did she say the bus was late?", "hypothesis": "the bus was late", "idx": 11},
]

MULTIRC_TEST = [
    {
        "idx": 5,
        "version": 1.1,
        "passage": {
            "text": "The ferry leaves at nine. It carries cars, bikes and walkers to the island.",
            "questions": [
                {
                    "question": "What does the ferry carry?",
                    "idx": 10,
                    "answers": [
                        {"text": "Cars", "idx": 30},
                        {"text": "Horses", "idx": 31},
                        {"text": "Walkers", "idx": 32},
                    ],
                },
                {
                    "question": "When does the ferry leave?",
                    "idx": 11,
                    "answers": [{"text": "At nine", "idx": 33}, {"text": "At noon", "idx": 34}],
                },
            ],
        },
    },
]

RECORD_PASSAGE = "Omar Haddad opened a bakery in Riverton with help from Sofia Lind.\n@highlight\nNew bakery opens"


def entity_spans(text: str, names: list[str]) -> list[dict]:
    """ReCoRD entity spans (inclusive end) of the first occurrence of each name."""
    return [{"start": text.index(n), "end": text.index(n) + len(n) - 1} for n in names]


RECORD_TEST = [
    {
        "source": "Test",
        "passage": {
            "text": RECORD_PASSAGE,
            "entities": entity_spans(RECORD_PASSAGE, ["Omar Haddad", "Riverton", "Sofia Lind"]),
        },
        "qas": [
            {"query": "Customers queued outside the shop in @placeholder on Sunday.", "idx": 20},
            {"query": "@placeholder said the ovens were a gift.", "idx": 21},
        ],
        "idx": 9,
    },
]

LAYOUT_DATA: dict[str, tuple[object, object]] = {
    "glue/sst2": (fx.SST2_DEV, SST2_TEST),
    "superglue/rte": (fx.SG_RTE, without_labels(fx.SG_RTE)),
    "superglue/boolq": (fx.SG_BOOLQ, without_labels(fx.SG_BOOLQ)),
    "superglue/copa": (COPA_DEV, COPA_TEST),
    "superglue/wic": (WIC_DEV, WIC_TEST),
    "superglue/wsc": (WSC_DEV, WSC_TEST),
    "glue/stsb": (fx.STSB_DEV, STSB_TEST),
    "superglue/cb": (CB_DEV, CB_TEST),
    "superglue/multirc": (fx.SG_MULTIRC, MULTIRC_TEST),
    "superglue/record": (fx.SG_RECORD, RECORD_TEST),
}
"""Task -> (labelled dev rows for training, test rows)."""


# --- one test file per task, for the item-screen snapshots (tests/tui/test_snapshots.py) ---------
# Some rows carry bracketed text ([CLS], [/foo], [sic], [b]…) so the snapshots also show that
# item text is drawn verbatim, never parsed as markup.
COLA_SNAP_TEST = (
    "index\tsentence\n"
    "0\tThe lamp was [sic] brighter than the moon.\n"
    "1\tLamp the brighter moon was.\n"
)

MNLI_SNAP_TEST = (
    "index\tpromptID\tpairID\tgenre\tsentence1\tsentence2\n"
    "0\t21\t21\tslate\tThe bakery sold out by noon.\tBread was still available at six.\n"
    "1\t22\t22\ttravel\tThe [CLS] museum opens at nine [/foo].\tThe museum opens in the morning.\n"
)

MRPC_SNAP_TEST = (
    "index\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    "0\t301\t302\tThe council approved the budget on Monday .\tThe budget was approved by the council on Monday .\n"
    "1\t303\t304\tShares rose 3 percent [SEP] in early trading .\tThe company 's chief quit after the vote .\n"
)

QNLI_SNAP_TEST = (
    "index\tquestion\tsentence\n"
    "0\tWhen does the ferry leave?\tThe ferry to the island leaves every morning at nine.\n"
    "1\tWhat is a [MASK] token?\tA [MASK] token hides a word [/foo] from the model.\n"
)

QQP_SNAP_TEST = (
    "id\tquestion1\tquestion2\n"
    "0\tHow do I keep basil alive indoors?\tWhat is the best way to grow basil inside?\n"
    "1\tWhy is the sky [b]blue[/b]?\tHow far away is the moon?\n"
)

GLUE_RTE_SNAP_TEST = (
    "index\tsentence1\tsentence2\n"
    "0\tThe library will close for repairs in June, the city said on Friday.\tThe library closes in June.\n"
    "1\tA [CLS] token opens the input [SEP] here.\tstray [/foo] tag\n"
)

WNLI_SNAP_TEST = (
    "index\tsentence1\tsentence2\n"
    "0\tThe trophy did not fit in the suitcase because it was too big.\tThe trophy was too big.\n"
    "1\tMara thanked Ines because she had helped [sic] with the move.\tInes had helped.\n"
)

AX_SNAP_TEST = (
    "index\tsentence1\tsentence2\n"
    "0\tThe gate is open.\tThe gate is not open.\n"
    "1\tAll ten boats were repaired by the crew [/foo].\tThe crew repaired some boats.\n"
)

AXB_SNAP_TEST = [
    {
        "idx": 0,
        "sentence1": "Every lamp was lit.",
        "sentence2": "Some lamp was lit.",
        "label": "entailment",
    },
    {
        "idx": 1,
        "sentence1": "Some [MASK] lamp was lit.",
        "sentence2": "Every lamp was [/lit].",
        "label": "not_entailment",
    },
]

AXG_SNAP_TEST = [
    {
        "idx": 0,
        "pair_id": 1,
        "premise": "The nurse told the patient that she would be discharged soon.",
        "hypothesis": "The patient would be discharged soon.",
        "label": "entailment",
    },
    {
        "idx": 1,
        "pair_id": 1,
        "premise": "The [CLS] nurse told the patient that he would be discharged soon.",
        "hypothesis": "The nurse would be discharged soon.",
        "label": "not_entailment",
    },
]

ITEM_SCREEN_DATA: dict[str, object] = {
    **{task: test for task, (_dev, test) in LAYOUT_DATA.items()},
    "glue/cola": COLA_SNAP_TEST,
    "glue/mnli-m": MNLI_SNAP_TEST,
    "glue/mnli-mm": MNLI_SNAP_TEST,
    "glue/mrpc": MRPC_SNAP_TEST,
    "glue/qnli": QNLI_SNAP_TEST,
    "glue/qqp": QQP_SNAP_TEST,
    "glue/rte": GLUE_RTE_SNAP_TEST,
    "glue/wnli": WNLI_SNAP_TEST,
    "glue/ax": AX_SNAP_TEST,
    "superglue/axb": AXB_SNAP_TEST,
    "superglue/axg": AXG_SNAP_TEST,
}
"""Task -> test rows (no training needed: the study starts in the test phase)."""


# --- a premise far longer than the screen (issue 15, item 10) ----------------------------------
LONG_PREMISE_SENTENCES = (
    "The harbour office at Kessling keeps a ledger of every boat that ties up at the north quay.",
    "In the spring the ferry company added a second crossing to the island of Dunmarrow.",
    "Fishermen complained that the new timetable left the slipway crowded before dawn.",
    "The council met twice in the old grain hall to hear the complaints [CLS] and the replies.",
    "A survey counted forty-one moorings, of which nine were empty for most of the year.",
    "The harbour master, Ines Varga, proposed moving the ferry berth to the south wall.",
    "Engineers warned that the south wall would need dredging before larger boats could use it.",
    "The dredging was estimated to take eleven weeks and to close the quay for six of them.",
)


def long_premise(cells: int = 5000) -> str:
    """An original, made-up premise of `cells` characters, give or take one (the sentences
    above, each numbered by its round, until the length is reached)."""
    parts: list[str] = []
    size = 0
    n = 0
    while size < cells:
        sentence = LONG_PREMISE_SENTENCES[n % len(LONG_PREMISE_SENTENCES)]
        part = f"({n // len(LONG_PREMISE_SENTENCES) + 1}) {sentence} "
        parts.append(part)
        size += len(part)
        n += 1
    return "".join(parts)[:cells].rstrip() + "."


LONG_PREMISE_HYPOTHESIS = "The ferry berth was moved to the south wall [/foo] of the harbour."

LONG_PREMISE_TEST = [
    {"premise": long_premise(), "hypothesis": LONG_PREMISE_HYPOTHESIS, "idx": 500},
]
"""One SuperGLUE RTE test row whose premise (5,000 characters) fills many 80x24 screens."""

RECORD_MANY_PASSAGE = (
    "Ada, Ben, Cy, Dee, Eve, Finn, Gus, Hal, Ivy, Jo, Kit and Lu rowed across the bay.\n"
    "@highlight\nTwelve rowers cross the bay\n@highlight\nThe crossing took [b]four[/b] hours"
)
RECORD_MANY_NAMES = [
    "Ada",
    "Ben",
    "Cy",
    "Dee",
    "Eve",
    "Finn",
    "Gus",
    "Hal",
    "Ivy",
    "Jo",
    "Kit",
    "Lu",
]
RECORD_MANY_TEST = [
    {
        "source": "Test",
        "passage": {
            "text": RECORD_MANY_PASSAGE,
            "entities": entity_spans(RECORD_MANY_PASSAGE, RECORD_MANY_NAMES),
        },
        "qas": [
            {"query": "@placeholder steered the boat.", "idx": 30},
            {"query": "@placeholder kept time with a drum.", "idx": 31},
            {"query": "@placeholder bailed out water.", "idx": 32},
        ],
        "idx": 12,
    },
]
"""A ReCoRD passage with 12 entities: numbers 10 to 12 take two keys."""


EXPLAINED_TASK = """
benchmark = "custom"
title = "Explained pairs"
kind = "classification"
layout = "pair"
metrics = ["accuracy"]
guidelines = "Decide whether the hypothesis follows."
explanation_field = "why"

[[fields]]
name = "premise"
label = "Premise"

[[fields]]
name = "hypothesis"
label = "Hypothesis"

[[fields]]
name = "why"
shown = false
optional = true

[[labels]]
value = "yes"
text = "Follows"
key = "1"

[[labels]]
value = "no"
text = "Does not follow"
key = "2"

[source]
reader = "jsonl"
id = ["idx"]
label = ["label"]

[submission]
file = "Explained.jsonl"
style = "superglue-jsonl"
"""
"""A custom pair task whose training feedback explains the gold label (field `why`)."""


@contextmanager
def explained_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[dict[str, Any]]]:
    """Install the task `custom/explained` (EXPLAINED_TASK) under `tmp_path` for the body of
    the `with`; yields its one item (with gold and an explanation that looks like markup).
    The task caches are cleared on the way in and out, so no other test sees the task."""
    folder = tmp_path / "tasks" / "custom"
    folder.mkdir(parents=True)
    (folder / "explained.toml").write_text(EXPLAINED_TASK)
    monkeypatch.setenv("ANNOTATE_TASKS_PATH", str(tmp_path / "tasks"))
    specs.clear_caches()
    try:
        yield [
            {
                "premise": "Cats purr.",
                "hypothesis": "Cats make sounds.",
                "why": "Purring [/foo] is a [CLS] sound.",
                "label": "yes",
                "idx": 0,
            }
        ]
    finally:
        specs.clear_caches()

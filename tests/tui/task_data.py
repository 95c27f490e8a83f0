"""Small item files for every layout (original text, in each task's real file format)."""

from __future__ import annotations

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

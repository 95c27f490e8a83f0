"""Small data files in the real GLUE/SuperGLUE layouts, with their quirks. All text is original,
written for these tests."""

from __future__ import annotations

import json
from pathlib import Path

COLA_HEADERLESS = (
    "tst01\t1\t\tThe kettle whistled before anyone noticed.\n"
    "tst01\t0\t*\tThe kettle whistled anyone before noticed.\n"
    "tst02\t1\t\tMira gave the parrot a cracker.\n"
    "tst02\t0\t*\tMira the parrot gave cracker a.\n"
)

COLA_TEST = (
    "index\tsentence\n0\tThe lamp was brighter than the moon.\n1\tLamp the brighter moon was.\n"
)

SST2_DEV = (
    "sentence\tlabel\n"
    "a warm , funny little film that never overstays its welcome . \t1\n"
    "the plot wanders off and does n't come back . \t0\n"
    "-lrb- it 's -rrb- a sly , sweet surprise . \t1\n"
)

# Unbalanced quotes must be read as text (QUOTE_NONE), and the rows are tokenised.
MRPC_DEV = (
    "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    '1\t101\t102\tThe council approved the budget on Monday .\t" The budget was approved by the council on Monday .\n'
    "0\t103\t104\tShares rose 3 percent in early trading .\tThe company 's chief quit after the vote .\n"
)

# The original Microsoft file starts with a UTF-8 BOM and uses CRLF.
MRPC_ORIGINAL = (
    "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
    "1\t201\t202\tThe ferry left at dawn.\tAt dawn, the ferry departed.\r\n"
    "0\t203\t204\tRain closed the pass.\tThe pass was reopened in spring.\r\n"
)

STSB_DEV = (
    "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n"
    "0\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\tA dog runs on the beach.\tA dog is running along the shore.\t4.600\n"
    '1\tmain-news\theadlines\t2015\t0002\tnone\tnone\t"Storm hits coast\tFestival opens in town\t0.250\n'
    "2\tmain-forums\tanswers-forums\t2015\t0003\tnone\tnone\tYou can boil it.\tBoiling it works.\t3.800\n"
)

MNLI_DEV = (
    "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
    "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tlabel2\tlabel3\tlabel4\t"
    "label5\tgold_label\n"
    "0\t11\t11e\ttravel\t( a )\t( b )\t(ROOT a)\t(ROOT b)\tThe museum opens at nine.\t"
    "The museum opens in the morning.\tentailment\tentailment\tentailment\tentailment\t"
    "entailment\tentailment\n"
    "1\t12\t12c\tfiction\t( a )\t( b )\t(ROOT a)\t(ROOT b)\tShe never owned a car.\t"
    "She drove her own car to work.\tcontradiction\tcontradiction\tneutral\tcontradiction\t"
    "contradiction\tcontradiction\n"
)

MNLI_TEST = (
    "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
    "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\n"
    "0\t21\t21\tslate\t( a )\t( b )\t(ROOT a)\t(ROOT b)\tThe bakery sold out by noon.\t"
    "Bread was still available at six.\n"
)

QQP_TRAIN = (
    "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
    "7\t1\t2\tHow do I keep basil alive indoors?\tWhat is the best way to grow basil inside?\t1\n"
    "8\t3\t4\tWhy is the sky blue?\tHow far away is the moon?\t0\n"
)

DIAGNOSTIC_FULL = (
    "Lexical Semantics\tPredicate-Argument Structure\tLogic\tKnowledge\tDomain\tPremise\t"
    "Hypothesis\tLabel\r\n"
    "\t\tNegation\t\tArtificial\tThe gate is open.\tThe gate is not open.\tcontradiction\r\n"
    "\t\tNegation\t\tArtificial\tThe gate is not open.\tThe gate is open.\tcontradiction\r\n"
    "Lexical entailment;Quantifiers\tActive/Passive\t\t\tNews\tAll ten boats were repaired by the crew.\t"
    "The crew repaired some boats.\tentailment\r\n"
    "\t\t\tWorld knowledge\tWikipedia\tThe crew repaired some boats.\tAll ten boats were repaired by "
    "the crew.\tneutral\r\n"
)

SG_RTE = [
    {
        "premise": "The library will close for repairs in June.",
        "hypothesis": "The library closes in June.",
        "label": "entailment",
        "idx": 0,
    },
    {
        "premise": "Tomas sold his bicycle to a neighbour.",
        "hypothesis": "Tomas bought a bicycle.",
        "label": "not_entailment",
        "idx": 1,
    },
    {
        "premise": "A [CLS] token opens the input [SEP] here.",
        "hypothesis": "stray [/foo] tag",
        "label": "not_entailment",
        "idx": 2,
    },
]

SG_BOOLQ = [
    {
        "question": "is a tomato a fruit",
        "passage": "Botanically, the tomato is the fruit of the plant.",
        "idx": 0,
        "label": True,
    },
    {
        "question": "can penguins fly",
        "passage": "Penguins are flightless seabirds.",
        "idx": 1,
        "label": False,
    },
]

SG_AXB = [
    {
        "idx": "0",
        "label": "entailment",
        "sentence1": "Every lamp was lit.",
        "sentence2": "Some lamp was lit.",
        "logic": "Universal;Upward monotone",
    },
    {
        "idx": "1",
        "label": "not_entailment",
        "sentence1": "Some lamp was lit.",
        "sentence2": "Every lamp was lit.",
        "logic": "Existential",
        "lexical-semantics": "Quantifiers",
    },
]

SG_MULTIRC = [
    {
        "idx": 0,
        "version": 1.1,
        "passage": {
            "text": "Ana planted beans in April. By July the vines covered the fence.",
            "questions": [
                {
                    "question": "When were the beans planted?",
                    "idx": 0,
                    "answers": [
                        {"text": "April", "idx": 0, "label": 1},
                        {"text": "July", "idx": 1, "label": 0},
                    ],
                },
                {
                    "question": "What covered the fence?",
                    "idx": 1,
                    "answers": [
                        {"text": "The vines", "idx": 2, "label": 1},
                        {"text": "Snow", "idx": 3, "label": 0},
                        {"text": "Bean vines", "idx": 4, "label": 1},
                    ],
                },
            ],
        },
    },
]

SG_RECORD = [
    {
        "source": "Test",
        "passage": {
            "text": "Lena Ortiz scored twice as Harbor City beat Pine Falls.\n@highlight\nHarbor City win",
            "entities": [
                {"start": 0, "end": 9},
                {"start": 27, "end": 37},
                {"start": 44, "end": 53},
            ],
        },
        "qas": [
            {
                "query": "@placeholder will face the league leaders next week.",
                "idx": 5,
                "answers": [{"start": 27, "end": 37, "text": "Harbor City"}],
            },
        ],
        "idx": 3,
    },
]


def write_text(
    path: Path, text: str, *, final_newline: bool = True, encoding: str = "utf-8"
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not final_newline:
        text = text.rstrip("\r\n")
    path.write_bytes(text.encode(encoding))
    return path


def write_jsonl(path: Path, rows: list[dict], *, final_newline: bool = True) -> Path:
    text = "\n".join(json.dumps(r) for r in rows) + ("\n" if final_newline else "")
    return write_text(path, text, final_newline=final_newline)


def refused_import(cli, *args: object) -> str:
    """`annotate import ARGS` refused as a user's mistake is (exit 1) with the store left
    without any dataset; its error, on one line."""
    result = cli("import", *args)
    assert result.code == 1, result.stdout
    assert cli("datasets", "--format", "json").json() == []
    return " ".join(result.stderr.split())

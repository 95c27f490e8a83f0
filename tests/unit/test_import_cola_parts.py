"""CoLA's public dev set comes in two headerless files (in-domain, then out-of-domain); GLUE's
dev.tsv and the Hub's `idx` number them as one split, the out-of-domain rows after the
in-domain ones. They import (and score) as that one split with those ids."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests import fixtures as fx
from tests.conftest import shared_file

IN_DOMAIN = (
    "ab01\t1\t\tThe kettle whistled before anyone noticed.\n"
    "ab01\t0\t*\tThe kettle whistled anyone before noticed.\n"
    "ab02\t1\t\tMira gave the parrot a cracker.\n"
)
OUT_OF_DOMAIN = (  # no final newline, as the real file
    "cd03\t0\t*\tThe lamp brighter was than the moon.\ncd03\t1\t\tThe lamp was brighter than the moon."
)


def cola_public(root: Path) -> Path:
    """The public release's layout: cola_public/raw/ with the two dev files and the train file."""
    raw = root / "cola_public" / "raw"
    fx.write_text(raw / "in_domain_train.tsv", IN_DOMAIN)
    fx.write_text(raw / "in_domain_dev.tsv", IN_DOMAIN)
    fx.write_text(raw / "out_of_domain_dev.tsv", OUT_OF_DOMAIN, final_newline=False)
    return root


def dev_items(cli, db_url: str) -> dict[str, str]:
    """{id: sentence} of the one dev dataset in the store."""
    from sqlmodel import Session, select

    from annotate.store.models import Item

    (dev,) = [d for d in cli("datasets", "--format", "json").json() if d["split"] == "dev"]
    from annotate.workspace import open_workspace

    engine = open_workspace(db_url).engine
    with Session(engine) as s:
        items = s.exec(select(Item).where(Item.dataset_id == dev["id"])).all()
    return {i.source_id: i.fields["sentence"] for i in items}


def test_the_two_dev_files_are_one_dev_split_numbered_as_glue(cli, db_url, tmp_path: Path):
    folder = cola_public(tmp_path / "CoLA")
    result = cli("import", "CoLA", folder, "--format", "json")
    assert result.code == 0, result.stderr
    rows = sorted((r["split"], r["items"]) for r in result.json())
    assert rows == [("dev", 5), ("train", 3)]  # one dev dataset, not two
    assert dev_items(cli, db_url) == {
        "0": "The kettle whistled before anyone noticed.",
        "1": "The kettle whistled anyone before noticed.",
        "2": "Mira gave the parrot a cracker.",
        "3": "The lamp brighter was than the moon.",  # out-of-domain: after the in-domain rows
        "4": "The lamp was brighter than the moon.",
    }


def test_one_dev_file_alone_is_refused(cli, tmp_path: Path):
    folder = cola_public(tmp_path / "CoLA")
    assert cli("init").code == 0
    for name in ("in_domain_dev.tsv", "out_of_domain_dev.tsv"):
        path = folder / "cola_public" / "raw" / name
        result = cli("import", "CoLA", path)
        assert result.code == 1
        told = " ".join(result.stderr.split())
        assert f"{path}: one of the 2 files of glue/cola's dev split" in told
        assert "give the folder that holds them all" in told
    (folder / "cola_public" / "raw" / "out_of_domain_dev.tsv").unlink()
    assert "out_of_domain_dev.tsv is not beside it" in fx.refused_import(cli, "CoLA", folder)


def test_the_public_zip_gives_one_dev_split(cli, db_url, tmp_path: Path):
    path = tmp_path / "cola_public_1.1.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("cola_public/raw/in_domain_train.tsv", IN_DOMAIN)
        archive.writestr("cola_public/raw/in_domain_dev.tsv", IN_DOMAIN)
        archive.writestr("cola_public/raw/out_of_domain_dev.tsv", OUT_OF_DOMAIN)
    result = cli("import", "CoLA", path, "--format", "json")
    assert result.code == 0, result.stderr
    assert sorted((r["split"], r["items"]) for r in result.json()) == [("dev", 5), ("train", 3)]
    assert dev_items(cli, db_url)["3"] == "The lamp brighter was than the moon."


def test_score_against_the_raw_folder_takes_the_whole_dev_split(cli, tmp_path: Path):
    folder = cola_public(tmp_path / "CoLA")
    pred = fx.write_text(tmp_path / "CoLA.tsv", "index\tprediction\n0\t1\n1\t0\n2\t1\n3\t0\n4\t1\n")
    result = cli("score", pred, "--gold", folder, "--format", "json")
    assert result.code == 0, result.stderr
    [task] = result.json()["tasks"]
    assert task["coverage"]["scored"] == 5 and task["coverage"]["not_in_gold"] == 0
    assert task["scores"]["mcc"]["value"] == 1.0


def test_the_real_raw_files_give_glues_dev_ids(cli, db_url):
    raw = shared_file("glue/CoLA/cola_public/raw/out_of_domain_dev.tsv").parent
    first_out = (raw / "out_of_domain_dev.tsv").read_text().splitlines()[0].split("\t")[3]
    last_in = (raw / "in_domain_dev.tsv").read_text().splitlines()[-1].split("\t")[3]
    result = cli("import", "CoLA", raw.parents[1], "--format", "json")
    assert result.code == 0, result.stderr
    (dev,) = [r for r in result.json() if r["split"] == "dev"]
    assert dev["items"] == 1043  # GLUE's CoLA dev.tsv: 527 in-domain rows, then 516
    items = dev_items(cli, db_url)
    assert (items["526"], items["527"]) == (last_in, first_out)
    assert max(int(i) for i in items) == 1042


def tokenized(text: str) -> str:
    """The public release's tokenized/ copy of a raw file: punctuation split off."""
    return text.replace(".", " .")


def test_the_releases_tokenized_copy_is_left_out_for_the_raw_files(cli, db_url, tmp_path: Path):
    """The public release holds each file twice, raw/ (GLUE's sentences) and tokenized/: a
    folder or the zip gives one train and one dev split, of the raw sentences; the tokenized
    folder given by itself is imported as asked."""
    folder = cola_public(tmp_path / "CoLA")
    copy = folder / "cola_public" / "tokenized"
    fx.write_text(copy / "in_domain_train.tsv", tokenized(IN_DOMAIN))
    fx.write_text(copy / "in_domain_dev.tsv", tokenized(IN_DOMAIN))
    fx.write_text(copy / "out_of_domain_dev.tsv", tokenized(OUT_OF_DOMAIN), final_newline=False)
    result = cli("import", "CoLA", folder, "--format", "json")
    assert result.code == 0, result.stderr
    assert sorted((r["split"], r["items"], Path(r["path"]).parent.name) for r in result.json()) == [
        ("dev", 5, "raw"),
        ("train", 3, "raw"),
    ]
    assert dev_items(cli, db_url)["0"] == "The kettle whistled before anyone noticed."

    path = tmp_path / "cola_public_1.1.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for part in ("raw", "tokenized"):
            for name, text in (
                ("in_domain_train.tsv", IN_DOMAIN),
                ("in_domain_dev.tsv", IN_DOMAIN),
                ("out_of_domain_dev.tsv", OUT_OF_DOMAIN),
            ):
                archive.writestr(
                    f"cola_public/{part}/{name}", text if part == "raw" else tokenized(text)
                )
    result = cli("import", "CoLA", path, "--format", "json")
    assert result.code == 0, result.stderr
    # The same raw files again: nothing new, and no tokenized dataset beside them.
    assert sorted((r["split"], r["items"]) for r in result.json()) == [("dev", 5), ("train", 3)]
    assert len(cli("datasets", "--format", "json").json()) == 2

    result = cli("import", "CoLA", copy, "--format", "json")
    assert result.code == 0, result.stderr
    assert len(cli("datasets", "--format", "json").json()) == 4  # asked for by name

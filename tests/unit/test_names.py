"""29.7: names that look alike (Unicode skeletons) are warned about and shown apart."""

from __future__ import annotations

from annotate.protocol.names import confusable_with, skeleton


def test_cyrillic_and_greek_look_alikes_share_the_latin_skeleton():
    assert skeleton("\u0430na") == skeleton("ana") == skeleton("ANA") == skeleton("ánа")
    assert skeleton("\u03bfscar") == skeleton("oscar")
    assert confusable_with("ana", ["\u0430na", "anna", "ana"]) == ["\u0430na"]
    assert confusable_with("ben", ["ana", "bea"]) == []


def test_adding_a_look_alike_name_warns_and_the_list_shows_them_apart(cli):
    assert cli("annotator", "add", "ana").code == 0
    added = cli("annotator", "add", "\u0430na")  # Cyrillic а
    assert added.code == 0, added.stderr
    told = " ".join(added.stderr.split())
    assert "'аna' looks like the existing annotator 'ana'" in told
    assert "U+0430 CYRILLIC SMALL LETTER A" in told
    rows = {r["name"]: r["looks_like"] for r in cli("annotator", "list", "--format", "json").json()}
    assert rows == {"ana": ["\u0430na"], "\u0430na": ["ana"]}
    assert "Looks like" in cli("annotator", "list").stdout
    assert cli("annotator", "add", "ben").stderr == ""

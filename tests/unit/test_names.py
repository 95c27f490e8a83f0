"""29.7: names that look alike (Unicode skeletons, UTS #39) are warned about and shown apart."""

from __future__ import annotations

import pytest

from annotate.protocol.names import confusable_with, look_alikes, skeleton, spelled_out

ORDINARY = """
ana anna ann anne ben bea beth bob carl carla chloe clara dan dana dara dev eve evan ian ivan
ida ada al ali alice alex alexa leo lea lee li lily lola liam mia mila nia noah nora omar otto
paul pia rae ray rhea rob ron sam sara sarah tom tim zoe zoey kim kai max mae may jo joe jon
john mark marc mike nick rick rina rima erin emma ema ella elle amy sue sun lin lim wu wei yan
yun
""".split()  # noqa: SIM905 (a list of words reads better as words)


def test_cyrillic_and_greek_look_alikes_share_the_latin_skeleton():
    assert skeleton("\u0430na") == skeleton("ana") == skeleton("ANA") == skeleton("ánа")
    assert skeleton("\u03bfscar") == skeleton("oscar")
    assert confusable_with("ana", ["\u0430na", "anna", "ana"]) == ["\u0430na"]
    assert confusable_with("ben", ["ana", "bea"]) == []


@pytest.mark.parametrize(
    ("name", "look_alike"),
    [
        pytest.param("ana", "\u0430n\u0430", id="cyrillic"),
        pytest.param("Pavel", "\u0420\u0430vel", id="cyrillic-capital"),
        pytest.param("oscar", "\u03bfscar", id="greek"),
        pytest.param("KIM", "\u039a\u0399\u039c", id="greek-capitals"),
        pytest.param("bob", "b\u0585b", id="armenian-oh"),
        pytest.param("Uma", "\u054dma", id="armenian-seh"),
        pytest.param("AMY", "\u13aa\u13b7\u13a9", id="cherokee"),
        pytest.param("ana", "\uff41\uff4e\uff41", id="fullwidth"),
        pytest.param("Oscar", "0scar", id="digit-zero"),
        pytest.param("alex", "a1ex", id="digit-one"),
        pytest.param("lan", "Ian", id="capital-i-small-l"),
        pytest.param("emma", "ernrna", id="rn-m"),
        pytest.param("Eve", "eve", id="case"),
        pytest.param("chloé", "chloe", id="accent"),
    ],
)
def test_look_alikes_of_every_kind_are_confusable(name, look_alike):
    assert confusable_with(name, [look_alike, "someone"]) == [look_alike]
    assert confusable_with(look_alike, [name]) == [name]


def test_distinct_ordinary_names_do_not_look_alike():
    for names in (ORDINARY, [n.capitalize() for n in ORDINARY], [n.upper() for n in ORDINARY]):
        assert {n: v for n, v in look_alikes(names).items() if v} == {}


def test_look_alikes_lists_each_name_with_the_others():
    alike = look_alikes(["ana", "\u0430na", "\uff41na", "ben"])
    assert alike == {
        "ana": ["\u0430na", "\uff41na"],
        "\u0430na": ["ana", "\uff41na"],
        "\uff41na": ["ana", "\u0430na"],
        "ben": [],
    }


def test_the_characters_that_differ_are_spelled_out():
    assert spelled_out("\u0430na") == "\u0430 U+0430 CYRILLIC SMALL LETTER A"
    assert spelled_out("a1ex", "alex") == "1 U+0031 DIGIT ONE"
    assert spelled_out("alex", "alex") == ""


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


def test_a_digit_for_a_letter_warns_naming_the_digit(cli):
    assert cli("annotator", "add", "alex").code == 0
    told = " ".join(cli("annotator", "add", "a1ex").stderr.split())
    assert "'a1ex' looks like the existing annotator 'alex'" in told
    assert "1 U+0031 DIGIT ONE" in told and "l U+006C LATIN SMALL LETTER L" in told
    assert cli("annotator", "add", "\u13aa\u13b7\u13a9").code == 0  # Cherokee: AMY
    assert cli("annotator", "add", "Amy").stderr.count("looks like") == 1

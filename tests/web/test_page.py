"""The annotator page's requests, without a browser (Starlette's test client): sign-in and its
limits, CSRF and Origin checks, the security headers, Secure cookies, errors that never show a
traceback, and hostile text that renders inert."""

from __future__ import annotations

import logging
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.protocol import gate
from annotate.protocol.studies import add_annotator
from annotate.protocol.tokens import add_annotator_with_token
from annotate.text import terminal_safe
from tests.web.support import labels, layout_study

pytest.importorskip("starlette")
ORIGIN = "http://127.0.0.1:8000"


def client(engine, study: str, **options):
    from starlette.testclient import TestClient

    from annotate.web.page.serve import page_app

    app = page_app(engine, study, host="127.0.0.1", port=8000, **options)
    return TestClient(app, base_url=ORIGIN, headers={"Origin": ORIGIN})


def csrf(response) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', response.text).group(1)


def ticket(response) -> str:
    return re.search(r'name="ticket" value="([^"]+)"', response.text).group(1)


def screen(response) -> str:
    return re.search(r'data-screen="([\w-]+)"', response.text).group(1)


def signed_in(c, name: str = "ana", token: str = "") -> str:
    token_csrf = csrf(c.get("/"))
    r = c.post("/signin", data={"csrf": token_csrf, "name": name, "token": token})
    assert screen(r) == "guidelines", r.text
    r = c.post("/start", data={"csrf": token_csrf})
    assert screen(r) == "item"
    return token_csrf


@pytest.fixture
def pair(workspace, tmp_path: Path) -> str:
    return layout_study(workspace.engine, tmp_path, "pair", test=3)


def test_headers_forbid_outside_content_and_framing(workspace, pair):
    r = client(workspace.engine, pair, require_tokens=False).get("/")
    assert r.headers["content-security-policy"].startswith("default-src 'self'")
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cache-control"] == "no-store"
    assert '<meta name="viewport" content="width=device-width' in r.text
    # Nothing the page loads names another host: its script and styles are this server's.
    assert not re.search(r'(src|href)="(https?:)?//', r.text)


def test_a_post_from_another_origin_or_without_csrf_token_is_refused(workspace, pair):
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, pair, require_tokens=False)
    token = csrf(c.get("/"))
    foreign = c.post(
        "/signin",
        data={"csrf": token, "name": "ana"},
        headers={"Origin": "http://evil.example"},
    )
    assert foreign.status_code == 403
    no_origin = c.post("/signin", data={"csrf": token, "name": "ana"}, headers={"Origin": ""})
    assert no_origin.status_code == 403
    forged = c.post("/signin", data={"csrf": "guess", "name": "ana"})
    assert forged.status_code == 400 and screen(forged) == "signin"
    token = signed_in(c)
    item = c.get("/")
    stale = c.post(
        "/answer", data={"csrf": "guess", "ticket": ticket(item), "answer": "entailment"}
    )
    assert screen(stale) == "expired"
    assert labels(workspace.engine, pair)[0:] == []  # nothing was stored by either


@pytest.mark.parametrize(
    ("require_tokens", "label"), [(True, "Token"), (False, "Token (if you were given one)")]
)
def test_the_token_is_asked_for_as_the_server_requires_it(workspace, pair, require_tokens, label):
    """Served with tokens required (every annotator has one, or `serve` refuses to start),
    the form said "Token (if you were given one)", as if an empty one could sign anyone in."""
    add_annotator_with_token(workspace.engine, "ana")
    page = client(workspace.engine, pair, require_tokens=require_tokens).get("/")
    assert re.search(r'<label for="token">([^<]*)</label>', page.text).group(1) == label


def test_sign_in_is_rate_limited_per_name_and_per_address(workspace, pair):
    from annotate.web import limits

    _, token = add_annotator_with_token(workspace.engine, "ana")
    c = client(workspace.engine, pair)
    form = {"csrf": csrf(c.get("/")), "name": "ana"}
    said = []
    for _ in range(limits.FREE_TRIES):
        r = c.post("/signin", data={**form, "token": "wrong"})
        said.append(re.search(r'id="signin-error">([^<]*)', r.text).group(1))
    assert set(said) == {"Unknown name or wrong token (the refusal is recorded). Try again."}
    refused = c.post("/signin", data={**form, "token": token})  # right, but too soon
    assert refused.status_code == 429 and "Too many refused sign-ins: wait" in refused.text
    other = c.post("/signin", data={**form, "name": "bob", "token": "x"})  # same address
    assert other.status_code == 429


def test_an_unknown_name_and_a_wrong_token_get_the_same_answer(workspace, pair, monkeypatch):
    from annotate.protocol import tokens

    add_annotator_with_token(workspace.engine, "ana")
    derive = tokens._derive
    answers = []
    for name in ("nobody", "ana"):
        hashed = []  # the token checks each refusal made: one, known name or not
        monkeypatch.setattr(tokens, "_derive", lambda *a, h=hashed: h.append(1) or derive(*a))
        c = client(workspace.engine, pair)
        r = c.post("/signin", data={"csrf": csrf(c.get("/")), "name": name, "token": "x"})
        answers.append(
            (r.status_code, re.search(r'id="signin-error">([^<]*)', r.text)[1], len(hashed))
        )
    assert answers[0] == answers[1] and answers[0][2] == 1


def test_crowd_workers_cannot_sign_in_and_need_no_token(workspace, pair, tmp_path):
    """A crowd worker enters by their link only: their pseudonym (w01, easy to guess) signs
    nobody in on a lab study's page, even one served with --no-tokens, and serve's check of
    annotators without a token does not count them."""
    from annotate.protocol.tokens import annotators_without_token
    from tests.crowd_helpers import arrive, crowd_study

    crowd_study(workspace.engine, tmp_path)
    worker = arrive(workspace.engine, "pilot", 1).annotator.name
    assert worker not in annotators_without_token(workspace.engine)
    c = client(workspace.engine, pair, require_tokens=False)
    r = c.post("/signin", data={"csrf": csrf(c.get("/")), "name": worker, "token": ""})
    assert r.status_code == 403 and screen(r) == "signin"


def test_with_https_public_url_the_cookie_is_secure(workspace, pair):
    plain = client(workspace.engine, pair, require_tokens=False).get("/")
    assert "secure" not in plain.headers["set-cookie"].lower()
    secure = client(
        workspace.engine, pair, require_tokens=False, public_url="https://labels.example.org"
    ).get("/")
    cookie = secure.headers["set-cookie"].lower()
    assert "secure" in cookie and "httponly" in cookie and "samesite=lax" in cookie


def test_an_error_shows_no_traceback_and_is_logged(workspace, pair, monkeypatch, caplog):
    from annotate.protocol.session import AnnotatorSession

    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, pair, require_tokens=False)
    token = signed_in(c)

    def broken(*args, **kwargs):
        raise RuntimeError("secret-in-message? no: a bug")

    monkeypatch.setattr(AnnotatorSession, "submit", broken)
    with caplog.at_level(logging.ERROR, logger="annotate.serve"):
        r = c.post(
            "/answer", data={"csrf": token, "ticket": ticket(c.get("/")), "answer": "entailment"}
        )
    assert r.status_code == 500 and screen(r) == "error"
    assert "Traceback" not in r.text and "RuntimeError" not in r.text
    assert any("RuntimeError" in m for m in caplog.messages)


def test_a_reload_resumes_the_same_item_and_answers_are_stored_once(workspace, pair):
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, pair, require_tokens=False)
    token = signed_in(c)
    first = c.get("/")
    assert ticket(first) != "" and "Training" in first.text
    feedback = c.post(
        "/answer", data={"csrf": token, "ticket": ticket(first), "answer": "entailment"}
    )
    assert screen(feedback) == "feedback" and "Right answer" in feedback.text
    # The first test item came with the feedback (the page shows it on "continue", with no
    # request): a reload shows it, as after "continue", storing nothing more.
    test_item = c.get("/")
    assert screen(test_item) == "item" and "Test" in test_item.text
    assert len(labels(workspace.engine, pair)) == 1
    again = c.get("/")  # a reload: the same item (its lease)
    assert (
        re.search(r'id="field-premise".*?</div>', test_item.text, re.S)[0]
        == (re.search(r'id="field-premise".*?</div>', again.text, re.S)[0])
    )
    form = {"csrf": token, "ticket": ticket(test_item), "answer": "not_entailment"}
    c.post("/answer", data=form)
    c.post("/answer", data=form)  # the same answer sent twice (a double tap, a retry)
    test = [label for label in labels(workspace.engine, pair) if label.phase == "test"]
    assert len(test) == 1 and test[0].value == "not_entailment"


HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "\x1b[2J\x1b]2;owned\x07",
    "\u202eevil\u202c",
    "[b]bold[/b] {{ 7*7 }} {% raw %}",
    "</textarea><svg onload=alert(1)>",
    "&lt;b&gt; & ' \"",
]


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


def inert(html: str, hostile: list[str], scripts: int = 2) -> None:
    """No tag or event handler came from the text (a whole page has its own 2 scripts, a
    screen none), and the text shows as sanitised."""
    parser = Tags()
    parser.feed(html)
    tags = [t for t, _ in parser.tags if t in ("script", "img", "svg", "iframe")]
    assert tags == ["script"] * scripts
    assert not [a for _, attrs in parser.tags for a, _ in attrs if a.startswith("on")]
    shown = "".join(parser.text)
    for text in hostile:
        assert terminal_safe(text).strip() in shown
        assert "\x1b" not in shown and "\u202e" not in shown


def test_hostile_item_text_and_names_render_inert(workspace, tmp_path: Path):
    from tests.tui.support import build_study

    rows = [
        {"premise": h, "hypothesis": HOSTILE[-1 - n], "label": "entailment", "idx": n}
        for n, h in enumerate(HOSTILE)
    ]
    study = build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        test=rows,
        overrides={"training_items": 0, "test_sample": "all", "annotators_per_item": 1},
        name="hostile",
    )
    name = "<b>ana</b>\x1b[31m"
    add_annotator(workspace.engine, name)
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c, name)
    shown = []
    for _ in HOSTILE:
        page = c.get("/")
        inert(page.text, [name])
        parser = Tags()
        parser.feed(page.text)
        shown.append("".join(parser.text))
        c.post(
            "/answer",
            data={
                "csrf": token,
                "ticket": ticket(page),
                "answer": "entailment",
                "flag": "1",
                "comment": HOSTILE[0],
            },
        )
    for text in HOSTILE:  # each item's text was on a page, as text
        assert any(terminal_safe(text) in page for page in shown), text
    stored = labels(workspace.engine, study)
    assert len(stored) == len(HOSTILE) and {s.comment for s in stored} == {HOSTILE[0]}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.text(
            alphabet=st.sampled_from(list("<>\"'&/=; ab{}[]%\x1b\x07\x00\r\n\t\u202e\u2066")),
            max_size=40,
        ),
        min_size=2,
        max_size=2,
    )
)
def test_fuzzed_item_text_renders_as_text(texts):
    """Any mix of markup, quotes, template syntax and control characters in an item's
    fields renders as that text, sanitised, inside the page's own tags only."""
    from annotate import specs
    from annotate.web.page import views
    from annotate.web.page.app import environment

    spec = specs.load_task("superglue/rte")
    fields = {"premise": texts[0], "hypothesis": texts[1]}
    page = views.item_page(spec, fields)
    html = (
        environment()
        .get_template("screens/item.html")
        .render(
            item=page,
            ticket="t",
            csrf="c",
            revising=None,
            keys="",
            guidelines={"paragraphs": [], "hint": None},
            training=False,
        )
    )
    parser = Tags()
    parser.feed(html)
    assert {t for t, _ in parser.tags} <= {
        "section", "div", "form", "input", "button", "kbd", "span", "details", "summary",
        "label", "textarea", "nav", "a", "dialog", "h1", "h2", "pre", "p", "em", "strong", "mark",
        "ol", "ul", "li",
    }  # fmt: skip
    shown = "".join(parser.text)
    for text in texts:
        safe = terminal_safe(text)
        assert all(piece in shown for piece in safe.split("\n") if piece.strip())
        assert not any(c in shown for c in "\x1b\x07\x00\u202e\u2066")


# --- every layout, the gate's screens -----------------------------------------------------------
def sample_fields(spec) -> dict:
    """Fields of an item of `spec`: text for each, offsets for its highlights, MultiRC's
    candidate answers and ReCoRD's entities."""
    fields = {f.name: f"<i>{f.name}</i> says something here" for f in spec.fields}
    for h in spec.highlights:
        fields[h.start] = 0 if h.unit == "char" else 1
        if h.end:
            fields[h.end] = 3
    fields["answers"] = [{"idx": 7, "text": "first candidate"}, {"idx": 8, "text": "second"}]
    fields["entities"] = ["Entity One", "Entity Two"]
    fields["question"] = "cause" if spec.layout == "choice" else fields.get("question", "")
    return fields


def test_every_builtin_and_a_custom_task_draws_its_fields_and_answers(tmp_path: Path):
    """The page draws every task from its TaskSpec: each shown field's heading and text (as
    text), and each answer; highlights are marked; ReCoRD and MultiRC offer their choices."""
    from annotate import specs
    from annotate.presentation.item_layout import shown_fields
    from annotate.web.page import views
    from annotate.web.page.app import environment
    from tests.unit.test_custom_task import TOY

    toml = tmp_path / "toy.toml"
    toml.write_text(TOY)
    tasks = [*specs.all_tasks(), specs.load_task_file(toml, "toy")]
    assert len(tasks) >= 22
    template = environment().get_template("screens/item.html")
    for spec in tasks:
        fields = sample_fields(spec)
        html = template.render(
            item=views.item_page(spec, fields),
            ticket="t",
            csrf="c",
            revising=None,
            keys="",
            guidelines={"paragraphs": [], "hint": None},
            training=False,
        )
        inert(html, [], scripts=0)
        for f in shown_fields(spec, fields):
            if f.name in ("answers", "entities"):
                continue
            assert f">{f.label}<" in html, (spec.name, f.name)
        for option in spec.answer_options():
            assert option.text.replace("'", "&#39;").replace('"', "&#34;") in html or (
                spec.layout in ("multi_answer",)
            ), (spec.name, option.text)
        if spec.highlights:
            assert '<mark class="m0">' in html, spec.name
        if spec.layout == "entity_choice":
            assert 'data-number="2"' in html and "Entity Two" in html
        if spec.layout == "multi_answer":
            assert 'name="j2"' in html and "second" in html
        if spec.layout == "choice":
            assert "What was the CAUSE of this?" in html


def test_wsc_marks_the_span_s_own_words_not_a_neighbour(workspace, tmp_path: Path):
    """A WSC index off by one marks the pronoun itself; a noun phrase the text never spells
    out is marked in its own field only (the terminal's rule: tests/tui/test_layouts.py)."""
    from tests.tui.support import build_study
    from tests.tui.test_layouts import WSC_OFF

    study = build_study(
        workspace.engine,
        tmp_path,
        "superglue/wsc",
        dev=WSC_OFF[:1],
        test=WSC_OFF[1:],
        overrides={"training_items": 1, "gate_min_items": 1, "gate_threshold": 0.0},
    )
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c)
    marks = re.compile(r'<mark class="(m\d)">([^<]*)</mark>')

    def marked(html: str, field: str) -> list[tuple[str, str]]:
        block = html.split(f'id="field-{field}"', 1)[1].split('<div class="field"', 1)[0]
        return marks.findall(block)

    item = c.get("/")
    assert marked(item.text, "text") == [("m0", "drawer"), ("m1", "it")]
    c.post("/answer", data={"csrf": token, "ticket": ticket(item), "answer": "false"})
    test_item = c.get("/screen?next=1")
    assert screen(test_item) == "item"
    assert marked(test_item.text, "text") == [("m1", "them")]
    assert marked(test_item.text, "span1_text") == [("m0", "Lund and Berg")]


def test_a_multirc_revision_names_the_candidates_by_their_numbers(workspace, tmp_path: Path):
    """The revise banner and notice say "1: True, 2: False", the numbers the page shows, not
    the candidates' ids in the data."""
    study = layout_study(workspace.engine, tmp_path, "multi_answer", training_items=0)
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c)
    item = c.get("/")
    judged = {"j1": "1", "j2": "0", "j3": "1"}
    c.post("/answer", data={"csrf": token, "ticket": ticket(item), **judged})
    again = c.get("/revise")
    assert "(it was: 1: True, 2: False, 3: True)" in again.text
    changed = c.post("/answer", data={"csrf": token, "ticket": ticket(again), **judged, "j2": "1"})
    assert "Previous answer changed to: 1: True, 2: True, 3: True" in changed.text


def test_an_stsb_revision_tells_the_score_as_a_score(workspace, tmp_path: Path):
    """STS-B's banner said "it was: 0", a class label's wording; it says the score, in the
    terminal's words."""
    study = layout_study(workspace.engine, tmp_path, "scale", training_items=0)
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c)
    c.post("/answer", data={"csrf": token, "ticket": ticket(c.get("/")), "answer": "0"})
    again = c.get("/revise")
    assert "(your score was 0 on the scale 0–5)" in again.text
    # and the notice once changed says the new score the same way ("changed to: 3" before)
    changed = c.post("/answer", data={"csrf": token, "ticket": ticket(again), "answer": "3"})
    said = re.search(r'id="notice">([^<]*)<', changed.text).group(1)
    assert said == "Previous answer changed to: a score of 3 on the scale 0–5", said


def test_the_all_done_screen_offers_to_revise_the_last_answer(workspace, tmp_path: Path):
    """As the terminal's `u` there: "All done" links to the last test answer, and changing it
    comes back to "All done" with the new answer stored."""
    study = layout_study(workspace.engine, tmp_path, "pair", training_items=0, test=1)
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c)
    done = c.post(
        "/answer", data={"csrf": token, "ticket": ticket(c.get("/")), "answer": "entailment"}
    )
    assert screen(done) == "finished"
    assert 'href="/revise"' in done.text and 'data-keys="u"' in done.text
    again = c.get("/revise")
    assert screen(again) == "item" and "Revising your previous answer" in again.text
    changed = c.post(
        "/answer", data={"csrf": token, "ticket": ticket(again), "answer": "not_entailment"}
    )
    assert screen(changed) == "finished"
    said = re.search(r'id="notice">([^<]*)<', changed.text).group(1)
    assert said.startswith("Previous answer changed to:") and "not" in said.lower()


def test_all_done_without_a_test_answer_offers_no_revision(workspace, tmp_path: Path):
    """Every item had its labels before ana's first: "All done" has nothing to go back to."""
    from annotate.protocol.session import AnnotatorSession

    study = layout_study(
        workspace.engine, tmp_path, "pair", training_items=0, test=1, annotators_per_item=1
    )
    bo = AnnotatorSession.open(workspace.engine, study, "bo", create_annotator=True)
    bo.submit(bo.next_item(), "entailment")
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = csrf(c.get("/"))
    c.post("/signin", data={"csrf": token, "name": "ana", "token": ""})
    done = c.post("/start", data={"csrf": token})
    assert screen(done) == "finished"
    assert 'href="/revise"' not in done.text and "change your last answer" not in done.text


def test_an_entity_number_outside_the_list_is_refused_not_counted_from_the_end(
    workspace, tmp_path: Path
):
    study = layout_study(workspace.engine, tmp_path, "entity_choice")
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c)
    for number in ("0", "-1", "99", "abc", ""):
        refused = c.post(
            "/answer", data={"csrf": token, "ticket": ticket(c.get("/")), "entity": number}
        )
        assert screen(refused) == "item" and "Choose one of the entities." in refused.text
    assert labels(workspace.engine, study) == []
    item = c.get("/")
    second = re.search(
        r'data-number="2"[^>]*><kbd>2</kbd> <span dir="auto">([^<]+)</span></button>', item.text
    ).group(1)
    taken = c.post("/answer", data={"csrf": token, "ticket": ticket(item), "entity": "2"})
    assert screen(taken) == "feedback"
    assert [x.value for x in labels(workspace.engine, study)] == [second]


def test_waiting_at_the_gate_polls_and_moves_on_once_admitted(workspace, tmp_path: Path):
    from annotate.protocol import gate
    from annotate.protocol.studies import load_study

    study = layout_study(workspace.engine, tmp_path, "pair", gate_rule="manual")
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c)
    page = c.post(
        "/answer", data={"csrf": token, "ticket": ticket(c.get("/")), "answer": "entailment"}
    )
    assert screen(page) == "feedback"
    waiting = c.get("/screen?next=1")
    assert screen(waiting) == "waiting" and 'hx-get="/screen?waiting=1"' in waiting.text
    assert 'hx-trigger="every 5000ms"' in waiting.text
    assert c.get("/screen?waiting=1", headers={"HX-Request": "true"}).status_code == 204
    ctx = load_study(workspace.engine, study)
    gate.decide_manually(workspace.engine, ctx, "ana", True, reason="good training")
    moved = c.get("/screen?waiting=1", headers={"HX-Request": "true"})
    assert moved.status_code == 200 and screen(moved) == "item" and "Test" in moved.text


def trained_at_a_manual_gate(workspace, tmp_path: Path):
    """ana's page once she has answered the one training item of a study whose gate is decided
    by hand: (client, csrf token, study context)."""
    from annotate.protocol.studies import load_study

    study = layout_study(workspace.engine, tmp_path, "pair", gate_rule="manual")
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c)
    c.post("/answer", data={"csrf": token, "ticket": ticket(c.get("/")), "answer": "entailment"})
    return c, token, load_study(workspace.engine, study)


def test_a_refusal_overturned_by_hand_reaches_the_open_page(workspace, tmp_path: Path):
    """Turned away at the gate, then admitted by hand: the thank-you page polls quietly (204
    while still refused) and shows the first test item once the admission is recorded."""
    c, _, ctx = trained_at_a_manual_gate(workspace, tmp_path)
    gate.decide_manually(workspace.engine, ctx, "ana", False, reason="too fast")
    refused = c.get("/screen?next=1")
    assert screen(refused) == "rejected" and 'hx-get="/screen?waiting=rejected"' in refused.text
    poll = {"headers": {"HX-Request": "true"}}
    assert c.get("/screen?waiting=rejected", **poll).status_code == 204
    gate.decide_manually(workspace.engine, ctx, "ana", True, reason="trained in person")
    moved = c.get("/screen?waiting=rejected", **poll)
    assert moved.status_code == 200 and screen(moved) == "item" and "Test" in moved.text


def test_a_refused_trainee_who_quits_is_told_the_researcher_may_still_admit_them(
    workspace, tmp_path: Path
):
    """Refused at the gate, ana quits: the goodbye said there was nothing more to do in the
    study, yet the researcher may still admit her by hand, and then the page leads on to the
    test items. It says so, as the terminal does (closing.goodbye)."""
    c, token, ctx = trained_at_a_manual_gate(workspace, tmp_path)
    gate.decide_manually(workspace.engine, ctx, "ana", False, reason="too fast")
    assert screen(c.get("/screen?next=1")) == "rejected"
    left = c.post("/quit", data={"csrf": token})
    assert screen(left) == "left"
    text = " ".join(re.sub(r"<[^>]+>", " ", left.text).split())
    assert (
        "Your answers are saved. There is nothing more for you to do in this study unless the "
        "researcher admits you to its test items after all; if they tell you so, open this page "
        "again later to continue."
    ) in text
    assert "too fast" not in text
    gate.decide_manually(workspace.engine, ctx, "ana", True, reason="trained in person")
    signed_in(c)
    assert screen(again := c.get("/")) == "item" and "Test" in again.text


def test_the_held_screen_polls_quietly_until_its_figures_change(workspace, tmp_path: Path):
    """An item on another's screen: the poll answers 204 while the wait is as shown, and the
    screen anew once the figures moved (here: the hold given back, an item)."""
    from annotate.protocol.session import AnnotatorSession

    study = layout_study(workspace.engine, tmp_path, "pair", test=1)
    bo = AnnotatorSession.open(workspace.engine, study, "bo", create_annotator=True)
    bo.submit(bo.next_item(), "entailment")
    bo.next_item()  # the one test item, on bo's screen
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c)
    c.post("/answer", data={"csrf": token, "ticket": ticket(c.get("/")), "answer": "entailment"})
    held = c.get("/screen?next=1")
    assert screen(held) == "held" and "All done" not in held.text
    poll = re.search(r'hx-get="(/screen\?held=[^"]+)"', held.text).group(1)
    assert c.get(poll, headers={"HX-Request": "true"}).status_code == 204
    bo.release()
    moved = c.get(poll, headers={"HX-Request": "true"})
    assert moved.status_code == 200 and screen(moved) == "item"


def test_a_refused_trainee_sees_the_thank_you_screen(workspace, tmp_path: Path):
    study = layout_study(workspace.engine, tmp_path, "pair", gate_threshold=1.0)
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    token = signed_in(c)
    wrong = c.post(  # the training item's gold is "entailment"
        "/answer", data={"csrf": token, "ticket": ticket(c.get("/")), "answer": "not_entailment"}
    )
    assert screen(wrong) == "feedback" and "✗ Wrong" in wrong.text
    assert "You have finished training." in wrong.text
    refused = c.get("/screen?next=1")
    assert screen(refused) == "rejected" and "Thank you for your work" in refused.text
    assert 'name="ticket"' not in refused.text


def test_a_refusal_in_the_test_phase_says_the_answers_are_not_used(workspace, tmp_path: Path):
    """Refused after a test answer (set aside): the page says the researcher ended their part
    and the answers will not be used, as the terminal does, without the researcher's reason."""
    c, token, ctx = trained_at_a_manual_gate(workspace, tmp_path)
    gate.decide_manually(workspace.engine, ctx, "ana", True, reason="good training")
    item = c.get("/screen?next=1")
    assert screen(item) == "item" and "Test" in item.text
    c.post("/answer", data={"csrf": token, "ticket": ticket(item), "answer": "entailment"})
    gate.decide_manually(workspace.engine, ctx, "ana", False, reason="answers too fast")
    refused = c.get("/screen?next=1")
    assert screen(refused) == "rejected"
    text = " ".join(re.sub(r"<[^>]+>", " ", refused.text).split())
    assert "The researcher has ended your part in this study" in text
    assert "answers you gave will not be used" in text
    assert "will not need you" not in text and "too fast" not in text


def test_an_oversized_post_is_refused_before_it_is_read(workspace, pair):
    c = client(workspace.engine, pair, require_tokens=False)
    token = csrf(c.get("/"))
    big = c.post("/signin", data={"csrf": token, "name": "x" * (100 * 1024)})
    assert big.status_code == 413


def test_a_request_head_past_64_kb_is_refused_and_the_page_serves_on(workspace, pair):
    """httptools, the page's parser, takes headers of any length: the page bounds them as
    h11 does, so an endless header cannot grow the server's memory."""
    import socket

    import httpx

    from tests.web.support import served_page

    with served_page(workspace.engine, pair, require_tokens=False) as base:
        host, port = base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 400"), answer[:80]
        ordinary = httpx.get(base + "/", headers={"X-Note": "a" * 10_000}, timeout=10)
        assert ordinary.status_code == 200 and 'name="csrf"' in ordinary.text


def test_every_response_arrives_whole_in_one_write(workspace, pair):
    """The page sends a response's head with its body in one write: over a real socket a
    HEAD, pipelined requests and a POST that waits for 100 Continue are all answered, in
    order; and the head is written once, together with the body."""
    import socket
    from types import SimpleNamespace

    from annotate.web.page.bounded_http import _HeadWithBody
    from tests.web.support import served_page

    with served_page(workspace.engine, pair, require_tokens=False) as base:
        host, port = base.removeprefix("http://").split(":")

        def exchange(request: bytes, *, then: bytes = b"") -> bytes:
            with socket.create_connection((host, int(port)), timeout=10) as sock:
                sock.sendall(request)
                if then:  # the body, once the page said to go on
                    assert sock.recv(64).startswith(b"HTTP/1.1 100 Continue")
                    sock.sendall(then)
                received = b""
                while chunk := sock.recv(65536):
                    received += chunk
                return received

        head = exchange(b"HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"content-length:" in head.lower()
        three = exchange(
            b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n"
            b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /favicon.ico HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        statuses = [
            int(three[i + 9 : i + 12])
            for i in range(len(three))
            if three.startswith(b"HTTP/1.1 ", i)
        ]
        assert statuses[:2] == [404, 200] and len(statuses) == 3
        body = b"name=ana"
        posted = exchange(
            b"POST /signin HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 100-continue\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            + f"Origin: {base}\r\nContent-Length: {len(body)}\r\n\r\n".encode(),
            then=body,
        )
        assert posted.startswith(b"HTTP/1.1 400") and b"The page had expired" in posted

    class Cycle:  # uvicorn's request cycle, as far as the writes look at it
        response_started = False

    writes: list[bytes] = []
    cycle = Cycle()
    held = _HeadWithBody(
        SimpleNamespace(write=writes.append, close=lambda: writes.append(b"|")), cycle
    )
    held.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # before the response starts: at once
    cycle.response_started = True
    held.write(b"HEAD\r\n\r\n")
    held.write(b"body")
    held.write(b"more")
    assert writes == [b"HTTP/1.1 100 Continue\r\n\r\n", b"HEAD\r\n\r\nbody", b"more"]
    writes.clear()
    no_body = _HeadWithBody(
        SimpleNamespace(write=writes.append, close=lambda: writes.append(b"|")), cycle
    )
    no_body.write(b"HEAD\r\n\r\n")
    no_body.close()  # a HEAD answer on a closing connection: its head goes out first
    assert writes == [b"HEAD\r\n\r\n", b"|"]


def test_a_served_request_leaves_nothing_for_the_garbage_collector(workspace, pair):
    """Each request is freed as soon as it is answered: none leaves a reference cycle
    behind. Cycles piled up (a request's scope, session and events, thousands of them in
    a busy page process) until a full collection, which then held every request on the
    process for 40-90 ms: the slowest answers of a 1,000-worker crowd."""
    import gc

    import httpx
    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

    from tests.web.support import served_page

    def cycles_alive() -> int:
        return sum(isinstance(o, RequestResponseCycle) for o in gc.get_objects())

    with served_page(workspace.engine, pair, require_tokens=False) as base:
        with httpx.Client(base_url=base, timeout=10) as browser:
            assert browser.get("/").status_code == 200  # the page's first request warms up
        gc.collect()
        gc.disable()  # what refcounting alone frees
        try:
            before = cycles_alive()
            with httpx.Client(base_url=base, timeout=10) as browser:
                for _ in range(20):
                    assert browser.get("/").status_code == 200
                    expired = browser.post(
                        "/signin", data={"csrf": "old"}, headers={"Origin": base}
                    )
                    assert expired.status_code == 400  # a form from before: the page says so
            left = cycles_alive() - before
        finally:
            gc.enable()
    assert left <= 1, f"{left} answered requests were left for the collector"


def test_the_processes_of_serve_workers_take_each_others_cookies(workspace, pair, monkeypatch):
    """`serve --workers N`: each process builds its page from ANNOTATE_PAGE_WORKER with the
    one cookie key and limits file the supervisor set, so a worker signed in on one process
    carries on, on the next, with the item it was given."""
    import json

    from starlette.testclient import TestClient

    from annotate.web.page.serve import worker_page

    add_annotator(workspace.engine, "ana")
    options = {"host": "127.0.0.1", "port": 8000, "public_url": None, "annotator": None}
    monkeypatch.setenv(
        "ANNOTATE_PAGE_WORKER",
        json.dumps({"url": workspace.url, "study": pair, **options, "require_tokens": False}),
    )
    monkeypatch.setenv("ANNOTATE_WEB_SECRET", "one-key-for-the-run")
    first, second = (
        TestClient(worker_page(), base_url=ORIGIN, headers={"Origin": ORIGIN}) for _ in range(2)
    )
    token = signed_in(first)
    second.cookies = first.cookies
    again = second.get("/")
    assert screen(again) == "item"  # not "signin": the other process took the cookie
    answered = second.post(
        "/answer", data={"csrf": token, "ticket": ticket(again), "answer": "entailment"}
    )
    assert answered.status_code == 200 and screen(answered) != "signin"
    assert [label.value for label in labels(workspace.engine, pair)] == ["entailment"]

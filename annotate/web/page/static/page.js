/* The annotator page's keys: the same keys as the terminal app (shown on each button), plus
   click and tap, which work without this script. Untrusted text never passes through here:
   the script only clicks, checks and focuses elements the server drew. */
(function () {
  "use strict";
  var typed = "";  // digits typed so far of a ReCoRD entity number that could still grow

  function screen() { return document.getElementById("screen"); }

  function keyName(e) { return e.key === " " ? "Space" : e.key; }

  function byKey(root, key) {
    var all = root.querySelectorAll("[data-keys]");
    for (var i = 0; i < all.length; i++) {
      if (all[i].getAttribute("data-keys").split(" ").indexOf(key) >= 0) return all[i];
    }
    return null;
  }

  function say(text) {
    var s = screen(), p = document.getElementById("notice");
    if (!p) {
      p = document.createElement("p");
      p.id = "notice"; p.className = "notice";
      var bar = s.querySelector(".bar");
      bar.parentNode.insertBefore(p, bar.nextSibling);
    }
    p.textContent = text;
    announce(text);
  }

  // --- Words a screen reader is to say: the page's one live region ------------------------
  // A live region is read when its words change, not when it comes with them: a notice made
  // here, or swapped in with its screen ("not saved", "test phase"), was shown and never
  // read. #announcer stays in the page; it takes the words of both.
  var announcing = 0;
  function announce(text) {
    var region = document.getElementById("announcer");
    if (!region) return;
    region.textContent = "";  // the same words again (a second "not sent") are news again
    clearTimeout(announcing);
    if (text) announcing = setTimeout(function () { region.textContent = text; }, 100);
  }
  function announceScreen() {  // a screen with nothing to say clears the last screen's words
    var parts = screen().querySelectorAll("[data-announce]");
    var text = Array.prototype.map.call(parts, function (p) { return p.textContent.trim(); });
    announce(text.join(" "));
  }

  function heading(s) {  // focusable by the script only, as #body is by its tabindex
    var h = s.querySelector("h1");
    if (h && !h.hasAttribute("tabindex")) h.setAttribute("tabindex", "-1");
    return h;
  }

  // A new screen's focus: its first control to press, the item's text, or else its heading,
  // which a screen reader then says (on the bare <main> it said nothing of the screen).
  function focusScreen() {
    typed = "";
    var s = screen();
    var target = s.querySelector("[data-focus]") || s.querySelector("#body") || heading(s) || s;
    var current = s.querySelector(".candidate");
    if (current) setCurrent(firstOpen(0) || current);
    else target.focus({ preventScroll: true });
  }

  // --- MultiRC: one candidate is "current"; the answer keys judge it -----------------------
  function rows() { return Array.prototype.slice.call(screen().querySelectorAll(".candidate")); }
  function judged(row) { return row.querySelector("input:checked") !== null; }
  function firstOpen(from) {
    var r = rows();
    for (var i = 0; i < r.length; i++) { var row = r[(from + i) % r.length]; if (!judged(row)) return row; }
    return null;
  }
  function setCurrent(row) {
    rows().forEach(function (r) { r.classList.remove("current"); });
    row.classList.add("current");
    var input = row.querySelector("input:checked") || row.querySelector("input");
    input.focus({ preventScroll: false });
  }
  function currentRow() { return screen().querySelector(".candidate.current") || rows()[0]; }

  function multiKey(e, key) {
    var r = rows(), row = currentRow(), at = r.indexOf(row);
    if (key === "ArrowDown" || key === "ArrowUp") {
      var next = r[Math.min(Math.max(at + (key === "ArrowDown" ? 1 : -1), 0), r.length - 1)];
      setCurrent(next); return true;
    }
    var radio = row.querySelector('input[data-key="' + CSS.escape(key) + '"]');
    if (radio) {
      radio.checked = true;
      var following = firstOpen(at + 1);
      setCurrent(following || row);
      return true;
    }
    if (key === "Enter") { submitJudgements(); return true; }
    return false;
  }
  function submitJudgements() {
    var left = rows().filter(function (r) { return !judged(r); }).length;
    if (left) { say("Judge every answer first (" + left + " left)."); return; }
    document.getElementById("submit").click();
  }

  // --- ReCoRD: a number picks an entity; the arrows move; Enter picks the focused one --------
  function entityKey(e, key) {
    var buttons = Array.prototype.slice.call(screen().querySelectorAll(".entity"));
    var at = buttons.indexOf(document.activeElement);
    if (key === "ArrowDown" || key === "ArrowUp") {
      typed = "";
      var next = Math.min(Math.max((at < 0 ? 0 : at) + (key === "ArrowDown" ? 1 : -1), 0), buttons.length - 1);
      buttons[next].focus(); return true;
    }
    if (/^[0-9]$/.test(key)) {
      var count = buttons.length, number = null, candidates = [typed + key, key];
      for (var i = 0; i < candidates.length; i++) {
        var n = parseInt(candidates[i], 10);
        if (n >= 1 && n <= count) { number = n; typed = candidates[i]; break; }
      }
      if (number === null) { typed = ""; return true; }
      buttons[number - 1].focus();
      if (number * 10 > count) { typed = ""; buttons[number - 1].click(); }
      return true;
    }
    if (key === "Enter" && at < 0 && buttons.length) { buttons[0].focus(); return true; }
    return false;
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var key = keyName(e), s = screen(), t = e.target;
    if (document.querySelector("dialog[open]")) return;  // Escape closes it (the browser's own)
    if (t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type !== "radio" && t.type !== "checkbox"))) {
      if (key === "Escape" && t.id === "comment") { e.preventDefault(); focusScreen(); }
      return;  // typing a name, a token or a comment
    }
    if (pageKey(key, t)) { e.preventDefault(); return; }
    var form = s.querySelector("#answer-form");
    var kind = form ? form.getAttribute("data-kind") : null;
    if (kind === "multi_answer" && multiKey(e, key)) { e.preventDefault(); return; }
    if (kind === "entity_choice" && entityKey(e, key)) { e.preventDefault(); return; }
    if (key === "Enter" && t && (t.tagName === "BUTTON" || t.tagName === "A" || t.tagName === "SUMMARY")
        && !(t.hasAttribute("data-keys") && t.getAttribute("data-keys").indexOf("Enter") >= 0)) {
      return;  // Enter on a focused control presses that control
    }
    var el = byKey(s, key);
    if (!el) return;
    e.preventDefault();
    if (el.hasAttribute("data-say")) { say(el.getAttribute("data-say")); return; }
    if (el.tagName === "SUMMARY") { openFlag(); return; }
    el.click();
  });

  // --- PgUp/PgDn scroll a long passage, wherever the focus is (the keys say they do) ------
  // The passage scrolls in its own box: with the focus in it (a pair's item) the browser
  // scrolls it, but MultiRC's focus is on a judgement, ReCoRD's on an entity and the
  // feedback's on "continue", where the keys would scroll the window, or nothing.
  function pageKey(key, t) {
    if (key !== "PageDown" && key !== "PageUp") return false;
    var body = screen().querySelector("#body");
    if (!body || body.contains(t) || body.scrollHeight <= body.clientHeight) return false;
    var step = Math.max(body.clientHeight - 40, 40);
    body.scrollBy(0, key === "PageDown" ? step : -step);
    return true;
  }

  function openFlag() {
    var d = document.getElementById("flag");
    if (!d) return;
    d.open = true;
    document.getElementById("flag-box").checked = true;
    document.getElementById("comment").focus();
  }

  document.addEventListener("click", function (e) {
    var t = e.target.closest && e.target.closest("[data-open]");
    if (t) { document.getElementById(t.getAttribute("data-open")).showModal(); return; }
    var q = e.target.closest && e.target.closest("#quit");
    if (q) {
      var c = document.getElementById("comment"), box = document.getElementById("flag-box");
      if (box && box.checked && !confirm("Your flag" + (c && c.value.trim() ? " and comment" : "") +
          " is not sent yet (it goes with your answer). Leave anyway?")) { e.preventDefault(); }
    }
    var entity = e.target.closest && e.target.closest(".candidate");
    if (entity) setCurrent(entity);
  });
  // A flag (and its comment) not sent yet goes with the answer: leaving the page by a reload,
  // the Back button or closing the tab would drop it, so the browser asks first, as Quit does.
  // (A form posted without htmx, which would have stopped it, leaves the page to send it: no
  // question then.)
  var sending = false;
  document.addEventListener("submit", function (e) { if (!e.defaultPrevented) sending = true; });
  window.addEventListener("beforeunload", function (e) {
    var box = document.getElementById("flag-box");
    if (sending || !box || !box.checked || !screen().contains(box)) return;
    e.preventDefault();
    e.returnValue = "";
  });
  document.addEventListener("change", function (e) {
    if (e.target.id === "comment" || e.target.id === "flag-box") return;
  });
  document.addEventListener("input", function (e) {
    if (e.target.id === "comment" && e.target.value.trim()) document.getElementById("flag-box").checked = true;
  });
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (form.id === "answer-form" && form.getAttribute("data-kind") === "multi_answer" &&
        rows().some(function (r) { return !judged(r); })) {
      e.preventDefault(); submitJudgements();
    }
  }, true);
  // --- "Continue" after feedback: the next item came with the feedback ---------------------
  // (a <template> the server drew); it is shown at once, with no request, and its form says
  // how many milliseconds after the feedback that was, so its answer time leaves out the
  // reading of the feedback. Without the template (or this script), the link asks the server.
  var shownAt = 0;  // when the screen in place was shown (performance.now())
  function shown() { shownAt = performance.now(); }
  document.addEventListener("click", function (e) {
    var c = e.target.closest && e.target.closest("#continue");
    var ready = document.getElementById("upcoming");
    if (!c || !ready || !screen().contains(ready)) return;
    e.preventDefault();
    e.stopPropagation();  // before htmx's own listener: no request
    var after = Math.max(0, Math.round(performance.now() - shownAt));
    var s = screen(), next = ready.content.cloneNode(true), title = next.querySelector("title");
    if (title) { document.title = title.textContent; title.remove(); }  // as htmx does
    s.replaceChildren(next);
    var field = s.querySelector("[data-shown-after]");
    if (field) field.value = String(after);
    shown();
    if (window.htmx) window.htmx.process(s);
    focusScreen();
    toTop();
    announceScreen();
  }, true);

  // --- A new screen opens at its top --------------------------------------------------------
  // Swapping #screen (htmx's swaps and the ready item above alike) leaves the window's scroll
  // where it was: an annotator who scrolled down to answer would land past the feedback's
  // start, or mid-way through the next passage. So every new screen is shown from its top
  // (after the focus, which may scroll to a MultiRC candidate), and a part it marks
  // data-in-view (the feedback's verdict) is then brought into view if the window is too low
  // to hold it there. (A poll that finds nothing new gets a 204, which swaps nothing: the
  // reader stays where they are.)
  function toTop() {
    window.scrollTo(0, 0);
    var part = screen().querySelector("[data-in-view]");
    if (part && part.getBoundingClientRect().bottom > window.innerHeight) part.scrollIntoView({ block: "start" });
  }

  document.addEventListener("htmx:afterSettle", function () {
    shown(); focusScreen(); toTop(); announceScreen();
  });

  // --- The server out of reach (stopped, restarting, the network cut) ---------------------
  // htmx then swaps nothing and says nothing: the item stayed on the screen as if the click
  // had been taken, and a worker who thought they had answered did not know to press again.
  // The request reached nobody, so nothing of it was stored: say so, and that pressing again
  // sends it (the screen, its form and its item stay as they were). A screen that checks by
  // itself (waiting, held) was pressed by nobody: it says it keeps trying, and the notice
  // goes once a check gets through (a check with nothing new swaps nothing).
  function unreachable(e) {
    var elt = e.detail && e.detail.elt;
    var polling = elt && elt.getAttribute && /every /.test(elt.getAttribute("hx-trigger") || "");
    var sent = e.detail && e.detail.requestConfig && e.detail.requestConfig.verb === "post";
    var text = polling ? "The server could not be reached just now: this page keeps trying by itself."
      : "The server could not be reached: " + (sent ? "your answer was not sent" : "nothing changed") +
        ". Nothing is lost: press it again in a moment.";
    var shownAlready = document.getElementById("notice");
    // said once for a screen that keeps trying, not again at each of its checks
    if (!(polling && shownAlready && shownAlready.textContent === text)) say(text);
    document.getElementById("notice").setAttribute("data-unreachable", "");
  }
  document.addEventListener("htmx:sendError", unreachable);
  document.addEventListener("htmx:timeout", unreachable);
  document.addEventListener("htmx:afterRequest", function (e) {
    var n = document.getElementById("notice");
    if (e.detail && e.detail.successful && n && n.hasAttribute("data-unreachable")) n.remove();
  });
  document.addEventListener("DOMContentLoaded", function () { shown(); focusScreen(); });
})();

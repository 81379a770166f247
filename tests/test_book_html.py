"""Checks of the built book (_build/html) in a real headless Chromium.

Run after `make book` (`make test` does both). Each page of _toc.yml is served from a local HTTP server on
127.0.0.1 and loaded in Chromium, whose DNS is switched off, so a page that needs the internet fails here
the same way it would fail a reader who is offline. For every page:

- it was built, and loads with no SEVERE message in the browser console;
- it loads nothing from outside the book (scripts, styles, images, fonts);
- every piece of math is typeset by MathJax, without MathJax errors.

For every chapter (a notebook), compared with the executed notebook in _build/jupyter_execute:

- each figure the notebook produced is on the page and its image loads;
- a notebook that shows ipywidgets has its widget state embedded in the page
  (script type application/vnd.jupyter.widget-state+json) and the widgets are rendered from it;
- the Colab launch link opens this chapter's .ipynb in the repository and branch of _config.yml.

Skipped, with the reason, where there is no built book, no Chromium or chromedriver, or no selenium.
Set BOOK_SCREENSHOTS=DIR to save a screenshot of every page there.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
EXECUTED = ROOT / "_build" / "jupyter_execute"

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
IMAGE_MIMES = ("image/png", "image/jpeg", "image/svg+xml", "image/gif")
# Cell tags that keep an output out of the page.
REMOVED_OUTPUT_TAGS = {"remove-output", "remove_output", "remove-cell", "remove_cell"}


def toc_pages() -> list[str]:
    """Every page of _toc.yml (paths without extension), root first."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [p.removesuffix(".md").removesuffix(".ipynb") for p in pages]


def is_notebook(page: str) -> bool:
    return (ROOT / f"{page}.ipynb").exists()


CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
PAGES = toc_pages()


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def built():
    if not (HTML / "index.html").exists():
        pytest.skip("no built book in _build/html: run `make book` first")
    return HTML


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def base_url(built):
    handler = functools.partial(_QuietHandler, directory=str(built))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _find(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser(built):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    chrome = os.environ.get("CHROME_BIN") or _find("chromium", "chromium-browser", "google-chrome")
    driver_path = os.environ.get("CHROMEDRIVER") or _find("chromedriver")
    if not chrome or not driver_path:
        pytest.skip(
            "no Chromium or chromedriver on PATH (Debian: apt-get install chromium chromium-driver); "
            "the built pages were not checked in a browser"
        )
    profile = tempfile.mkdtemp(prefix="book-html-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chrome
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1000",
        f"--user-data-dir={profile}",
        # No name resolves except the local server's address: the book must work offline.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=driver_path)
    try:
        driver = webdriver.Chrome(options=options, service=service)
    except Exception as exc:  # a browser that cannot start is an environment problem, said loudly
        shutil.rmtree(profile, ignore_errors=True)
        pytest.skip(f"Chromium did not start: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


# ---------------------------------------------------------------- helpers

# Resolves when MathJax 3 has finished its first typeset; null where the page loads no MathJax.
_WAIT_MATHJAX = """
const done = arguments[arguments.length - 1];
const t0 = Date.now();
if (!document.querySelector('script[src*="/mathjax/"]')) { done(null); return; }
(function poll() {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(() => done('typeset'), (e) => done('error: ' + e));
  } else if (Date.now() - t0 > 20000) {
    done(null);
  } else {
    setTimeout(poll, 50);
  }
})();
"""

_PAGE_FACTS = """
const origin = window.location.origin;
const external = (u) => /^https?:/i.test(u) && !u.startsWith(origin);
const loaded = performance.getEntriesByType('resource').map((e) => e.name).filter(external);
const linked = [];
document.querySelectorAll('script[src], img[src], iframe[src]').forEach((el) => {
  if (external(el.src)) linked.push(el.src);
});
document.querySelectorAll('link[href]').forEach((el) => {
  const rel = (el.getAttribute('rel') || '').toLowerCase();
  if (/stylesheet|preload|modulepreload|icon/.test(rel) && external(el.href)) linked.push(el.href);
});
const math = Array.from(document.querySelectorAll('span.math, div.math'));
const images = Array.from(document.querySelectorAll('.cell_output img, .cell_output svg'));
const colab = Array.from(document.querySelectorAll('a[href*="colab.research.google.com"]')).map((a) => a.href);
return {
  external: Array.from(new Set(loaded.concat(linked))),
  math: math.length,
  math_untypeset: math.filter((el) => !el.querySelector('mjx-container')).map((el) => el.textContent.slice(0, 80)),
  math_errors: Array.from(document.querySelectorAll('mjx-merror')).map((el) => el.textContent.slice(0, 80)),
  images: images.length,
  broken_images: images.filter((el) => el.tagName === 'IMG' && !(el.complete && el.naturalWidth > 0))
                       .map((el) => el.getAttribute('src')),
  widget_state: document.querySelectorAll('script[type="application/vnd.jupyter.widget-state+json"]').length,
  widget_views: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length,
  widgets_rendered: document.querySelectorAll('.widget-subarea').length,
  colab: colab,
  live_panels: document.querySelectorAll('.live-panel').length,
  live_answers: document.querySelectorAll('.live-answer').length,
};
"""


def load(browser, base_url: str, page: str) -> dict:
    browser.get_log("browser")  # drop messages left over from the previous page
    browser.get(f"{base_url}/{page}.html")
    mathjax = browser.execute_async_script(_WAIT_MATHJAX)
    facts = browser.execute_script(_PAGE_FACTS)
    if facts["widget_views"]:
        # The widget renderer starts on window load and replaces the view scripts asynchronously.
        deadline = time.time() + 15
        while facts["widgets_rendered"] < facts["widget_views"] and time.time() < deadline:
            time.sleep(0.2)
            facts = browser.execute_script(_PAGE_FACTS)
    facts["mathjax"] = mathjax
    facts["console"] = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    shots = os.environ.get("BOOK_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(shots) / (page.replace("/", "__") + ".png")))
    return facts


def executed_notebook(page: str) -> dict:
    path = EXECUTED / f"{page}.ipynb"
    if not path.exists():
        pytest.fail(f"{page}: no executed notebook at {path.relative_to(ROOT)}; was the chapter executed?")
    return json.loads(path.read_text())


def expected_outputs(nb: dict) -> tuple[int, int, bool]:
    """(figures, widget views, widget state present) that the executed notebook puts on its page."""
    figures = views = 0
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        if REMOVED_OUTPUT_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            continue
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data:
                views += 1
            elif any(m in data for m in IMAGE_MIMES):
                figures += 1
    state = bool(nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state"))
    return figures, views, state


def colab_url(page: str) -> str:
    launch = CONFIG["launch_buttons"]["colab_url"].rstrip("/")
    repo = CONFIG["repository"]["url"].rstrip("/").removeprefix("https://github.com/")
    branch = CONFIG["repository"].get("branch", "main")
    book = CONFIG["repository"].get("path_to_book", "").strip("/")
    path = f"{book}/{page}.ipynb" if book else f"{page}.ipynb"
    return f"{launch}/github/{repo}/blob/{branch}/{path}"


# ---------------------------------------------------------------- tests


def test_toc_lists_pages():
    assert PAGES, "_toc.yml lists no pages"
    missing = [p for p in PAGES if not (ROOT / f"{p}.md").exists() and not is_notebook(p)]
    assert not missing, f"_toc.yml names pages with no .md or .ipynb source: {missing}"


@pytest.mark.parametrize("page", PAGES)
def test_page(page, built, base_url, browser):
    assert (built / f"{page}.html").exists(), f"{page}.html was not built"
    facts = load(browser, base_url, page)

    assert not facts["console"], f"{page}: SEVERE console messages: " + "; ".join(
        e.get("message", "") for e in facts["console"]
    )
    assert not facts["external"], f"{page}: loads from outside the book: {facts['external']}"

    if facts["math"]:
        assert facts["mathjax"] == "typeset", f"{page}: has math but MathJax did not run ({facts['mathjax']})"
        assert not facts["math_untypeset"], f"{page}: math not typeset: {facts['math_untypeset']}"
        assert not facts["math_errors"], f"{page}: MathJax errors: {facts['math_errors']}"

    if not is_notebook(page):
        return
    figures, views, state = expected_outputs(executed_notebook(page))
    assert facts["images"] >= figures, (
        f"{page}: the notebook made {figures} figure(s), the page shows {facts['images']}"
    )
    assert not facts["broken_images"], f"{page}: images that did not load: {facts['broken_images']}"
    if views or state:
        assert facts["widget_state"] >= 1, f"{page}: shows widgets but has no embedded {WIDGET_STATE}"
        assert facts["widgets_rendered"] >= facts["widget_views"], (
            f"{page}: {facts['widget_views']} widget(s) on the page, {facts['widgets_rendered']} rendered"
        )
    want = colab_url(page)
    assert want in facts["colab"], f"{page}: no Colab launch link to {want} (found {facts['colab']})"


@pytest.mark.parametrize("page", ["search", "genindex"])
def test_generated_page(page, built, base_url, browser):
    facts = load(browser, base_url, page)
    assert not facts["console"], f"{page}: SEVERE console messages: " + "; ".join(
        e.get("message", "") for e in facts["console"]
    )
    assert not facts["external"], f"{page}: loads from outside the book: {facts['external']}"


# ---------------------------------------------------------------- the live book

LIVE_LAYOUT_PAGE = "chapters/01_layouts"
LIVE_ALGEBRA_PAGE = "chapters/02_layout_algebra"
LIVE_TIMINGS = ROOT / "_build" / "live-timings.json"  # what the last run measured (benchmarks/live/RESULTS.md)

# Layout explorer cases: (shape, stride); algebra explorer cases: (op, A, B). Each is typed into the page
# and the page's text must equal what cutelite prints in CPython, error text included.
LAYOUT_CASES = [
    ("(4,8)", "(1,4)"), ("(4,(2,3))", "(2,(1,8))"), ("(2,2,2)", "(4,2,1)"), ("(4,8)", ""),
    ("(8,4):(4,1)", ""), ("(4,8)", "(1,4,2)"), ("(4,8", "(1,4)"), ("(32,32)", "(1,32)"),
]
ALGEBRA_CASES = [
    ("composition", "(4,8):(8,1)", "(2,2):(1,4)"),
    ("composition", "(4,6):(1,8)", "3:2"),                # Shape Divisibility Condition: must raise
    ("logical_divide", "(4,2,3):(2,1,8)", "4:2"),
    ("zipped_divide", "(9,(4,8)):(59,(13,1))", "(3:3, (2,4):(1,8))"),
    ("complement", "4:2", "16"),
    ("coalesce", "(2,(1,6)):(1,(6,2))", ""),
    ("right_inverse", "(4,8):(8,1)", ""),
    ("blocked_product", "(2,2):(1,2)", "(3,4)"),
    ("raked_product", "(2,2):(1,2)", "(3,4):(4,1)"),
    ("flat_divide", "(8,8):(1,8)", "(2,4)"),
]
# Inputs that once froze every explorer of a page (issue 18), by explorer kind: each must come back with a
# message (refused before any work, or stopped at the time limit), after which the explorer computes again.
SLOW_INPUTS = {
    "layout": [{"shape": "(3000,3000)", "stride": ""}, {"shape": "100000000", "stride": ""}],
    "algebra": [{"op": "composition", "a": "100000000:1", "b": "100000000:1"},
                {"op": "right_inverse", "a": "(" + ",".join(["2"] * 5000) + ")", "b": ""},
                {"op": "complement", "a": "4:2", "b": "1000000000"}],
    "banks": [{"M": "1000000000"}],
    "tiled_mma": [{"thr": "(32,32,1)"}, {"perm": "(512,512,512)"}],
    "partition": [{"tile": "(3000,3000)"}],
    "fragments": [{"lane": "100000000000000"}],
    "tile_pipeline": [{"tile": "(1024,1024,512)"}, {"warps": "(32,32)"}],
    "gmma_tma": [{"tile": "(4096,4096)"}],
    "online_softmax": [{"scores": ", ".join(["1"] * 5000)}],
}
# Inputs typed into the explorers of chapters 7, 8 and 10 (on top of what the panel shows): each must show what
# cutelite computes in CPython for the whole form, error text included.
TYPED_INPUTS = {
    "tile_pipeline": [{"kernel": "tc_sm75", "stages": "2"},
                      {"kernel": "tc_sm80_prefetch", "tile": "(128,256,32)", "warps": "(2,4)", "min_blocks": "1"},
                      {"b_major": "K-major", "stages": "1"}, {"dtype": "bfloat16", "stages": "3", "tile": "(64,64,64)"}],
    "gmma_tma": [{"major": "MN", "order": "K first"}, {"swizzle": "SW64", "dtype": "bfloat16_t", "tile": "(64,64)"},
                 {"k_tile": "99"}, {"major": "K", "swizzle": "SW32", "dtype": "tfloat32_t", "tile": "(64,32)"}],
    "online_softmax": [{"step": "2"}, {"scores": "-inf, -inf, 2, 1, -inf, 5", "block": "2", "step": "0"},
                       {"scale": "0.125", "block": "1", "step": "4"}, {"scores": "1, two"}],
}

_GO_LIVE = """
const done = arguments[arguments.length - 1];
const t0 = performance.now();
document.querySelector('.live-go').click();
(function poll() {
  const p = document.querySelector('.live-panel');
  if (p && p.dataset.draws) done({ms: performance.now() - t0});
  else if (performance.now() - t0 > 100000) {
    done({error: "not live after 100 s: " + ((document.querySelector(".live-status") || {}).textContent || "")});
  }
  else setTimeout(poll, 20);
})();
"""

# Set the fields of the first live panel of `kind`, wait until its text shows them; {text, ms, svg}.
_SET_FIELDS = """
const [kind, values, done] = arguments;
const panel = document.querySelector(`.live-panel[data-kind="${kind}"]`);
const form = panel.querySelector('form');
for (const [name, value] of Object.entries(values)) {
  const input = form.elements[name];
  input.value = value;
  input.dispatchEvent(new Event('input', {bubbles: true}));
}
const want = JSON.stringify(Object.fromEntries(new FormData(form)));
const t0 = performance.now();
(function poll() {
  if (panel.dataset.shown === want) {
    done({text: panel.querySelector('.live-text').textContent, ms: Number(panel.dataset.ms),
          svg: panel.querySelectorAll('.live-picture svg rect').length, values: want});
  } else if (performance.now() - t0 > 60000) done({error: 'no redraw for ' + want});
  else setTimeout(poll, 5);
})();
"""

# Type an answer into the answer box of exercise `name`, press Check, wait for the verdict; {ok, text}.
_ANSWER = """
const [name, answer, done] = arguments;
const form = Array.from(document.querySelectorAll('.live-answer'))
  .find((f) => f.querySelector('.live-label').textContent === name + ': ');
if (!form) { done({error: 'no answer box for ' + name}); return; }
form.querySelector('input').value = answer;
const verdict = form.querySelector('.live-verdict');
verdict.textContent = '';
verdict.className = 'live-verdict';
form.querySelector('button').click();
const t0 = performance.now();
(function poll() {
  if (/right|wrong/.test(verdict.className) || /failed/.test(verdict.textContent)) {
    done({ok: verdict.classList.contains('right'), text: verdict.textContent});
  } else if (performance.now() - t0 > 60000) done({error: 'no verdict: ' + verdict.textContent});
  else setTimeout(poll, 20);
})();
"""

_EXERCISE_SPECS = """
return Array.from(document.querySelectorAll('div.cutelite-live'))
  .map((d) => JSON.parse(d.dataset.live)).filter((s) => s.live === 'exercise');
"""

_WORKERS = """
return {workers: Number(document.body.dataset.liveWorkers || 0), stops: Number(document.body.dataset.liveStops || 0)};
"""


# The page stops a computation after 2 s; a test must not depend on how busy the machine is, so it
# allows a minute, except where it forces a stop.
_PATIENT = "window.cuteliteLiveLimitMs = 60000;"


def go_live(browser, base_url, page):
    facts = load(browser, base_url, page)
    assert facts["live_panels"], f"{page}: no live explorer on the page"
    browser.execute_script(_PATIENT)
    result = browser.execute_async_script(_GO_LIVE)
    assert "error" not in result, f"{page}: the live runtime did not start: {result}"
    return result["ms"]


def set_fields(browser, kind, values):
    shown = browser.execute_async_script(_SET_FIELDS, kind, values)
    assert "error" not in shown, shown
    return shown


def cpython_view(kind, values_json):
    from cutelite.teach.live import view
    return json.loads(view(kind, values_json))["text"]


# ---- answers in every spelling, made from an exercise's spec: what a reader might type for the right answer
def _py(t):
    return "(" + ", ".join(_py(v) for v in t) + ("," if len(t) == 1 else "") + ")" if isinstance(t, tuple) else str(t)


def _cpp(t, maker):
    return f"{maker}(" + ", ".join(_cpp(v, maker) for v in t) + ")" if isinstance(t, tuple) else f"Int<{t}>{{}}"


def spellings(spec):
    """Typed spellings of the right answer of an announced exercise (from its expected value, or for a
    swizzle exercise the first conflict-free swizzle in its table)."""
    from cutelite import Layout, rank, size
    from cutelite.teach.announce import decode
    from cutelite.teach.answers import Word, canon, expected_value
    if spec["checker"] == "swizzle":
        b, m, s = next(tuple(map(int, k.split(","))) for k, v in spec["costs"].items()
                       if isinstance(v, list) and v[0] == 0)
        return [f"Sw<{b},{m},{s}>", f"Swizzle({b}, {m}, {s})", f"({b},{m},{s})", f"cute::Swizzle<{b},{m},{s}>{{}}",
                f"cute.make_swizzle({b}, {m}, {s})"]
    want = expected_value(canon(decode(spec["expected"])))
    if spec["checker"] == "offsets":     # a list in index order, or print_layout's grid of a layout
        if not isinstance(want, Layout):
            return [_py(want), json.dumps(json.loads(json.dumps(want)))]
        rows = [[want(m, n) for n in range(size(want, 1))] for m in range(size(want, 0))] if rank(want) == 2 else None
        return [json.dumps([want(i) for i in range(size(want))])] + ([json.dumps(rows), _py(tuple(map(tuple, rows)))]
                                                                      if rows else [])
    if isinstance(want, Layout):
        shape, stride = canon(want.shape), canon(want.stride)
        return [str(want), str(want).replace("_", ""), f"Layout({_py(shape)}, {_py(stride)})",
                f"make_layout({_cpp(shape, 'make_shape')}, {_cpp(stride, 'make_stride')})",
                f"({_py(shape)}, {_py(stride)})" if isinstance(shape, tuple) else f" {shape} : {stride} ",
                f"cute.make_layout({_py(shape)}, stride={_py(stride)})"]
    if isinstance(want, Word):
        return [str(want), f"'{want}'", f"  {want} ", f"cute::{want}"]
    if isinstance(want, tuple):
        return [_py(want), json.dumps(json.loads(json.dumps(want))), _py(want).replace(" ", "")]
    return [str(want), f"_{want}", f"Int<{want}>{{}}"]


def check_answers(browser, page):
    """Every exercise on the page: each spelling of its right answer passes (C++'s, Python's, the CuTe DSL's),
    each hinted wrong answer gets its hint, a few unreadable ones get words, and no hint names the expected
    value; always the verdict CPython's checker gives for the spec."""
    from cutelite.teach.announce import decode
    from cutelite.teach.live import check
    from hint_leaks import leak
    specs = browser.execute_script(_EXERCISE_SPECS)
    answered = 0
    for spec in specs:
        typed = [(t, True) for t in spellings(spec)]
        typed += [(str(k.get("layout") or k["py"]), False) for k, _ in spec.get("hints", [])]
        typed += [("(1, 2, 3, 4)", False), ("5", False), ("(4,8", False)]
        for text, right in typed:
            verdict = browser.execute_async_script(_ANSWER, spec["name"], text)
            assert "error" not in verdict, (page, spec["name"], verdict)
            want = json.loads(check(json.dumps(spec), text))
            assert verdict["ok"] == want["ok"] and verdict["text"].endswith(want["message"]), \
                (page, text, verdict, want)
            if right:
                assert verdict["ok"], (page, spec["name"], text, verdict)
            elif "expected" in spec:
                named = leak(verdict["text"], decode(spec["expected"]), text)
                assert named is None, (page, spec["name"], text, verdict, f"the hint names {named!r}")
            answered += 1
    return answered


def test_live_book(built, base_url, browser):
    """Make two chapters live, type layouts and algebra operations and compare with CPython; feed the inputs
    that used to freeze the page and check it recovers, through a refusal or a stopped and restarted worker.
    Load and redraw times are measured and printed (and written to _build/live-timings.json), not asserted."""
    from cutelite.teach.explorers import algebra_result, layout_result

    if not (built / "_static" / "live" / "manifest.json").exists():
        pytest.fail("_static/live/manifest.json is missing: the build did not add Pyodide and cutelite's wheel")
    browser.set_script_timeout(200)
    timings = {"cold start (s)": go_live(browser, base_url, LIVE_LAYOUT_PAGE) / 1e3}

    # A layout typed key by key, as a reader does, then the batch.
    shape = browser.find_element("css selector", '.live-panel[data-kind="layout"] input[name="shape"]')
    shape.clear()
    shape.send_keys("(2,(2,2))")
    stride = browser.find_element("css selector", '.live-panel[data-kind="layout"] input[name="stride"]')
    stride.clear()
    stride.send_keys("(1,(4,2))")
    assert set_fields(browser, "layout", {})["text"] == layout_result("(2,(2,2))", "(1,(4,2))")[0]
    for shape, stride in LAYOUT_CASES:
        assert set_fields(browser, "layout", {"shape": shape, "stride": stride})["text"] == \
            layout_result(shape, stride)[0], (shape, stride)

    # Redraws of a 32x32 layout: switch between two, so each one really recomputes.
    redraws = []
    for i in range(10):
        shown = set_fields(browser, "layout", {"shape": "(32,32)", "stride": "(1,32)" if i % 2 else "(32,1)"})
        assert shown["svg"] == 32 * 32
        redraws.append(shown["ms"])
    redraws.sort()
    timings["32x32 layout redraw, median (ms)"] = redraws[len(redraws) // 2]
    timings["32x32 layout redraw, worst (ms)"] = redraws[-1]

    # Layouts too large to draw: the explorer says so, and the next input computes.
    for values in SLOW_INPUTS["layout"]:
        shown = set_fields(browser, "layout", values)
        assert "no grid and no picture" in shown["text"] and shown["svg"] == 0, shown
        assert set_fields(browser, "layout", {"shape": "(4,8)", "stride": "(8,1)"})["text"] == \
            layout_result("(4,8)", "(8,1)")[0]
    assert browser.execute_script(_WORKERS) == {"workers": 1, "stops": 0}

    # Chapter 2: the algebra explorer; the runtime is cached by the browser by now.
    timings["first interaction, runtime cached (s)"] = go_live(browser, base_url, LIVE_ALGEBRA_PAGE) / 1e3
    for op, a, b in ALGEBRA_CASES:
        assert set_fields(browser, "algebra", {"op": op, "a": a, "b": b})["text"] == algebra_result(op, a, b)[0], \
            (op, a, b)
    shown = set_fields(browser, "algebra", {"op": "composition", "a": "(4,6):(1,8)", "b": "3:2"})
    assert shown["text"].startswith("ValueError: composition:") and shown["svg"] == 0
    for values in SLOW_INPUTS["algebra"]:
        shown = set_fields(browser, "algebra", values)
        assert shown["text"] == cpython_view("algebra", shown["values"]) and shown["text"].startswith("Refused:")
        assert set_fields(browser, "algebra", {"op": "coalesce", "a": "(4,8):(1,4)", "b": ""})["text"] == \
            algebra_result("coalesce", "(4,8):(1,4)")[0]

    # A computation past the time limit is stopped: the worker is terminated and a new one started, the
    # reader is told why, and the page keeps working. No input in the book is that slow any more (the
    # explorers refuse them first), so the test lowers the page's limit to force one.
    big = {"op": "composition", "a": "(32,32):(32,1)", "b": "(32,32):(1,32)"}
    assert set_fields(browser, "algebra", big)["text"] == algebra_result(*big.values())[0]
    before = browser.execute_script(_WORKERS)
    browser.execute_script("window.cuteliteLiveLimitMs = 5;")
    shown = set_fields(browser, "algebra", {"b": "(32,32):(32,1)"})                    # one call, stopped
    assert shown["text"].startswith("Stopped: this took more than 0.005 s") and "restarted" in shown["text"], shown
    assert browser.execute_script(_WORKERS) == {"workers": before["workers"] + 1, "stops": before["stops"] + 1}
    browser.execute_script(_PATIENT)
    assert set_fields(browser, "algebra", {"op": "complement", "a": "4:2", "b": "16"})["text"] == \
        algebra_result("complement", "4:2", "16")[0]
    assert browser.execute_script(_WORKERS)["stops"] == before["stops"] + 1

    # The exercises of chapter 2, in every spelling, on the restarted worker.
    assert check_answers(browser, LIVE_ALGEBRA_PAGE) >= 4 * 5

    LIVE_TIMINGS.write_text(json.dumps(timings, indent=1) + "\n")
    print("live book timings (targets: first interaction with a cached runtime < 1.5 s, 32x32 redraw < 50 ms):",
          timings)


CHAPTERS = [p for p in PAGES if is_notebook(p)]


def _ids_and_links(html: str) -> tuple[dict, dict]:
    """{id: where it starts} and {id: [the links in its title and first section]} of each exercise and
    solution of a built page."""
    boxes = re.finditer(r'<div class="(?:exercise|solution) admonition" id="([^"]+)"', html)
    starts = {m.group(1): m.start() for m in boxes}
    return starts, {i: re.findall(r'href="([^"]+)"', html[at:at + 4000].split("</section>")[0])
                    for i, at in starts.items()}


def test_exercises_link_to_their_solutions_and_back(built):
    """Each exercise of a chapter links to its solution on book/solutions/, which exists there and whose title
    links back to the exercise."""
    linked = 0
    for page in [p for p in CHAPTERS if p.startswith("chapters/")]:
        exercises, links = _ids_and_links((built / f"{page}.html").read_text())
        assert exercises, f"{page}: no exercise on the page"
        for ex, hrefs in links.items():
            to_solution = [h for h in hrefs if "/solutions/" in h]
            assert len(to_solution) == 1, f"{page}: exercise {ex} links to {to_solution or 'no solution'}"
            target = (built / page).parent / to_solution[0].split("#")[0]
            sol = to_solution[0].split("#")[1]
            solutions, back = _ids_and_links(target.read_text())
            assert sol in solutions, f"{page}: {ex} links to #{sol}, which {target.name} does not have"
            assert f"../../{page}.html#{ex}" in back[sol], f"{target.name}: {sol} does not link back to {page}#{ex}"
            linked += 1
    assert linked >= 27, linked


def test_grader_key_is_this_build(built):
    """The classroom grader's shipped answer key (cutelite/teach/answer_key.json) holds exactly the checks this
    build's chapters announced; after changing an exercise, rebuild it with
    `python -m cutelite.teach.grade --make-key _build/jupyter_execute`."""
    from cutelite.teach import grade
    assert grade.make_key(str(EXECUTED)) == grade.load_key()


@pytest.mark.parametrize("page", CHAPTERS)
def test_live_chapter(page, built, base_url, browser):
    """Every explorer of every chapter goes live and shows what cutelite computes in CPython, for what it shows
    first and for typed inputs (TYPED_INPUTS), refuses the inputs that once froze the page and computes again
    after them; every exercise answer box accepts its right answer in every spelling and gives CPython's verdict
    for wrong ones."""
    facts = load(browser, base_url, page)
    if not facts["live_panels"] and not facts["live_answers"]:
        assert "cutelite-live" not in json.dumps(executed_notebook(page)), page
        pytest.skip(f"{page} has nothing live")
    browser.set_script_timeout(200)
    browser.execute_script(_PATIENT)
    if facts["live_panels"]:
        result = browser.execute_async_script(_GO_LIVE.replace(
            "p.dataset.draws", "document.querySelectorAll('.live-panel:not([data-draws])').length === 0"))
        assert "error" not in result, result
        shown = browser.execute_script(
            "return Array.from(document.querySelectorAll('.live-panel')).map((p) => "
            "({kind: p.dataset.kind, values: p.dataset.shown, text: p.querySelector('.live-text').textContent}));")
        for panel in shown:
            assert panel["text"] == cpython_view(panel["kind"], panel["values"]), panel
        for panel in {p["kind"]: p for p in shown}.values():
            for values in TYPED_INPUTS.get(panel["kind"], []):
                typed = set_fields(browser, panel["kind"], values)
                assert typed["text"] == cpython_view(panel["kind"], typed["values"]), typed
                assert typed["svg"] or typed["text"].startswith("ValueError"), typed
            for values in SLOW_INPUTS.get(panel["kind"], []):
                slow = set_fields(browser, panel["kind"], values)
                assert slow["text"] == cpython_view(panel["kind"], slow["values"]), slow
                assert slow["text"].startswith("Refused:") or "no grid" in slow["text"], slow
                again = set_fields(browser, panel["kind"], json.loads(panel["values"]))
                assert again["text"] == panel["text"], again
    if facts["live_answers"]:
        assert check_answers(browser, page) >= facts["live_answers"]

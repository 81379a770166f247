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

"""The live book: gives chapter pages live explorers and answer boxes (book/_static/live/), loaded from
_config.yml (sphinx.local_extensions).

- Every chapter page (a notebook) loads live/live.js and live/live.css. The script acts only on the hidden
  announcements that cutelite's explorers and exercise checks leave in the executed notebook.
- When the HTML build finishes, _static/live/ gets what the worker loads: Pyodide's core files, copied from
  the npm package that `make` fetched (the folder $PYODIDE_DIR), and cutelite packed as a wheel, plus
  manifest.json naming them. Nothing comes from a CDN: the pages work offline.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import zipfile
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

PYODIDE_FILES = ("pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json", "package.json")


def add_assets(app, pagename, templatename, context, doctree):
    """Load the live front end on notebook pages only."""
    if pagename in app.env.all_docs and str(app.env.doc2path(pagename)).endswith(".ipynb"):
        app.add_css_file("live/live.css")
        app.add_js_file("live/live.js", defer="defer")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(root: Path, out: Path) -> str:
    """Pack the package cutelite (pure Python) from `root` into a wheel in `out`, with the records its explorers
    read (every records.json under cutelite/ and kernels/, at the same paths: cutelite.teach.records); return
    its file name."""
    version = re.search(r'^version\s*=\s*"([^"]+)"', (root / "pyproject.toml").read_text(), re.M).group(1)
    name = f"cutelite-{version}-py3-none-any.whl"
    info = f"cutelite-{version}.dist-info"
    files = {p.relative_to(root).as_posix(): p.read_bytes()
             for p in sorted((root / "cutelite").rglob("*.py")) + sorted((root / "cutelite").rglob("records.json"))
             + sorted((root / "kernels").rglob("records.json"))}
    files[f"{info}/METADATA"] = (f"Metadata-Version: 2.1\nName: cutelite\nVersion: {version}\n"
                                 "Summary: cutelite's engine for the live book (standard library only)\n").encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: book_live\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(out / name, "w", zipfile.ZIP_DEFLATED) as whl:
        for n, d in files.items():
            whl.writestr(zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0)), d, zipfile.ZIP_DEFLATED)
    return name


def copy_runtime(app, exception):
    """Put Pyodide's core and cutelite's wheel into _static/live/ of the HTML output."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / "_static" / "live"
    out.mkdir(parents=True, exist_ok=True)
    fetched = sorted(Path(app.srcdir).glob("_build/.pyodide/*/package"))  # where `make pyodide` puts it
    source = Path(os.environ.get("PYODIDE_DIR") or (fetched[-1] if fetched else "_build/.pyodide"))
    missing = [f for f in PYODIDE_FILES if not (source / f).exists()]
    if missing:
        logger.warning(f"live book: no Pyodide in {source} (missing {', '.join(missing)}); the explorers "
                       "cannot go live. `make book` fetches it (npm pack pyodide).")
        return
    (out / "pyodide").mkdir(exist_ok=True)
    for f in PYODIDE_FILES:
        shutil.copy2(source / f, out / "pyodide" / f)
    version = json.loads((source / "package.json").read_text())["version"]
    wheel = build_wheel(Path(app.srcdir), out)
    (out / "manifest.json").write_text(json.dumps({"wheel": wheel, "pyodide": version}) + "\n")
    logger.info(f"live book: Pyodide {version} and {wheel} in _static/live")


def setup(app):
    app.connect("html-page-context", add_assets)
    app.connect("build-finished", copy_runtime)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Small fixes to the HTML that Jupyter Book 1 writes, loaded from _config.yml (sphinx.local_extensions).

- sphinx-thebe (which Jupyter Book always loads) registers its inline configuration script twice under
  Sphinx 7.4 (once with filename None, once with ""), as does sphinx-togglebutton; the second thebe copy
  redeclares a `const` and stops with a SyntaxError in the browser console. Each page now gets every
  script once.
"""

from __future__ import annotations


def _key(script) -> tuple:
    attributes = getattr(script, "attributes", {}) or {}
    # The same inline script can arrive with filename None (added by the extension) and "" (copied
    # from Sphinx's registry when the page is written): treat both as "no file".
    return (getattr(script, "filename", str(script)) or "", tuple(sorted((k, str(v)) for k, v in attributes.items())))


def dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Exercises in the chapters, their solutions on pages of their own (book/solutions/), loaded from _config.yml.

An exercise links to its solution with a plain Markdown link, which works wherever the notebook is opened
(Jupyter and Colab open the solutions notebook):

    [Solution](../book/solutions/01_layouts.ipynb#sol-layouts-row-major)

In the book that link must land on the solution itself. MyST resolves the `#id` of a link into another
document against that document's heading anchors only, so this extension registers each solution's label
as one; sphinx-exercise links the solution's title back to its exercise. It also warns (an error under -W)
where an exercise has no solution, or more than one.
"""

from collections import Counter

from sphinx.util import logging
from sphinx_exercise.nodes import is_solution_node

logger = logging.getLogger(__name__)


def register_solution_anchors(app, doctree):
    """Each solution's label becomes a link target of its page, as a heading anchor is."""
    anchors = app.env.metadata[app.env.docname].setdefault("myst_slugs", {})
    for node in doctree.findall(is_solution_node):
        anchors[node["label"]] = (node.line or 0, node["ids"][0], node["title"])


def check_every_exercise_has_one_solution(app, env):
    """A warning for each exercise without exactly one solution (gated solutions are registered as
    "solution-start", exercises as "exercise" or "exercise-start")."""
    registry = getattr(env, "sphinx_exercise_registry", {})
    solutions = Counter(e["node"].get("target_label") for e in registry.values() if e["type"].startswith("solution"))
    for label, entry in sorted(registry.items()):
        if entry["type"].startswith("exercise") and solutions[label] != 1:
            logger.warning(f"exercise {label!r} has {solutions[label]} solutions; it needs exactly one "
                           "(book/solutions/)", location=entry["docname"])


def setup(app):
    app.connect("doctree-read", register_solution_anchors)
    app.connect("env-check-consistency", check_every_exercise_has_one_solution)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

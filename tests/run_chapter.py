"""Run chapters' code cells in order in one IPython shell, without a notebook server.

This is how the chapters are checked on a GPU machine that has no Jupyter (the device machine): each code
cell runs as IPython runs it (magics included), in the chapter's folder, with figures on the Agg backend.
A failing cell stops that chapter with its traceback; the exit status is the number of failed chapters.

    python tests/run_chapter.py chapters/06_tiled_mma_copy.ipynb [more.ipynb ...]
"""
import json
import os
import sys
import time


def run(path):
    from IPython.core.interactiveshell import InteractiveShell
    cells = [c for c in json.load(open(path))["cells"] if c["cell_type"] == "code"]
    from IPython.display import Markdown
    shell = InteractiveShell.instance()
    # a displayed Markdown table (a chapter's measurements) prints as its text, not as <...Markdown object>
    shell.display_formatter.formatters["text/plain"].for_type(Markdown, lambda md, p, cycle: p.text(md.data))
    here = os.getcwd()
    os.chdir(os.path.dirname(os.path.abspath(path)))
    try:
        for n, cell in enumerate(cells, 1):
            start = time.perf_counter()
            result = shell.run_cell("".join(cell["source"]), store_history=False)
            took = time.perf_counter() - start
            if not result.success:
                print(f"== {path}: cell {n}/{len(cells)} FAILED after {took:.1f} s", flush=True)
                return False
            print(f"== {path}: cell {n}/{len(cells)} ok ({took:.1f} s)", flush=True)
    finally:
        os.chdir(here)
        InteractiveShell.clear_instance()
    return True


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    failed = [p for p in sys.argv[1:] if not run(p)]
    print(f"== chapters: {len(sys.argv) - 1 - len(failed)} passed, {len(failed)} failed {failed or ''}")
    sys.exit(len(failed))

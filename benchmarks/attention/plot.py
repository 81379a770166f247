"""The attention sweep as figures: TFLOP/s against S, one panel per (D, mask), one line per kernel, drawn from a
records.json that benchmarks/attention/bench.py wrote (chapter 10 draws the same with
cutelite.teach.attention.draw_sweep):

    python benchmarks/attention/plot.py [DIR] [--out DIR]

DIR holds records.json (default: kernels/attention, the book's record); writes sweep_fp16.png and
sweep_bf16.png (the dtypes the record has) into --out (default: DIR).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from cutelite.teach.attention import draw_sweep, record_rows  # noqa: E402
from cutelite.teach.records import ROOT  # noqa: E402


def plot(folder, out):
    """The figures of folder/records.json written into `out`, one a dtype; their paths."""
    with open(os.path.join(folder, "records.json"), encoding="utf-8") as f:
        record = json.load(f)
    if not record["rows"]:
        raise SystemExit(f"plot.py: {folder}/records.json has no rows (not measured yet)")
    import matplotlib
    matplotlib.use("Agg")
    paths = []
    for dtype in dict.fromkeys(r["dtype"] for r in record_rows(record)):
        path = os.path.join(out, f"sweep_{dtype}.png")
        draw_sweep(record, dtype).savefig(path, dpi=120)
        paths.append(path)
    return paths


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", nargs="?", default=os.path.join(ROOT, "kernels", "attention"))
    p.add_argument("--out")
    a = p.parse_args()
    for path in plot(a.folder, a.out or a.folder):
        print(path)

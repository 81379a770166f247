"""The plot of matmul_sweep.py's measurements, and a merge of several of its JSON files (sizes measured in
separate processes) into one table and one plot; needs only matplotlib.

    python3 benchmarks/gemm/plot_matmul_sweep.py OUT.png RUN.json [RUN.json ...]

Ratios are taken within each file's process only (each cell's times against cuBLAS's in the same rounds); a
cell in a later file replaces the same cell of an earlier one.
"""
import json
import statistics
import sys


def plot(cells, path, title):
    """One panel per size: matmul's and Triton's ratio to cuBLAS (median over rounds) for each dtype and
    majorness, with the issue's targets drawn in."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    sizes = list(dict.fromkeys((c["M"], c["N"], c["K"]) for c in cells))
    cols = min(3, len(sizes))
    rows = -(-len(sizes) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), sharey=True, squeeze=False)
    for ax in axes.flat[len(sizes):]:
        ax.axis("off")
    for ax, size in zip(axes.flat, sizes):
        here = [c for c in cells if (c["M"], c["N"], c["K"]) == size]
        for j, name in enumerate(n for n in ("matmul", "Triton") if n in here[0]["ms"]):
            r = [statistics.median(cu / x for cu, x in zip(c["ms"]["cuBLAS"], c["ms"][name])) for c in here]
            ax.bar([i + 0.4 * j for i in range(len(here))], r, width=0.4, label=name)
        ax.axhline(1.0, color="k", lw=0.8)
        target = 0.9 if min(size) >= 4096 else 0.7 if max(size) >= 2048 else None     # issue 21's targets
        if target:
            ax.axhline(target, color="r", lw=0.8, ls="--")
        ax.set_xticks([i + 0.2 for i in range(len(here))])
        ax.set_xticklabels(["%s %s/%s" % (c["dtype"].replace("float", "f"), c["A"], c["B"]) for c in here], rotation=90, fontsize=7)
        ax.set_title("%dx%dx%d" % size, fontsize=9)
    for row in axes:
        row[0].set_ylabel("ratio to cuBLAS (GPU time)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)



def merge(paths):
    """(cells, heads): the cells of several sweeps, each tagged with its file's number (from 1); a cell measured
    again in a later file (same shape, dtype and majorness) replaces the earlier one."""
    cells, heads = {}, []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        heads.append(run["head"])
        for c in run["cells"]:
            cells[(c["M"], c["N"], c["K"], c["dtype"], c["A"], c["B"])] = dict(c, run=len(heads))
    return list(cells.values()), heads


def table(cells):
    """The Markdown table matmul_sweep.py prints, with the run each row came from."""
    rows = ["| M x N x K | dtype | A, B | matmul / cuBLAS | Triton / cuBLAS | cuBLAS TFLOP/s | matmul rel. err | run |",
            "|---|---|---|---|---|---|---|---|"]
    for c in cells:
        r = {k: statistics.median(cu / x for cu, x in zip(c["ms"]["cuBLAS"], c["ms"][k])) for k in ("matmul", "Triton")}
        rows.append("| %dx%dx%d | %s | %s, %s | %.2f | %.2f | %.0f | %.1e | %s |" % (
            c["M"], c["N"], c["K"], c["dtype"], c["A"], c["B"], r["matmul"], r["Triton"],
            2e-9 * c["M"] * c["N"] * c["K"] / statistics.median(c["ms"]["cuBLAS"]), c["err"], c.get("run", "")))
    return "\n".join(rows)


if __name__ == "__main__":
    cells, heads = merge(sys.argv[2:])
    print("\n".join("run %d: %s" % (i + 1, h) for i, h in enumerate(heads)) + "\n\n" + table(cells))
    plot(cells, sys.argv[1], "matmul and Triton against cuBLAS (%d runs; ratios within each)" % len(heads))

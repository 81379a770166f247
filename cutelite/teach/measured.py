"""What the chapters' timing cells measured on a GPU, kept so that a page built without one (in the
simulator) still shows real numbers, labelled as recorded, and a reader can compare them with their own.

Each table copies one of benchmarks/layouts/RESULTS.md (device, date, command and method are there);
tests/test_measured.py checks that the two agree. A row is (kernel, [(ms, GB/s) of each run]).
"""

__all__ = ["RECORDED", "recorded_table"]

_H100 = "NVIDIA H100 80GB HBM3, 2026-11-25, benchmarks/layouts/RESULTS.md"

RECORDED = {
    "copy": {
        "source": _H100,
        "rows": [
            ("copy (both contiguous)", [(0.061, 2190), (0.059, 2276), (0.062, 2178)]),
            ("transpose, contiguous reads", [(0.296, 454), (0.296, 454), (0.296, 454)]),
            ("transpose, contiguous writes", [(0.140, 960), (0.139, 962), (0.140, 961)]),
        ],
    },
    "transpose": {
        "source": _H100,
        "rows": [
            ("naive", [(0.089, 1506), (0.087, 1540), (0.087, 1537)]),
            ("padded", [(0.053, 2540), (0.051, 2651), (0.051, 2637)]),
            ("swizzled", [(0.053, 2530), (0.051, 2628), (0.055, 2445)]),
        ],
    },
}


def _span(values, spec):
    lo, hi = min(values), max(values)
    return f"{lo:{spec}}" if lo == hi else f"{lo:{spec}}-{hi:{spec}}"


def recorded_table(name, width=30):
    """The recorded table `name` ("copy" or "transpose") as text: one line per kernel with the range of
    its runs' times and bandwidths, under a line saying where and when it was measured."""
    if name not in RECORDED:
        raise ValueError(f"recorded_table: no recorded table {name!r}; there are {sorted(RECORDED)}")
    table = RECORDED[name]
    lines = [f"recorded on {table['source']} ({len(table['rows'][0][1])} runs):"]
    for kernel, runs in table["rows"]:
        ms, gbs = [r[0] for r in runs], [r[1] for r in runs]
        lines.append(f"{kernel:{width}s} {_span(ms, '.3f'):>11s} ms  {_span(gbs, 'd'):>9s} GB/s")
    return "\n".join(lines)

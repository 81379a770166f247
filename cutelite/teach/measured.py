"""Chapters 1 and 4's timing cells where no GPU is: the copy and transpose kernels' recorded times
(cutelite/teach/records.json, "layouts"; benchmarks/layouts/RESULTS.md holds the device, date, command and
method), printed as a table, labelled as recorded, so that a reader can compare them with their own."""

from .records import load

__all__ = ["recorded_table"]


def _span(values, spec):
    lo, hi = min(values), max(values)
    return f"{lo:{spec}}" if lo == hi else f"{lo:{spec}}-{hi:{spec}}"


def recorded_table(name, width=30):
    """The recorded table `name` ("copy" or "transpose") as text: one line per kernel with the range of
    its runs' times and bandwidths, under a line saying where and when it was measured."""
    tables = load("cutelite/teach")["layouts"]
    if name not in tables:
        raise ValueError(f"recorded_table: no recorded table {name!r}; there are {sorted(tables)}")
    table = tables[name]
    lines = [f"recorded on {table['source']} ({len(table['rows'][0][1])} runs):"]
    for kernel, runs in table["rows"]:
        ms, gbs = [r[0] for r in runs], [r[1] for r in runs]
        lines.append(f"{kernel:{width}s} {_span(ms, '.3f'):>11s} ms  {_span(gbs, 'd'):>9s} GB/s")
    return "\n".join(lines)

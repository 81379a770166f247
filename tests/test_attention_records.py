"""Chapter 10's record (kernels/attention/records.json) holds what benchmarks/attention/bench.py measured, or
nothing: with a run, its rows are the rows of the benchmark's CSV (benchmarks/attention/attention.csv); without
one, no rows, and no figure for a chapter to print."""

import csv
import os

from cutelite.teach import records

RECORD = records.load("kernels/attention")
CSV = os.path.join(records.ROOT, "benchmarks", "attention", "attention.csv")


def _same(held, cell):
    """A record's value (a number, text, or None where not measured) is the CSV's cell."""
    if held is None:
        return cell == ""
    return cell == held if isinstance(held, str) else float(cell) == held


def test_record_is_the_benchmarks_csv_or_empty():
    if RECORD["run"] is None:
        assert RECORD["rows"] == () and not os.path.exists(CSV)
        return
    with open(CSV, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["dtype", "D", "mask", "S", "B", "H", "kernel", "ms", "TFLOP/s", "GB/s", "rel_err", "note"]
    assert len(RECORD["rows"]) == len(rows) - 1
    for held, row in zip(RECORD["rows"], rows[1:]):
        assert len(held) == len(row) and all(_same(x, cell) for x, cell in zip(held, row)), (held, row)
    assert {"command", "date", "device", "method", "versions", "copy_gbs"} <= set(RECORD["run"])

"""cutelite.teach.measured keeps the GPU timings that benchmarks/layouts/RESULTS.md records: the same numbers,
table by table, and the text the chapters print from them."""

import os
import re

import pytest

from cutelite.teach.measured import RECORDED, recorded_table

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks", "layouts", "RESULTS.md")
MOVED = 2 * 4 * 4096 * 4096                 # bytes read + written by each kernel


def _tables():
    """The two Markdown tables of RESULTS.md: [[(ms, GB/s) per run] per row], in order."""
    tables, rows = [], None
    for line in open(RESULTS):
        if line.startswith("| kernel |") or line.startswith("| shared tile |"):
            rows = []
            tables.append(rows)
        elif rows is not None and line.startswith("| ") and "---" not in line:
            runs = re.findall(r"([0-9.]+) ms, ([0-9]+) GB/s", line)
            rows.append([(float(ms), int(gbs)) for ms, gbs in runs])
        elif not line.strip():
            rows = None
    return tables


@pytest.mark.parametrize("name, index", [("copy", 0), ("transpose", 1)])
def test_recorded_equals_results_md(name, index):
    assert [runs for _, runs in RECORDED[name]["rows"]] == _tables()[index]


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_bandwidth_is_bytes_over_time(name):
    for kernel, runs in RECORDED[name]["rows"]:
        for ms, gbs in runs:                 # ms is rounded to 3 decimals: allow that much
            assert abs(MOVED / ms / 1e6 - gbs) / gbs < 0.0005 / ms + 0.001, (kernel, ms, gbs)


def test_recorded_table_text():
    text = recorded_table("copy").splitlines()
    assert text[0].startswith("recorded on NVIDIA H100") and "3 runs" in text[0]
    assert text[1].split() == ["copy", "(both", "contiguous)", "0.059-0.062", "ms", "2178-2276", "GB/s"]
    assert text[2].split()[-4:] == ["0.296", "ms", "454", "GB/s"]
    with pytest.raises(ValueError, match="recorded_table: no recorded table 'gemm'"):
        recorded_table("gemm")

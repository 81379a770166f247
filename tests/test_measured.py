"""cutelite.teach.measured keeps the GPU timings that benchmarks/layouts/RESULTS.md records: the same numbers,
table by table, and the text the chapters print from them."""

import os
import re

import pytest

from cutelite.teach.measured import (BANK_CONFLICTS, HOPPER_TIMING, LDMATRIX_ALIGNMENT, RECORDED, recorded_table,
                                     timing_method_table)

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


def _section(text, title):
    return text.split(title, 1)[1].split("\n## ", 1)[0]


def test_hopper_timing_is_results_hopper():
    """Run 6 timed each launch alone (two calls side by side in one table row); run 7 timed GPU time (its two
    calls in two tables). Every figure must be in its run's section, on the kernel's or cuBLAS fp16->fp32's row."""
    text = open(os.path.join(os.path.dirname(RESULTS), "..", "gemm", "RESULTS_HOPPER.md")).read()
    kernel = HOPPER_TIMING["kernel"]
    (_, run6, alone), (_, run7, gpu) = HOPPER_TIMING["methods"]
    six = _section(text, "## Run 6 (2026-11-24)")
    (c1, k1, r1), (c2, k2, r2) = alone
    assert f"| {kernel} | {k1:.3f} |" in six and f"**{r1:.2f}** | {k2:.3f} |" in six and f"**{r2:.2f}** |" in six
    assert f"| cuBLAS fp16->fp32 (torch.mm out_dtype) | {c1:.3f} |" in six and f"| {c2:.3f} |" in six
    seven = _section(text, "## Run 7 (2026-11-25)")
    for cublas, ms, ratio in gpu:
        assert f"| {kernel} | {ms:.3f} |" in seven and f"| {ratio:.2f} |" in seven
        assert f"| cuBLAS fp16->fp32 (torch.mm out_dtype) | {cublas:.3f} |" in seven
    for _, _, calls in HOPPER_TIMING["methods"]:
        for cublas, ms, ratio in calls:                    # the ratio is cuBLAS's time over the kernel's
            assert abs(cublas / ms - ratio) <= 0.006, (cublas, ms, ratio)
    (kg, kx), (cg, cx) = HOPPER_TIMING["host_ms"].values()
    assert f"**{kx:.3f} ms** more than its {kg:.3f} ms, cuBLAS {cx:.3f} ms more than its {cg:.3f} ms" in \
        " ".join(seven.split())
    assert "0.81 (0.265 ms vs cuBLAS 0.216) and 0.76" in timing_method_table()


def test_bank_conflicts_are_the_ncu_record():
    """Each case's (wavefronts, conflicts) is what ncu_h100.csv holds for the launch verify.py made for it."""
    import csv
    import importlib.util
    bench = os.path.join(os.path.dirname(RESULTS), "..", "bank_conflicts")
    spec = importlib.util.spec_from_file_location("bc_verify", os.path.join(bench, "verify.py"))
    verify = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(verify)
    measured = {}
    with open(os.path.join(bench, "ncu_h100.csv")) as f:
        for r in csv.DictReader(f):
            measured.setdefault(int(r["ID"]), {})[r["Metric Name"]] = int(float(r["Metric Value"]))
    launches = {name: (i, kind) for i, (name, kind, _, _) in enumerate(verify.cases())}
    for case, counted in BANK_CONFLICTS["cases"].items():
        i, kind = launches[case]
        assert counted == tuple(measured[i][m] for m in verify.metric_names(kind)), case
    assert "2026-11-22" in open(os.path.join(bench, "RESULTS.md")).read()


def test_ldmatrix_alignment_is_the_results_md_table():
    path = os.path.join(os.path.dirname(RESULTS), "..", "RESULTS.md")
    rows = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", open(path).read(), re.M))
    assert {int(k): v for k, v in rows.items()} == LDMATRIX_ALIGNMENT["cases"]

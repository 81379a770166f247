"""The records of chapters 1, 4, 6 and 8's timing methods (cutelite.teach.records) hold what the benchmarks
recorded (benchmarks/layouts/RESULTS.md, bank_conflicts/ncu_h100.csv, RESULTS.md, gemm/RESULTS_HOPPER.md):
the same numbers, table by table, and the text the chapters print from them; and the records' reader."""

import os
import re

import pytest

from cutelite.teach import records
from cutelite.teach.measured import recorded_table

RECORDED = records.load("cutelite/teach")["layouts"]
BANK_CONFLICTS = records.load("cutelite/teach")["bank_conflicts"]
LDMATRIX_ALIGNMENT = records.load("kernels/tiled")["ldmatrix_alignment"]
HOPPER_TIMING = records.load("kernels/hopper")["timing_methods"]

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
    assert [list(map(tuple, runs)) for _, runs in RECORDED[name]["rows"]] == _tables()[index]


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
    import kernels
    kernels.setup(verbose=False)
    from kernels.hopper.chapter import timing_method_table
    assert "0.81 (0.265 ms vs cuBLAS 0.216) and 0.76" in timing_method_table()


def test_bank_conflicts_are_the_ncu_record():
    """Each case's (wavefronts, conflicts) is what ncu_h100.csv holds for the launch verify.py made for it."""
    import importlib.util
    bench = os.path.join(os.path.dirname(RESULTS), "..", "bank_conflicts")
    spec = importlib.util.spec_from_file_location("bc_verify", os.path.join(bench, "verify.py"))
    verify = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(verify)
    measured = verify.counters(open(os.path.join(bench, "ncu_h100.csv")).read())
    launches = {name: (i, kind) for i, (name, kind, _, _) in enumerate(verify.cases())}
    for case, counted in BANK_CONFLICTS["cases"].items():
        i, kind = launches[case]
        assert counted == tuple(measured[i][m] for m in verify.metric_names(kind)), case
    assert "2026-11-22" in open(os.path.join(bench, "RESULTS.md")).read()


def test_ldmatrix_alignment_is_the_results_md_table():
    path = os.path.join(os.path.dirname(RESULTS), "..", "RESULTS.md")
    rows = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", open(path).read(), re.M))
    assert {int(k): v for k, v in rows.items()} == LDMATRIX_ALIGNMENT["cases"]


def test_fp8_and_cluster_records_are_consistent():
    """Chapter 11's FP8 record and chapter 8's cluster record: each TFLOP/s is 2 M N K over the time, and each
    FP8 ratio to cuBLAS is cuBLAS's time over the kernel's (the records round ms to 4 digits). A cluster ratio
    is the median of the rounds' ratios, between the rounds' least and greatest (lo, hi); cuBLAS's median time
    over the kernel's, a ratio of medians, is not the same number, but lies in that range too (1% allowed)."""
    hopper = records.load("kernels/hopper")
    for S, row in hopper["fp8"]["speed"].items():
        base = row["cuBLAS _scaled_mm"][0]
        for kernel, (ms, tflops, ratio) in row.items():
            assert abs(2 * S ** 3 / ms / 1e9 - tflops) / tflops < 1e-3, (S, kernel)
            assert abs(base / ms - ratio) < 2e-3, (S, kernel)
    rows = hopper["cluster"]["rows"]
    cublas = {size: ms for size, name, ms, *_ in rows if name == "cuBLAS"}
    for size, name, ms, tflops, ratio, lo, hi in rows:
        m, n, k = map(int, size.split("x"))
        assert abs(2 * m * n * k / ms / 1e9 - tflops) / tflops < 1e-3, (size, name)
        assert lo <= ratio <= hi and lo - 0.01 <= cublas[size] / ms <= hi + 0.01, (size, name)


def test_fp8_tables_print_the_record():
    """kernels.hopper.chapter.fp8_tables on a record made up by hand."""
    from kernels.hopper.chapter import fp8_tables
    rec = {"run": {"date": "2026-01-02", "device": "GPU X", "rounds": 2, "command": "python b.py"},
           "speed": {64: {"cuBLAS": (0.01, 52.4, 1.0), "ours": (0.02, 26.2, 0.5)}},
           "accuracy_size": 64, "accuracy": {"ours": 0.00123}}
    lines = fp8_tables(rec).splitlines()
    assert lines[0] == "Recorded 2026-01-02 on GPU X, `python b.py` (best of 2 rounds):"
    assert lines[2:6] == ["| e4m3, bf16 out | 64^3: TFLOP/s, of cuBLAS |", "|---|---|", "| cuBLAS | 52, 1.00 |",
                          "| ours | 26, 0.50 |"]
    assert lines[-2:] == ["|---|---|", "| ours | 1.23e-03 |"]


# ---- the reader ----------------------------------------------------------------------------------------------

def test_every_records_file_is_a_folder_of_the_reader():
    """Every records.json under cutelite/ and kernels/ (what the wheel of the live pages packs) is one that
    `load` reads, and every folder it names has one."""
    found = {os.path.relpath(os.path.join(d, "records.json"), records.ROOT).replace(os.sep, "/")[:-len("/records.json")]
             for top in ("cutelite", "kernels") for d, _, files in os.walk(os.path.join(records.ROOT, top))
             if "records.json" in files}
    assert found == set(records.FOLDERS)
    for folder in records.FOLDERS:
        assert isinstance(records.load(folder)["about"], str), folder
    with pytest.raises(ValueError, match="records.load: no records in 'kernels'; the folders are cutelite/teach"):
        records.load("kernels")


def test_load_reads_back_what_dump_wrote(tmp_path, monkeypatch):
    """JSON has no tuples and only string keys: arrays come back as tuples, integer and size keys as numbers."""
    data = {"run": {"size": (4096, 4096, 4096), "date": "2026-11-25"}, "rows": (("a", "f16", 1.5, None),),
            "probe": {4096: {"x": (1.0, 0.5, 2.0)}}, "sizes": {(2048, 2048, 2048): {"ours": (0.1, 0.9)}},
            "cases": {0: "ran", 8: "fault"}, "empty": {}, "name 128x128x32 4st": [1, 2]}
    (tmp_path / "kernels" / "gemm").mkdir(parents=True)
    records.dump(data, tmp_path / "kernels" / "gemm" / "records.json")
    monkeypatch.setattr(records, "ROOT", str(tmp_path))
    back = records.load("kernels/gemm")
    assert back == dict(data, **{"name 128x128x32 4st": (1, 2)}) and isinstance(back["rows"][0], tuple)
    text = (tmp_path / "kernels" / "gemm" / "records.json").read_text()
    assert '"2048x2048x2048": {' in text and '"4096": {' in text and '["a", "f16", 1.5, null]' in text

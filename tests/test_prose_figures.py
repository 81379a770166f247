"""Every measured figure typed in a chapter's markdown or on a book page is one a record holds (the rules are
in tests/prose_figures.py); the rules themselves on small records written here."""

import json
import os

import pytest

import prose_figures as pf

@pytest.fixture(scope="module")
def book():
    return pf.scan()


def test_every_measured_figure_is_held(book):
    offenders = [f for f in book if f[-1] is None]
    new = [f"{page} cell {cell}: {kind} figure {figure!r}" + (f" at {sizes}" if sizes else "")
           for page, cell, kind, figure, sizes, _ in offenders]
    assert not new, ("typed figures that no record holds (print them from the record in a code cell, or "
                     "correct them; `python tests/prose_figures.py` shows what holds each figure):\n"
                     + "\n".join(new))


def test_every_not_measured_entry_is_used(book):
    used = {verdict for *_, verdict in book if verdict and verdict.startswith("not measured: ")}
    assert {"not measured: " + source for source in pf.NOT_MEASURED.values()} <= used


def test_every_record_is_read():
    records = pf.Records()
    assert set(pf.RECORD_FILES) <= set(records.files)
    assert {"benchmarks/gemm/RESULTS.md", "benchmarks/gemm/h100_gemm.csv", "benchmarks/layouts/RESULTS.md"} \
        <= set(records.files)
    read = {where.split(":")[0] for *_, where in records.entries}
    awaiting = {path for path in pf.RECORD_FILES              # a record whose first run is still to come ("run": null)
                if json.load(open(os.path.join(pf.ROOT, path), encoding="utf-8")).get("run", "") is None}
    assert read == set(records.files) - awaiting, set(records.files) - awaiting - read
    assert (2048, 2048, 2048) in records.sizes and (4000, 3000, 2500) in records.sizes


# ---- the rules, on records written here ------------------------------------------------------------------

RESULTS = """# Run 1
| kernel | ms | TFLOP/s | of cuBLAS |
|---|---|---|---|
| step 10 | 0.335 | 410.5 | 0.56 |
| step 11 | 0.371 | 370.7 | 0.50 |

- copy: 1506 GB/s
- SM throughput 85 %, 62 cycles
- stalls: short scoreboard 1.32

## 2048^3
- matmul: 0.92-0.94 of cuBLAS
"""


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    root = tmp_path_factory.mktemp("book")
    (root / "benchmarks" / "x").mkdir(parents=True)
    (root / "benchmarks" / "x" / "RESULTS.md").write_text(RESULTS)
    (root / "benchmarks" / "x" / "RESULTS_OTHER.md").write_text("# Other\n- 0.71 of cuBLAS\n")
    (root / "benchmarks" / "x" / "raw.json").write_text(json.dumps({"M": 8, "N": 8, "K": 8, "ms": [0.29]}))
    (root / "kernels" / "rec").mkdir(parents=True)
    (root / "kernels" / "rec" / "records.json").write_text(json.dumps(
        {"about": "Recorded 0.44.", "rows": {"4096": {"ours": 0.61}}, "sweep": {"2048x2048x2048": {"ours": 0.33}},
         "run": {"size": [1024, 1024, 1024], "tflops": 3.5}, "other": 0.77}))
    return pf.Records(str(root), files={"kernels/rec/records.json": (512, 512, 512)},
                      globs=["benchmarks/**/*.md", "benchmarks/**/*.json"])


def verdict(records, markdown):
    found = pf.check(markdown, records)
    assert len(found) == 1, found
    return found[0][-1]


@pytest.mark.parametrize("markdown", [
    "The kernel ran at 410.5 TFLOP/s.",
    "It reaches 410 TFLOP/s.",                      # 410.5 is within half a unit of 410
    "It reaches about 400 TFLOP/s.",                # after "about", 400 is 350-450
    "Step 10 is 0.56 of cuBLAS.",
    "The copy moves 1,506 GB/s.",
    "The SMs are 85 % busy.",
    "A warp issues every 62 cycles.",
    "At 2048^3 matmul is 0.92-0.94 of cuBLAS.",
    "At 4096^3 ours is 0.61 of cuBLAS.",            # a record's dict keyed by a size, n for n^3
    "At 2048^3 ours is 0.33 of cuBLAS.",            # ... or M x N x K
    "At 1024^3 it ran at 3.5 TFLOP/s.",             # an object with its "size"
    "At 512^3 it is 0.77 of cuBLAS.",               # the record's own size
    "It took 0.29 ms.",                             # a JSON list under the key "ms"
    "It measured 0.335 and 0.371.",
    "Its `short_scoreboard` is 1.32.",
    "Step 11 is 10 % slower (370.7 against 410.5).",    # a percentage shown as a quotient
    "A block fits 65536 / 384 = 170.7 registers a thread, the compiler's limit.",
])
def test_held(records, markdown):
    assert verdict(records, markdown) is not None


@pytest.mark.parametrize("markdown", [
    "The kernel ran at 412 TFLOP/s.",               # a new typed figure
    "It reaches about 300 TFLOP/s.",
    "Step 10 is 0.57 of cuBLAS.",
    "At 2048^3 step 10 is 0.56 of cuBLAS.",         # recorded, but not at that size
    "At 2048^3 matmul is 0.92-0.95 of cuBLAS.",     # a range needs both ends
    "Step 10 is 56 % of cuBLAS.",                   # 0.56 is not a recorded percentage
    "It is 0.29 of cuBLAS.",                        # 0.29 is recorded in ms
    "It is 0.44 of cuBLAS.",                        # a record's text is not data
    "At 1024^3 it is 0.77 of cuBLAS.",              # recorded at the record's own size only
    "It measured 0.71 of cuBLAS (`benchmarks/x/RESULTS.md`).",    # recorded, but not in the record named
    "Step 11 is 12 % slower (370.7 against 410.5).",
    "The compiler allots 171 registers a thread.",
    "Its `short_scoreboard` is 1.23.",
    "Math is prose: $0.57$ of cuBLAS.",
])
def test_not_held(records, markdown):
    assert verdict(records, markdown) is None


@pytest.mark.parametrize("markdown", [
    "Thread 5 sits at (5 % 2, 5 // 2) = (1, 2).",   # Python's modulo, not a percentage
    "A 128-bit access moves 4 times the data.",     # a ratio in no sentence about a measurement
    "It uses 64 accumulator registers per thread.",  # a register count that no compiler or profile gave
    "Compute capability 7.0-7.5 and 9.0; CUDA 13.0.",
    "`0.57 of cuBLAS` is code.",
])
def test_not_a_figure(records, markdown):
    assert pf.check(markdown, records) == []


def test_table_cells_are_figures(records):
    found = pf.check("| kernel | 2048^3 |\n|---|---|\n| matmul | 0.94 |\n| ours | 0.57 |\n", records)
    assert [(figure, sizes, v is not None) for _, figure, sizes, v in found] == \
        [("0.94", [(2048, 2048, 2048)], True), ("0.57", [(2048, 2048, 2048)], False)]


def test_a_new_typed_figure_fails_with_its_page_and_cell(tmp_path, monkeypatch):
    (tmp_path / "chapters").mkdir()
    cells = [{"cell_type": "code", "source": ["x = 1"]},
             {"cell_type": "markdown", "source": ["On the H100 it measured 0.87 of cuBLAS."]}]
    (tmp_path / "chapters" / "10_new.ipynb").write_text(json.dumps({"cells": cells}))
    records = pf.Records(str(tmp_path), files={}, globs=[])
    assert pf.scan(str(tmp_path), records) == [("chapters/10_new.ipynb", 1, "reported", "measured 0.87", [], None)]

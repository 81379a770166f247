"""Chapter 10's record (kernels/attention/records.json) holds what benchmarks/attention/bench.py measured, or
nothing: with a run, its rows are the rows of the benchmark's CSV (benchmarks/attention/attention.csv); without
one, no rows, and no figure for a chapter to print. The benchmark's writer, merge and figure are tested on a
record written here from hand-made rows."""

import csv
import os

import pytest

from cutelite.teach import records
from cutelite.teach.attention import COLUMNS, draw_sweep, record_rows, sweep

RECORD = records.load("kernels/attention")
BENCH = os.path.join(records.ROOT, "benchmarks", "attention")
CSV = os.path.join(BENCH, "attention.csv")


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
    assert tuple(rows[0]) == COLUMNS
    assert len(RECORD["rows"]) == len(rows) - 1
    for held, row in zip(RECORD["rows"], rows[1:]):
        assert len(held) == len(row) and all(_same(x, cell) for x, cell in zip(held, row)), (held, row)
    assert {"command", "date", "device", "method", "versions", "copy_gbs"} <= set(RECORD["run"])


# ---- the benchmark's writer, merge and figure, on a record made here from hand-made rows -------------------
def _bench_module(name):
    import importlib.util
    path = os.path.join(BENCH, name + ".py")
    spec = importlib.util.spec_from_file_location("attention_bench_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUN = {"command": "python benchmarks/attention/bench.py --dims 64", "date": "2026-01-02", "device": "GPU (sm_90)",
       "method": "by hand", "versions": "none", "copy_gbs": 3000}


def _row(D, mask, S, kernel, tflops, note=""):
    gbs = "1500" if kernel == "naive" else ""
    return dict(dtype="fp16", D=str(D), mask=mask, S=str(S), B="2", H="8", kernel=kernel,
                ms="" if not tflops else "0.5000", **{"TFLOP/s": tflops, "GB/s": gbs if tflops else "",
                                                       "rel_err": "1.0e-03" if tflops else "", "note": note})


ROWS = [_row(64, "none", 1024, "flash", "300.0"), _row(64, "none", 1024, "naive", "50.5"),
        _row(64, "none", 512, "flash", "250.0"), _row(64, "causal", 512, "flash", "120.0"),
        _row(64, "causal", 512, "fa3_wgmma", "", note="not an sm_90 GPU")]


def _written(tmp_path, monkeypatch, rows=ROWS):
    """The writer's output in a folder laid out as the book's (kernels/attention/records.json), loaded by
    records.load."""
    folder = tmp_path / "kernels" / "attention"
    _bench_module("record").write(rows, RUN, str(folder))
    monkeypatch.setattr(records, "ROOT", str(tmp_path))
    return folder, records.load("kernels/attention")


def test_writer_makes_a_record_equal_to_its_csv(tmp_path, monkeypatch):
    folder, held = _written(tmp_path, monkeypatch)
    with open(folder / "attention.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == COLUMNS and len(rows) == len(ROWS) + 1
    for h, row in zip(held["rows"], rows[1:]):
        assert len(h) == len(row) and all(_same(x, cell) for x, cell in zip(h, row)), (h, row)
    assert held["rows"][0][:7] == ("fp16", 64, "none", 1024, 2, 8, "flash") and held["rows"][0][8] == 300.0
    assert held["rows"][4][8] is None and held["rows"][4][11] == "not an sm_90 GPU"
    assert held["run"]["copy_gbs"] == 3000


def test_sweep_reads_the_measured_rows_by_S(tmp_path, monkeypatch):
    _, held = _written(tmp_path, monkeypatch)
    assert sweep(held) == {(64, "none"): {"flash": [(512, 250.0), (1024, 300.0)], "naive": [(1024, 50.5)]},
                           (64, "causal"): {"flash": [(512, 120.0)]}}
    assert sweep(held, "bf16") == {}
    assert record_rows(held)[1]["GB/s"] == 1500
    with pytest.raises(ValueError, match="record_rows: a row has 2 entries"):
        record_rows({"rows": [("fp16", 64)]})


def test_draw_sweep_one_panel_per_head_dim_and_mask(tmp_path, monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    _, held = _written(tmp_path, monkeypatch)
    fig = draw_sweep(held)
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["D = 64, mask none", "D = 64, mask causal"]
    assert [tuple(line.get_xdata()) for line in axes[0].lines] == [(512, 1024), (1024,)]
    assert [tuple(line.get_ydata()) for line in axes[0].lines] == [(250.0, 300.0), (50.5,)]
    assert [line.get_label() for line in axes[1].lines] == ["flash"]
    with pytest.raises(ValueError, match="no bf16 row"):
        draw_sweep(held, "bf16")
    import matplotlib.pyplot as plt
    plt.close(fig)
    paths = _bench_module("plot").plot(str(tmp_path / "kernels" / "attention"), str(tmp_path))
    assert paths == [str(tmp_path / "sweep_fp16.png")] and os.path.getsize(paths[0]) > 1000


def test_merge_joins_runs_in_order(tmp_path):
    record = _bench_module("record")
    record.write(ROWS[:2], RUN, str(tmp_path / "a"))
    record.write(ROWS[2:], dict(RUN, command="second", copy_gbs=3100, date="2026-01-03"), str(tmp_path / "b"))
    record.merge([str(tmp_path / "a"), str(tmp_path / "b")], str(tmp_path / "all"))
    rows, run = record.read(str(tmp_path / "all"))
    assert rows == ROWS
    assert run["command"] == RUN["command"] + " && second" and run["copy_gbs"] == 3050
    assert run["date"] == "2026-01-03"
    record.write(ROWS[:1], dict(RUN, device="other"), str(tmp_path / "c"))
    with pytest.raises(SystemExit, match="different devices"):
        record.merge([str(tmp_path / "a"), str(tmp_path / "c")], str(tmp_path / "bad"))

"""The "In the CuTe DSL" boxes: every box a chapter shows names a snippet of kernels/dsl/examples.py with a
recorded output, the box is a folded admonition holding the snippet's source and its output, labelled
RECORDED where the DSL does not run, and (where the DSL is installed) the recordings are what it prints."""

import glob
import json
import os
import re

import pytest

from kernels.dsl import box, host, source
from kernels.dsl.box import call, calls, recorded, snippets

RECORDED = recorded()
OUTPUT, VERSION = RECORDED["output"], RECORDED["version"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def boxes_in_chapters():
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "chapters", "*.ipynb"))):
        for cell in json.load(open(path))["cells"]:
            for name in re.findall(r"""\bbox\(["'](\w+)["']""", "".join(cell["source"])):
                found.setdefault(name, os.path.basename(path))
    return found


def test_every_box_has_a_snippet_and_a_recording():
    shown = boxes_in_chapters()
    chapters = {shown[n][:2] for n in shown}
    assert {"01", "02", "03", "04", "05", "06", "09"} <= chapters, chapters
    missing = [n for n in shown if n not in snippets()]
    assert not missing, f"chapters show boxes with no snippet in examples.py: {missing}"
    assert [call(n, *a) for n, a in calls()] == list(OUTPUT), "snippets.json and examples.py differ: re-record"
    assert VERSION == host.VERSION
    assert all(OUTPUT[n].strip() for n in OUTPUT)


def test_box_is_a_folded_admonition_with_source_and_output(monkeypatch):
    monkeypatch.setattr(host, "missing", lambda: "not installed (test)")
    b = box("ch1_static_dynamic", 16)
    page = b._repr_html_()
    assert page.startswith('<div class="admonition dropdown') and '<p class="admonition-title">In the CuTe DSL</p>' in page
    assert "ch1_static_dynamic(16)" in b.code and "printf" in page
    assert "RECORDED" in b.origin and "(?,8):(1,?)" in page
    assert repr(b).splitlines()[0] == "In the CuTe DSL" and OUTPUT["ch1_static_dynamic(16)"] in repr(b)


def test_source_is_the_function_as_written():
    text = source("ch6_tiled_mma")
    assert text.startswith("@cute.jit\ndef ch6_tiled_mma():") and "permutation_mnk=(32, 32, 16)" in text
    with pytest.raises(ValueError, match="no function 'nope'"):
        source("nope")


@pytest.mark.skipif(host.missing() is not None, reason=f"{host.missing()}")
@pytest.mark.parametrize("name, args", calls())
def test_recording_is_what_the_dsl_prints(name, args):
    from kernels.dsl import examples
    assert host.run(getattr(examples, name), *args) == OUTPUT[call(name, *args)]


def test_timing_table_says_what_is_not_measured():
    from cutelite.teach.records import load
    from kernels.dsl import bench
    record = load("kernels/dsl")
    text = bench.table(record["rows"], "H100")
    rows = text.splitlines()[2:]
    assert len(rows) == len(bench.KERNELS) and all("not yet measured" in r for r in rows) or record["run"]
    fake = {4096: {bench.KERNELS[0][0]: 500.0, bench.KERNELS[4][0]: 400.0}}
    lines = bench.table(fake, "H100").splitlines()
    assert lines[2].endswith("| 500.0 (1.00) |") and lines[6].endswith("| 400.0 (0.80) |")
    assert lines[3].endswith("| not yet measured |")

"""cutelite against C++ CuTe: the fixtures in tests/oracle/cases were printed by compiled C++ CuTe
(CUTLASS 4.2 headers; see tests/oracle/README.md). Every case checks the printed text, the offset
table, size/cosize/rank/depth and, where recorded, the print_layout text; an input that C++ rejects with
a static_assert must raise ValueError, TypeError or IndexError here.

    pytest tests/test_cpp_oracle.py -q          # one test per case, then the agreement table
    python tests/test_cpp_oracle.py [op ...]    # the agreement table with example mismatches
"""
import json
import os
import sys
from collections import Counter

import pytest

import cutelite as cl
from cutelite.int_tuple import fmt

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle", "cases")
ERRORS = (ValueError, TypeError, IndexError)


# ------------------------------------------------------------------------------------------------
# The neutral form of the fixtures -> cutelite values.
# An int-tuple is nested lists of ints ("_" for underscore); `dyn` lists the flat positions of its
# dynamic leaves (C++ `int`, cutelite `dyn(n)`); the other leaves are static (C++ `Int<n>`).

def int_tuple(value, dyn=()):
    dyn = set(dyn)
    pos = [0]

    def go(v):
        if isinstance(v, list):
            return tuple(go(e) for e in v)
        i = pos[0]
        pos[0] += 1
        if v == "_":
            return cl._
        return cl.dyn(v) if i in dyn else v
    return go(value)


def layout(j):
    return cl.make_layout(int_tuple(j["shape"], j["dyn"]["shape"]), int_tuple(j["stride"], j["dyn"]["stride"]))


def shape(j):
    return int_tuple(j["shape"], j["dyn"]["shape"])


def value(j):
    return int_tuple(j["value"], j["dyn"])


def tiler(j):
    """A Layout, or a tuple of Layouts, static ints and dynamic ints ({"value", "dyn"})."""
    if isinstance(j, dict):
        return layout(j)
    return tuple(e if isinstance(e, int) else value(e) if "value" in e else layout(e) for e in j)


def _order(j):
    if j is None:
        return cl.LayoutLeft
    return cl.LayoutRight if j == "right" else value(j)


BINARY = {name: getattr(cl, name) for name in [
    "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
    "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product"]}

# op -> function(args) -> result.  Inputs are built first (their printed text is checked too).
OPS = {
    "make_layout": lambda a: layout(a["layout"]),
    "make_layout_left": lambda a: cl.make_layout(shape(a["shape"])),
    "make_layout_right": lambda a: cl.make_layout(shape(a["shape"]), cl.LayoutRight),
    "make_ordered_layout": lambda a: cl.make_ordered_layout(shape(a["shape"]), value(a["order"])),
    "make_layout_like": lambda a: cl.make_layout_like(layout(a["layout"])),
    "make_fragment_like": lambda a: cl.make_fragment_like(layout(a["layout"])),
    "coalesce": lambda a: cl.coalesce(layout(a["layout"])),
    "coalesce_profile": lambda a: cl.coalesce(layout(a["layout"]), value(a["profile"])),
    "filter": lambda a: cl.filter(layout(a["layout"])),
    "composition": lambda a: cl.composition(layout(a["a"]), layout(a["b"])),
    "composition_tiler": lambda a: cl.composition(layout(a["a"]), tiler(a["tiler"])),
    "complement": lambda a: cl.complement(layout(a["layout"])),
    "complement_cotarget": lambda a: cl.complement(layout(a["layout"]), value(a["cotarget"])),
    "right_inverse": lambda a: cl.right_inverse(layout(a["layout"])),
    "left_inverse": lambda a: cl.left_inverse(layout(a["layout"])),
    "max_common_vector": lambda a: cl.max_common_vector(layout(a["a"]), layout(a["b"])),
    "max_common_layout": lambda a: cl.max_common_layout(layout(a["a"]), layout(a["b"])),
    "tile_to_shape": lambda a: cl.tile_to_shape(layout(a["block"]), shape(a["shape"]), _order(a["order"])),
    "upcast": lambda a: cl.upcast(layout(a["layout"]), a["n"]),
    "downcast": lambda a: cl.downcast(layout(a["layout"]), a["n"]),
    "slice": lambda a: cl.slice_and_offset(value(a["coord"]), layout(a["layout"])),
    "crd2idx": lambda a: cl.crd2idx(value(a["coord"]), *_shape_stride(layout(a["layout"]))),
    "idx2crd": lambda a: cl.idx2crd(value(a["index"]), shape(a["shape"])),
    "swizzle": lambda a: cl.Swizzle(*a["swizzle"]),
    "swizzle_layout": lambda a: cl.composition(cl.Swizzle(*a["swizzle"]), layout(a["layout"])),
    "print_layout": lambda a: layout(a["layout"]),
}
OPS.update({name: (lambda f: lambda a: f(layout(a["layout"]), tiler(a["tiler"])))(f) for name, f in BINARY.items()})


def _shape_stride(lay):
    return lay.shape, lay.stride


def _inputs(args):
    """The input layouts by the name C++ printed them under (in_a, in_b)."""
    names = {"layout": "in_a", "a": "in_a", "block": "in_a", "b": "in_b"}
    return {names[k]: layout(v) for k, v in args.items() if k in names}


# ------------------------------------------------------------------------------------------------
# One case: a list of mismatches (empty when cutelite agrees with C++).

def _offsets(f, n):
    return [int(f(i)) for i in range(n)]


def check(op, case):
    args = case["args"]
    if "error" in case:
        try:
            got = OPS[op](args)
        except ERRORS:
            return []
        except Exception as e:  # noqa: BLE001 - any other exception is a mismatch to report
            return ["C++ rejects (%r); cutelite raised %s: %s" % (case["error"], type(e).__name__, e)]
        return ["C++ rejects (%r); cutelite returned %s" % (case["error"], _text(got))]

    exp = case["expect"]
    bad = []
    try:
        for name, lay in _inputs(args).items():
            if name in exp and str(lay) != exp[name]:
                bad.append("input %s: C++ %s, cutelite %s" % (name, exp[name], lay))
        got = OPS[op](args)
    except Exception as e:  # noqa: BLE001
        return bad + ["C++ gives %s; cutelite raised %s: %s" % (exp.get("text"), type(e).__name__, e)]

    if op == "slice":
        got, offset = got
        _cmp(bad, "offset", exp, fmt(offset))
        _cmp(bad, "offset_value", exp, int(offset))
    try:
        if op in ("max_common_vector", "crd2idx", "idx2crd"):
            _cmp(bad, "text", exp, fmt(got))
            if "value" in exp:
                _cmp(bad, "value", exp, int(got))
            return bad
        _cmp(bad, "text", exp, str(got))
        if "offsets" in exp:
            n = len(exp["offsets"]) if op == "swizzle" else int(cl.size(got))
            _cmp(bad, "offsets", exp, _offsets(got, n))
        for prop in ("size", "cosize", "rank", "depth"):
            if prop in exp:
                _cmp(bad, prop, exp, int(getattr(cl, prop)(got)))
        if "print_layout" in exp:
            _cmp(bad, "print_layout", exp, cl.format_layout(got))
    except Exception as e:  # noqa: BLE001
        bad.append("%s raised %s: %s" % (_text(got), type(e).__name__, e))
    return bad


def _cmp(bad, key, exp, got):
    if key in exp and exp[key] != got:
        e, g = exp[key], got
        if key == "print_layout":
            e, g = "\n" + e, "\n" + g
        bad.append("%s: C++ %s, cutelite %s" % (key, _short(e), _short(g)))


def _short(x, n=400):
    s = str(x)
    return s if len(s) <= n else s[:n] + "..."


def _text(x):
    try:
        return fmt(x) if isinstance(x, (int, tuple)) else str(x)
    except Exception:  # noqa: BLE001
        return repr(x)


# ------------------------------------------------------------------------------------------------
# pytest: one test per case, ids "<op>/<case id>", then a summary table.

def load_cases():
    out = []
    for fn in sorted(os.listdir(CASES_DIR)):
        if fn.endswith(".json"):
            with open(os.path.join(CASES_DIR, fn)) as f:
                out += [(fn[:-5], c) for c in json.load(f)]
    return out


CASES = load_cases()
RESULTS = {}


@pytest.mark.parametrize("op,case", CASES, ids=["%s/%s" % (op, c["id"]) for op, c in CASES])
def test_cpp_oracle(op, case):
    bad = check(op, case)
    RESULTS[(op, case["id"])] = not bad
    assert not bad, "%s %s\n  args %s\n  %s" % (op, case["id"], json.dumps(case["args"]), "\n  ".join(bad))


def tally(cases, known=None, examples=None):
    """Per op: Counters of agreeing cases and of all cases (results in `known` are reused);
    `examples` (a dict) collects up to 4 spelled-out mismatches per op."""
    ok, total = Counter(), Counter()
    for op, c in cases:
        passed = (known or {}).get((op, c["id"]))
        if passed is None:
            bad = check(op, c)
            passed = not bad
            if bad and examples is not None and len(examples.setdefault(op, [])) < 4:
                examples[op].append("%s %s\n    args %s\n    %s" % (op, c["id"], json.dumps(c["args"]),
                                                                  "\n    ".join(bad)))
        ok[op] += passed
        total[op] += 1
    return ok, total


def table(ok, total):
    lines = ["%-22s %6s %6s %7s" % ("op", "agree", "cases", "%")]
    for op in sorted(total):
        lines.append("%-22s %6d %6d %6.1f%%" % (op, ok[op], total[op], 100.0 * ok[op] / total[op]))
    a, t = sum(ok.values()), sum(total.values())
    lines.append("%-22s %6d %6d %6.1f%%" % ("all", a, t, 100.0 * a / max(t, 1)))
    return "\n".join(lines)


def test_agreement_summary(capsys):
    """Print the agreement with C++ per op (reusing the results of the per-case tests above)."""
    ok, total = tally(CASES, known=RESULTS)
    with capsys.disabled():
        print("\nagreement with C++ CuTe (tests/oracle/cases):\n" + table(ok, total))
    assert sum(total.values()) > 0


if __name__ == "__main__":
    only = set(sys.argv[1:])
    examples = {}
    ok, total = tally([(op, c) for op, c in CASES if not only or op in only], examples=examples)
    print(table(ok, total))
    for op in sorted(examples):
        print("\n" + "\n".join(examples[op]))

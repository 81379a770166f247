"""Slicing a swizzled layout (Sw<B,M,S> o offset o L with some modes fixed) prints and evaluates as C++ CuTe.

tests/fixtures/swizzle_slices_cpp.txt is what C++ CuTe 4.2's slice_and_offset prints for each case,
compiled as host code (tests/fixtures/gen_swizzle_slices.sh): the sliced layout, layout(coord), the offset
and the sliced layout's values at up to 16 indices. C++ folds the swizzle into a plain layout when the free
modes miss one bit of every swizzled pair; a run-time (dyn) coordinate or offset makes the strides and the
offset it touches run-time ones (they print without the underscore), and the mode of each such stride
stays split (((_2,_2,_2)):((56,144,288)) where a static coordinate gives ((_2,_4)):((_56,_144))).

C++ combines a swizzled layout's own offset with the fixed coordinates by XOR, not +: where the two share
bits its slice disagrees with its own layout(coord) (compiled: Sw<2,3,3> o _24 o (_4,_64):(_64,_1) at
(_,25) gives 1 + slice(0) while the layout gives 49 there). cutelite reproduces C++; the post-condition
is checked where the offset adds without a carry.
"""

import os
import re

import pytest

from cutelite import _, dyn, idx2crd, slice_and_offset
from cutelite.parse import parse_layout
from cutelite.int_tuple import fmt

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "swizzle_slices_cpp.txt")


def read_blocks():
    with open(FIXTURE) as f:
        blocks = f.read().split("== ")[1:]
    out = []
    for block in blocks:
        head, *lines = block.strip().split("\n")
        out.append((head, dict(line.split(": ", 1) for line in lines)))
    return out


BLOCKS = read_blocks()
CASES = [(head, rec) for head, rec in BLOCKS if "error" not in rec]
REFUSED = [(head, rec) for head, rec in BLOCKS if "error" in rec]


def read_coord(text):
    """A coordinate as C++ prints it: `_` free, `_N` a static int, `N` a run-time int, tuples in ()."""
    toks = re.findall(r"[(),]|_?-?\d+|_", text)

    def item(i):
        tok = toks[i]
        if tok == "(":
            items, i = [], i + 1
            while True:
                value, i = item(i)
                items.append(value)
                if toks[i] == ")":
                    return tuple(items), i + 1
                i += 1
        if tok == "_":
            return _, i + 1
        return (int(tok[1:]) if tok.startswith("_") else dyn(int(tok))), i + 1
    value, end = item(0)
    assert end == len(toks), text
    return value


def free_shape(coord, shape):
    """The shapes of the free modes of coord, in order (what the slice's coordinates run over)."""
    if isinstance(coord, tuple):
        return sum((free_shape(c, s) for c, s in zip(coord, shape)), ())
    return (shape,) if coord is _ else ()


def fill(coord, values):
    """coord with its free modes set to the next items of the iterator values."""
    if isinstance(coord, tuple):
        return tuple(fill(c, values) for c in coord)
    return next(values) if coord is _ else coord


@pytest.mark.parametrize("head, cpp", CASES, ids=[h for h, _r in CASES])
def test_slice_prints_and_evaluates_as_cpp(head, cpp):
    layout = parse_layout(cpp["layout"])
    coord = read_coord(head.rsplit(" ", 1)[1])
    sub, off = slice_and_offset(coord, layout)
    assert str(sub) == cpp["slice"]
    assert str(layout(coord)) == cpp["call"]
    assert fmt(off) == cpp["offset"]
    shape = free_shape(coord, layout.shape)
    for pair in cpp["values"].split():
        i, value = map(int, pair.split(":"))
        assert sub(i) == value
        # the post-condition, with C++'s offset and values: offset + slice(i) is the layout at the full
        # coordinate, where the layout's own offset adds without a carry (C++ XORs it in, see the docstring)
        full = fill(coord, iter(idx2crd(i, shape)))
        if int(layout.offset) & layout.layout_b(full) == 0:
            assert int(cpp["offset"].lstrip("_")) + value == layout(full)


@pytest.mark.parametrize("head, cpp", REFUSED, ids=[h for h, _r in REFUSED])
def test_fixing_every_mode_is_refused_as_cpp_refuses_it(head, cpp):
    assert cpp["error"].startswith("no matching function for call to 'make_layout()'")
    layout = parse_layout("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")
    coord = read_coord(head.rsplit(" ", 1)[1])
    with pytest.raises(ValueError, match="slice_and_offset: .* fixes every mode"):
        slice_and_offset(coord, layout)
    assert layout(coord) == layout(int(coord[0]), int(coord[1]))   # evaluating there still works


def test_the_fixture_covers_what_the_slicing_decides():
    swizzles = {head.split()[0] for head, _r in CASES}
    assert swizzles == {"Sw<2,3,3>", "Sw<3,3,3>", "Sw<3,4,3>", "Sw<1,2,3>", "Sw<2,0,4>"}
    kept = [rec for _h, rec in CASES if rec["slice"].startswith("Sw<")]
    folded = [rec for _h, rec in CASES if not rec["slice"].startswith("Sw<")]
    assert len(kept) >= 40 and len(folded) >= 200
    assert any("M_" in rec["slice"] for rec in kept)                   # a MixedBits offset kept in the swizzle
    assert any(re.search(r"[(,]-?\d", rec["slice"]) for rec in folded)   # run-time strides
    assert any(not rec["offset"].startswith("_") for rec in folded)     # run-time offsets
    assert sum(head.endswith(("(_,_)", "(_,_,_)")) for head, _r in CASES) >= 20   # nothing fixed
    assert len(REFUSED) == 2

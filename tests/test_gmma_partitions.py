"""A TiledMMA of GMMA atoms over shared-memory tiles, against compiled C++ CuTe
(tests/fixtures/gmma_partitions_cpp.txt, made by gen_gmma_partitions.sh): every partition's layout and
element offsets (the byte swizzle applied), every register fragment's layout, and every descriptor
fragment's print and descriptors, for each case and thread the fixture records."""
import functools
import os
import re

import numpy as np
import pytest

from cutelite import Layout, _, make_tiled_mma, size
from cutelite.gmma import (
    DescriptorIterator, GmmaDescriptor, Layout_K_SW128_Atom, Layout_K_SW64_Atom, make_gmma_atom, make_gmma_desc,
    make_gmma_layout_atom, make_smem_desc_tensor, tile_to_smem,
)
from cutelite.identity import make_identity_tensor
from cutelite.tensor import Tensor, local_tile, make_tensor

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "gmma_partitions_cpp.txt")


def _blocks():
    out, key = {}, None
    for line in open(FIXTURE).read().splitlines():
        if line.startswith("== "):
            key = line[3:]
            out[key] = {}
        else:
            word, _, rest = line.partition(" ")
            out[key][word] = rest
    return out


BLOCKS = _blocks()
_KEY = re.compile(r"(\w+) (.*) thread (\d+)$")
_CASE = re.compile(r"(\w+)<(K|MN),(K|MN)> \(([\d,]+)\) A=(\S+) B=(\S+)$")
_SMEM = re.compile(r"(Layout_\w+_Atom<\w+>),\(([\d,]+)\)(?:,Step<([_\d,]+)>)?$")


def _ints(text):
    return tuple(int(v) for v in text.replace("_", "").split(","))


def _smem_tensor(spec):
    """make_tensor over a fresh array of tile_to_shape(GMMA layout atom, shape[, Step]), as the fixture names it."""
    atom, shape, step = _SMEM.match(spec).groups()
    layout = make_gmma_layout_atom("GMMA::" + atom)
    layout = tile_to_smem(layout, _ints(shape), _ints(step)) if step else tile_to_smem(layout, _ints(shape))
    return make_tensor(layout)


@functools.lru_cache(maxsize=None)
def _case(name):
    """(TiledMMA, sA, sB, gC) of a case: C is a row-major (M, N) tensor of the accumulator type."""
    atom, ma, mb, thr, a, b = _CASE.match(name).groups()
    mma = make_tiled_mma(make_gmma_atom(f"{atom}<GMMA::Major::{ma},GMMA::Major::{mb}>"), Layout(_ints(thr)))
    sA, sB = _smem_tensor(a), _smem_tensor(b)
    m, n = size(sA.layout, 0), size(sB.layout, 0)
    gC = make_tensor(np.zeros(m * n, dtype=mma.atom.types[0]), Layout((m, n), (n, 1)))
    return mma, sA, sB, gC


def _run(key):
    op, name, thread = _KEY.match(key).groups()
    mma, sA, sB, gC = _case(name)
    thr = mma.get_slice(int(thread))
    x = {"A": sA, "B": sB, "C": gC}[op[-1]]
    if op.startswith("make_fragment"):
        return getattr(thr, op)(getattr(thr, "partition_" + op[-1])(x))
    return getattr(thr, op)(x)


@pytest.mark.parametrize("key", [k for k in BLOCKS if k.startswith("partition_") and "fragment" not in k])
def test_partition_is_cpps(key):
    """Layout as C++ prints it; offsets from the tensor's start with the byte swizzle applied."""
    cpp, p = BLOCKS[key], _run(key)
    assert str(p.layout) == cpp["layout"]
    offsets = p.offsets().reshape(-1, order="F")
    n, total, weighted = (int(v.split("=")[1]) for v in cpp["offsets"].split())
    assert offsets.size == n
    assert int(offsets.sum()) == total
    assert int(((np.arange(n) + 1) * offsets).sum()) == weighted
    for pair in cpp[""].split():
        i, o = map(int, pair.split(":"))
        assert offsets[i] == o, (i, offsets[i], o)


@pytest.mark.parametrize("key", [k for k in BLOCKS if "fragment" in k])
def test_fragment_is_cpps(key):
    """Registers: C++'s layout. Descriptors: C++'s print, and descriptor i is C++'s (start address 0 on the
    host) moved by the tile's address, base >> 4."""
    cpp, f = BLOCKS[key], _run(key)
    if "layout" in cpp:
        assert not isinstance(f.engine, DescriptorIterator)
        assert str(f.layout) == cpp["layout"]
        return
    assert str(f) == cpp["tensor"]
    start = int(cpp["base"]) >> 4
    assert [f(i).desc for i in range(size(f.layout))] == [int(d, 16) + start for d in cpp["descs"].split()]


def test_fixture_is_complete():
    ops = {k.split()[0] for k in BLOCKS}
    assert len(BLOCKS) == 1026 and len(ops) == 9
    assert sum("descs" in v for v in BLOCKS.values()) == 338


# ---- what the kernels use ------------------------------------------------------------------------------
def test_descriptor_fragment_per_k_block_and_stage():
    """One descriptor per k-block and stage: a 64 x 16 tile of a 128-byte-swizzled K-major half tile is 32
    bytes further each k-block (2 in 16-byte units) and a 64 x 64 stage 8 KiB further (512). The stage mode
    is (_1,_3), as tile_to_shape leaves it (C++ prints (_1,_4) for 4 stages in the fixture)."""
    sA = make_tensor(tile_to_smem(Layout_K_SW128_Atom("half_t"), (64, 64, 3)))
    thr = make_tiled_mma(make_gmma_atom("SM90_64x64x16_F32F16F16_SS")).get_slice(0)
    tCrA = thr.partition_fragment_A(sA)
    assert str(tCrA.layout) == "(_1,_1,_4,(_1,_3)):(_0,_0,_2,(_0,_512))"
    d = tCrA(0, 0, 1, 2)
    assert d == make_gmma_desc("K", local_tile(sA(_, _, 2), (64, 16), (0, 1)))
    assert d.start_address == (1 * 16 * 2 + 2 * 64 * 64 * 2) >> 4
    assert (d.leading_byte_offset, d.stride_byte_offset, d.layout_type) == (1, 64, 1)
    assert tCrA(0, 0, _, 1)(3) == tCrA(0, 0, 3, 1)    # a slice is a view of the same descriptors
    # a run-time smem address: add address >> 4 (or pass the address)
    moved = make_smem_desc_tensor("K", thr.partition_A(sA), address=0x4400)
    assert moved(0, 0, 1, 2).desc == d.desc + (0x4400 >> 4)

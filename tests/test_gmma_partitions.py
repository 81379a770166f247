"""A TiledMMA of GMMA atoms over shared-memory tiles, against compiled C++ CuTe
(tests/fixtures/gmma_partitions_cpp.txt, made by gen_gmma_partitions.sh): every partition's layout and
element offsets (the byte swizzle applied), every register fragment's layout, and every descriptor
fragment's print and descriptors, for each case and thread the fixture records."""
import functools
import re

import numpy as np
import pytest

import cpp_fixture

from cutelite import Layout, _, make_tiled_mma, size
from cutelite.gmma import (
    DescriptorIterator, Layout_K_SW128_Atom, gmma_desc_blocks, make_gmma_atom, make_gmma_desc,
    make_gmma_layout_atom, make_smem_desc_tensor, tile_to_smem,
)
from cutelite.identity import make_identity_tensor
from cutelite.tensor import Tensor, local_tile, make_tensor



def _blocks():
    """{key: its one line (an smem_ layout) or {word: the rest of its line}} of the fixture."""
    out = {}
    for key, text in cpp_fixture.blocks("gmma_partitions_cpp.txt").items():
        lines = text.splitlines()
        if key.startswith("smem_"):
            out[key] = lines[-1] if lines else {}
        else:
            out[key] = dict(line.partition(" ")[::2] for line in lines)
    return out


BLOCKS = _blocks()
_KEY = re.compile(r"(\w+) (.*) thread (\d+)$")
_CASE = re.compile(r"(\w+)<(K|MN),(K|MN)> \(([\d,]+)\) A=(\S+) B=(\S+)$")
_SMEM = re.compile(r"(Layout_\w+_Atom<\w+>),\(([\d,]+)\)(?:,Step<([_\d,]+)>)?$")


def _ints(text):
    return tuple(int(v) for v in text.replace("_", "").split(","))


def _smem_layout(spec):
    """tile_to_shape(GMMA layout atom, shape[, Step]), as the fixture names it."""
    atom, shape, step = _SMEM.match(spec).groups()
    layout = make_gmma_layout_atom("GMMA::" + atom)
    return tile_to_smem(layout, _ints(shape), _ints(step)) if step else tile_to_smem(layout, _ints(shape))


@functools.lru_cache(maxsize=None)
def _case(name):
    """(TiledMMA, sA, sB, gC) of a case: C is a row-major (M, N) tensor of the accumulator type."""
    atom, ma, mb, thr, a, b = _CASE.match(name).groups()
    mma = make_tiled_mma(make_gmma_atom(f"{atom}<GMMA::Major::{ma},GMMA::Major::{mb}>"), Layout(_ints(thr)))
    sA, sB = make_tensor(_smem_layout(a)), make_tensor(_smem_layout(b))
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


@pytest.mark.parametrize("key", [k for k in BLOCKS if k.startswith("smem_")])
def test_smem_layout_is_cpps(key):
    which, name = key.split(" ", 1)
    a, b = _CASE.match(name).groups()[4:]
    assert str(_smem_layout(a if which == "smem_A" else b)) == BLOCKS[key]


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
    assert len(BLOCKS) == 1132 and len(ops) == 11
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


def test_descriptor_fragment_is_gmma_desc_blocks():
    """Each k-block's descriptor is the one gmma_desc_blocks reads off the layout (tested bit-exact against
    C++ in test_gmma.py), for a tile at a run-time address."""
    layout = tile_to_smem(Layout_K_SW128_Atom("half_t"), (128, 64))
    thr = make_tiled_mma(make_gmma_atom("SM90_64x128x16_F32F16F16_SS")).get_slice(0)
    frag = make_smem_desc_tensor("K", thr.partition_B(make_tensor(layout)), address=0x8000)
    assert [frag(0, 0, k) for k in range(4)] == gmma_desc_blocks("K", layout, (128, 16), address=0x8000)


@pytest.mark.parametrize("t, sw", [("half_t", "SW128"), ("float", "SW64"), ("uint8_t", "SW32")])
def test_smem_tensor_swizzles_bytes(t, sw):
    """Element c of a shared-memory tensor is where element_layout (the swizzle recast to elements, checked
    against the CUDA programming guide's 128-byte rule in test_gmma.py) puts it; writes land there too."""
    layout = tile_to_smem(make_gmma_layout_atom(f"GMMA::Layout_K_{sw}_Atom<{t}>"), (16, 64))
    s = make_tensor(layout)
    assert str(s).startswith(f"Sw<{ {'SW128': 3, 'SW64': 2, 'SW32': 1}[sw]},4,3>_smem_")
    assert str(s.layout) == str(layout.layout_b)
    e = layout.element_layout()
    assert [int(s.offsets().reshape(-1, order="F")[i]) for i in range(size(e))] == [e(i) for i in range(size(e))]
    s[(9, 5)] = 7
    assert s.engine[e(9, 5)] == 7 and s(9, 5) == 7 and int(s.engine.sum()) == 7


def test_interleaved_smem_tensor_is_unswizzled():
    s = make_tensor(tile_to_smem(make_gmma_layout_atom("GMMA::Layout_MN_INTER_Atom<half_t>"), (64, 16)))
    assert str(s) == "smem_float16[1024] + 0 o ((_8,_8),(_8,_2)):((_1,_64),(_8,_512))"


# ---- misuse: errors name the operation and the value -------------------------------------------------------
SS = make_tiled_mma(make_gmma_atom("SM90_64x64x16_F32F16F16_SS"))
RS = make_tiled_mma(make_gmma_atom("SM90_64x64x16_F32F16F16_RS"))
SW128 = tile_to_smem(Layout_K_SW128_Atom("half_t"), (64, 64))


def test_descriptor_fragments_need_shared_memory():
    plain = make_tensor(np.zeros(64 * 64, dtype=np.float16), Layout((64, 64), (64, 1)))
    with pytest.raises(TypeError, match=r"partition_fragment_A: SM90_64x64x16_F32F16F16_SS reads A from shared "
                                        r"memory .* got float16\[4096\]"):
        SS.get_slice(0).partition_fragment_A(plain)
    with pytest.raises(TypeError, match=r"partition_fragment_B: .* got \(\(_64,_16\),_1,_4\):\(\(_64,_1\),_0,_16\)"):
        RS.get_slice(0).partition_fragment_B(Layout((64, 64), (64, 1)))
    with pytest.raises(TypeError, match=r"make_fragment_B: SM90_64x64x16_F32F16F16_RS reads B"):
        RS.get_slice(0).make_fragment_B(RS.get_slice(0).partition_B(plain))
    rs = ("partition_fragment_A SM90_64x64x16_F32F16F16_RS<K,K> (1,1,1) A=Layout_K_INTER_Atom<half_t>,(64,64) "
          "B=Layout_K_INTER_Atom<half_t>,(64,64) thread 0")
    assert str(RS.get_slice(0).partition_fragment_A(plain).layout) == BLOCKS[rs]["layout"]   # A in registers
    with pytest.raises(TypeError, match=r"make_smem_desc_tensor: expected a shared-memory Tensor .*ArithTuple"):
        make_smem_desc_tensor("K", make_identity_tensor((64, 16)))
    with pytest.raises(ValueError, match=r"make_smem_desc_tensor: major must be 'K' or 'MN', got 'M'"):
        make_smem_desc_tensor("M", make_tensor(SW128))
    with pytest.raises(TypeError, match=r"make_gmma_desc: GMMA Descriptors can only be constructed on smem: "
                                        r"float16\[4096\]"):
        make_gmma_desc("K", plain)


def test_fragments_need_a_partition():
    with pytest.raises(ValueError, match=r"make_fragment_A: expected a partitioned .* got \(\(_8,_8\),\(_64,_1\)\)"):
        SS.get_slice(0).make_fragment_A(make_tensor(SW128))
    with pytest.raises(ValueError, match=r"make_gmma_desc: Not a canonical GMMA_K Layout: Expected K-size 2"):
        make_gmma_desc("K", make_tensor(SW128))     # the whole 64 x 64 tile is four k-blocks, not one


def test_smem_tensor_refusals():
    with pytest.raises(ValueError, match=r"make_tensor: the shared-memory layout .* holds 16-bit elements, not "
                                         r"32-bit float32"):
        make_tensor(np.zeros(4096, dtype=np.float32), SW128)
    with pytest.raises(ValueError, match=r"make_tensor: layout .* reaches offsets 0\.\.4095, outside the 4000"):
        make_tensor(np.zeros(4000, dtype=np.float16), SW128)
    from cutelite.swizzle import Swizzle
    with pytest.raises(ValueError, match=r"Tensor: Sw<3,2,3> keeps 4-byte units together, which 8-byte float64"):
        Tensor(np.zeros(64), Layout(64), 0, Swizzle(3, 2, 3))
    with pytest.raises(TypeError, match=r"Tensor: swizzle must be a Swizzle .* got 'Sw'"):
        Tensor(np.zeros(64), Layout(64), 0, "Sw")
    with pytest.raises(TypeError, match=r"Tensor: only memory takes a swizzle, not the iterator ArithTuple"):
        Tensor(make_identity_tensor(4).engine, Layout(4), 0, Swizzle(1, 4, 3))


def test_descriptor_iterator_refusals():
    d = make_gmma_desc("K", local_tile(make_tensor(SW128), (64, 16), (0, 0)))
    with pytest.raises(TypeError, match=r"DescriptorIterator: expected a GmmaDescriptor .* got 5"):
        DescriptorIterator(5)
    with pytest.raises(TypeError, match=r"DescriptorIterator: an offset must be an int .* got 1\.5"):
        DescriptorIterator(d) + 1.5
    with pytest.raises(ValueError, match=r"DescriptorIterator: start address 16384 .* 14-bit field"):
        DescriptorIterator(d)[1 << 14]
    with pytest.raises(TypeError, match=r"Tensor.to_numpy|Tensor.offsets: .* is a tensor of GMMA::DescriptorIterator"):
        SS.get_slice(0).partition_fragment_A(make_tensor(SW128)).offsets()

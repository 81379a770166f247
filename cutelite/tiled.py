"""TiledMMA and TiledCopy: many atoms working on one tile, and each thread's share of it.

An atom (atoms.py, copy_atoms.py) is one instruction for one warp (or one thread). A *tiled* MMA lays
out several atoms over more threads (the atom layout, e.g. 2x2 warps) and lets each thread repeat its
atom over a larger tile (the permutation of M, N, K). A *tiled* copy does the same for a copy atom, with
a (thread, value) layout that covers a tile.

Everything here is layout algebra, as in CuTe's mma_atom.hpp and copy_atom.hpp: a tensor of the tile is
divided into atom-sized pieces (zipped_divide), each piece is re-indexed by the atom's (thread, value)
layout (composition), and the threads' modes are divided out; a thread's partition is then a slice.
Tensors are cutelite.Tensor (memory, or the counting engine of an identity tensor, whose partitions give
each thread its coordinates); a Layout in their place gives back the partitioned Layout.

Fragments (make_fragment_A|B|C, partition_fragment_X = make_fragment_X(partition_X)) are registers laid out
like the partition, except where a GMMA atom reads an operand from shared memory (B, and A of an SS atom):
there the fragment is a tensor of wgmma descriptors over the shared-memory partition (gmma.py), as in C++.
Post: for GMMA atoms over shared-memory tensors, every partition and fragment is C++'s
(tests/fixtures/gmma_partitions_cpp.txt).
"""

from .atoms import MMA_Atom, check_tv, make_mma_atom, tile_shape as atom_tile_shape
from .copy_atoms import Copy_Atom
from .errors import OutOfRange, quote
from .gmma import GMMA_Atom, make_smem_desc_tensor
from .int_tuple import dyn, flatten as flatten_tuple, fmt, is_int, is_static, is_tuple, product_each, mod, wrap
from .layout import (
    Layout, _, _check_shape, _need_int, _need_tiler, append, complement, composition, coalesce, get, get_flat_coord,
    left_inverse, logical_divide, logical_product, make_layout, make_fragment_like, raked_product, rank,
    right_inverse, size, filter, slice_and_offset, tiled_product, upcast, zipped_divide,
)
from .tensor import Tensor, make_tensor

__all__ = ["TiledMMA", "ThrMMA", "TiledCopy", "ThrCopy", "make_tiled_mma", "make_tiled_copy",
           "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C", "make_tiled_copy_S",
           "make_tiled_copy_D", "make_tiled_copy_C_atom", "tile_shape", "tile_size", "thr_size",
           "partition_shape_A", "partition_shape_B", "partition_shape_C"]


# ---- small helpers -------------------------------------------------------------------------------------
def _layout_of(x, what):
    """The layout of a tensor (anything with .layout) or the layout itself."""
    lay = getattr(x, "layout", x)
    if not (isinstance(lay, Layout) or hasattr(lay, "layout_b")):
        raise TypeError(f"{what}: expected a Tensor or a Layout, got {x!r}")
    return lay


def _slice(x, layout, coord):
    """Slice `layout` (a re-tiling of x's layout) at coord: a Tensor view if x is a Tensor, else a Layout."""
    sub, off = slice_and_offset(coord, layout)
    return x.view(sub, off) if hasattr(x, "engine") else sub


def _view(x, layout):
    """x's data through another layout (x a Tensor), or the layout itself."""
    return x.view(layout) if hasattr(x, "engine") else layout


def _fragment(x, layout, what):
    """A fresh register tensor with `layout`, of x's element type (x a Tensor), or the layout itself.
    Registers are allocated at compile time, so C++ refuses a fragment of a run-time shape."""
    if not is_static(layout.shape):
        raise ValueError(f"{what}: the fragment {layout} has a run-time shape (C++: Dynamic owning tensors "
                         "not supported); partition a tile of static shape")
    if not hasattr(x, "engine"):
        return layout
    x._need_memory(what)
    return make_tensor(layout, dtype=x.engine.dtype)


def _repeat_free(n):
    """n copies of _ (just _ for n == 1, as CuTe's repeat<1>)."""
    return _ if n == 1 else (_,) * n


def _zip(layout):
    """((a,b),(c,d)) -> ((a,c),(b,d)): transpose the two outer levels of a layout (CuTe's zip)."""
    s, d = layout.shape, layout.stride
    return Layout._make(tuple(zip(*s)), tuple(zip(*d)))


def _with_shape(layout, shape):
    """layout viewed through the compact layout of `shape` (CuTe's Layout::with_shape)."""
    return composition(layout, make_layout(shape))


def _shape(shape, op, what):
    """shape, checked to be an int or a (nested) tuple of positive ints; errors name `op`."""
    _check_shape(shape, what, op)
    if any(s <= 0 for s in flatten_tuple(wrap(shape))):
        raise ValueError(f"{op}: {what} {quote(shape, fmt)} has a non-positive extent")
    return shape


def _check_thread(idx, what):
    """TypeError naming `what` unless idx is an int >= 0 (a thread index: CUDA's threadIdx is unsigned). As in
    C++, an index past the last thread is not refused: get_slice computes with it (see the callers)."""
    if not is_int(idx) or idx < 0:
        raise TypeError(f"{what}: thread index must be an int >= 0, got {quote(idx)}")
    _need_int(idx, what, "thread index")


# ---- TiledMMA --------------------------------------------------------------------------------------------
class TiledMMA:
    """An MMA atom tiled over threads (atom layout) and over values (permutation of M, N, K).

    thr_layout_vmnk: (ThrV, ThrM, ThrN, ThrK) -> thread index, = tiled_product(atom.ThrID, atom layout).
    permutation: three entries, each `_` (the atoms' own extent), an int n (n:1) or a Layout that
    reorders that mode before it is tiled by atoms.
    """

    def __init__(self, atom, thr_layout_vmnk, permutation):
        self.atom, self.thr_layout_vmnk, self.permutation = atom, thr_layout_vmnk, permutation

    # -- sizes
    def get_thr_layout_vmnk(self):
        return self.thr_layout_vmnk

    @property
    def thr_layout(self):
        """Thread coordinates -> thread index (what size(mma) counts)."""
        return self.thr_layout_vmnk

    def permutation_mnk(self, i):
        """The tiler of mode i (0: M, 1: N, 2: K): the permutation, or atom size x threads in that mode."""
        p = self.permutation[i]
        return self.atom.Shape_MNK[i] * size(self.thr_layout_vmnk, i + 1) if p is _ else p

    def tile_size_mnk(self, i):
        return size(self.permutation_mnk(i))

    # -- from a tile to (thread, value) modes
    def _thrfrg(self, layout, atom_tv, modes):
        """((ThrV,(Thr_i,Thr_j)),(FrgV,(Rest_i,Rest_j,...))) for a tile with modes (i, j) of MNK."""
        i, j = modes
        if rank(layout) < 2:
            raise ValueError(f"partition: the tile {layout} needs at least 2 modes")
        t = logical_divide(layout, (self.permutation_mnk(i), self.permutation_mnk(j)))     # (PermI,PermJ)
        atom = (make_layout(self.atom.Shape_MNK[i]), make_layout(self.atom.Shape_MNK[j]))
        a = zipped_divide(t, atom)                                          # ((AtomI,AtomJ),(RestI,RestJ))
        tv = composition(a, (atom_tv, _))                                   # ((ThrV,FrgV),(RestI,RestJ))
        thr = (_, (make_layout(size(self.thr_layout_vmnk, i + 1)),
                   make_layout(size(self.thr_layout_vmnk, j + 1))))
        return zipped_divide(tv, thr)                      # ((ThrV,(ThrI,ThrJ)),(FrgV,(RestI,RestJ)))

    def thrfrg_A(self, layout):
        """(M,K) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK)))."""
        return self._thrfrg(layout, check_tv(self.atom, "A", "TiledMMA (operand A)"), (0, 2))

    def thrfrg_B(self, layout):
        """(N,K) -> ((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK)))."""
        return self._thrfrg(layout, self.atom.LayoutB_TV, (1, 2))

    def thrfrg_C(self, layout):
        """(M,N) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN)))."""
        return self._thrfrg(layout, self.atom.LayoutC_TV, (0, 1))

    # -- the (thread index, value) -> tile coordinate layouts
    def _thridx_to_thrid(self):
        """thread index -> index of its (V,M,N,K) coordinate, restricted to the tiled MMA's threads."""
        vmnk = self.thr_layout_vmnk
        inv = right_inverse(make_layout(vmnk, complement(vmnk)))
        return composition(Layout((size(vmnk), 1), (1, 0)), inv)

    def _layout_TV(self, thrfrg, modes, broadcast):
        ref = make_layout((self.tile_size_mnk(modes[0]), self.tile_size_mnk(modes[1])))
        frg = thrfrg(ref)
        if broadcast is not None:   # A ignores ThrN, B ignores ThrM: make that thread mode span M and N
            frg = composition(frg, ((_, broadcast), _))
        return composition(frg, (self._thridx_to_thrid(), _))

    def get_layoutC_TV(self):
        """(thread index, value) -> index m + n*M in the M x N tile of C."""
        return self._layout_TV(self.thrfrg_C, (0, 1), None)

    def get_layoutA_TV(self):
        """(thread index, value) -> index m + k*M in the M x K tile of A."""
        mn = Layout((size(self.thr_layout_vmnk, 1), size(self.thr_layout_vmnk, 2)), (1, 0))
        return self._layout_TV(self.thrfrg_A, (0, 2), (mn, _))

    def get_layoutB_TV(self):
        """(thread index, value) -> index n + k*N in the N x K tile of B."""
        mn = Layout((size(self.thr_layout_vmnk, 1), size(self.thr_layout_vmnk, 2)), (0, 1))
        return self._layout_TV(self.thrfrg_B, (1, 2), (mn, _))

    # -- threads
    def get_slice(self, thr_idx):
        """Thread thr_idx's view of the tiled MMA (ThrMMA). As in C++, an index past the last thread
        wraps around (its coordinate is taken modulo each thread mode)."""
        _check_thread(thr_idx, "TiledMMA.get_slice")
        return ThrMMA(self, get_flat_coord(self.thr_layout_vmnk, dyn(thr_idx)))   # a run-time index, as in C++

    get_thread_slice = get_slice

    # -- fragments of a thread's partition (C++ MMA_Atom::make_fragment_A|B|C)
    def _check_partitioned(self, p, atom_tv, what):
        if rank(p) < 3 or size(p, 0) != size(atom_tv, 1):
            raise ValueError(f"{what}: expected a partitioned (MMA,...) tensor of rank >= 3 with "
                             f"{size(atom_tv, 1)} values in mode 0, got {_layout_of(p, what)}")

    def _desc_major(self, operand):
        """The major of `operand` when the atom reads it from shared memory through descriptors (GMMA: B,
        and A of an SS atom), else None."""
        a = self.atom
        if not isinstance(a, GMMA_Atom) or (operand == "A" and a.source != "SS"):
            return None
        return a.major_a if operand == "A" else a.major_b

    def _make_fragment(self, p, operand, atom_tv, what):
        self._check_partitioned(p, atom_tv, what)
        major = self._desc_major(operand)
        if major is None:
            return _fragment(p, make_fragment_like(_layout_of(p, what)), what)
        if not isinstance(p, Tensor) or p.swizzle is None:
            raise TypeError(f"{what}: {self.atom.name} reads {operand} from shared memory through descriptors: "
                            "expected a partition of a shared-memory Tensor (make_tensor(array, tile_to_smem(..."
                            f"))), got {quote(p, str)}")
        return make_smem_desc_tensor(major, p)

    def make_fragment_A(self, p, what="make_fragment_A"):
        """A fragment for a partition_A `p`: registers laid out like it (make_fragment_like: mode 0
        compact first), or, for a GMMA atom that reads A from shared memory (SS), a tensor of descriptors
        (gmma.make_smem_desc_tensor: one per k-block, no data copied)."""
        return self._make_fragment(p, "A", check_tv(self.atom, "A", what), what)

    def make_fragment_B(self, p, what="make_fragment_B"):
        """As make_fragment_A, for B (a tensor of descriptors for every GMMA atom)."""
        return self._make_fragment(p, "B", self.atom.LayoutB_TV, what)

    def make_fragment_C(self, p, what="make_fragment_C"):
        """Accumulators for a partition_C `p`: always compact column-major of its shape."""
        self._check_partitioned(p, self.atom.LayoutC_TV, what)
        return _fragment(p, make_layout(_layout_of(p, what).shape), what)

    def __str__(self):
        return ("TiledMMA\n"
                f"  ThrLayoutVMNK:  {self.thr_layout_vmnk}\n"
                f"  PermutationMNK: {_tile_str(self.permutation)}\n"
                + str(self.atom))

    def __repr__(self):
        return f"TiledMMA({self.atom!r}, {self.thr_layout_vmnk}, {_tile_str(self.permutation)})"


def _tile_str(t):
    if is_tuple(t):
        return "(" + ",".join(_tile_str(v) for v in t) + ")"
    if t is _:
        return "_"
    return fmt(t) if is_int(t) else str(t)


class ThrMMA:
    """One thread's share of a TiledMMA: partitions of A (MMA,MMA_M,MMA_K), B (MMA,MMA_N,MMA_K) and
    C (MMA,MMA_M,MMA_N), where MMA is the thread's values in one atom and MMA_M... count the atoms it
    repeats over the tile."""

    def __init__(self, tiled, thr_vmnk):
        self.tiled, self.thr_vmnk = tiled, thr_vmnk

    def _partition(self, x, thrfrg, thr_coord, what):
        frg = thrfrg(_layout_of(x, what))
        return _slice(x, frg, (thr_coord, (_, _repeat_free(rank(frg, 1, 1)))))

    def partition_A(self, x):
        v, m, n, k = self.thr_vmnk
        return self._partition(x, self.tiled.thrfrg_A, (v, (m, k)), "partition_A")

    def partition_B(self, x):
        v, m, n, k = self.thr_vmnk
        return self._partition(x, self.tiled.thrfrg_B, (v, (n, k)), "partition_B")

    def partition_C(self, x):
        v, m, n, k = self.thr_vmnk
        return self._partition(x, self.tiled.thrfrg_C, (v, (m, n)), "partition_C")

    def partition_fragment_A(self, x):
        """make_fragment_A(partition_A(x))."""
        return self.tiled.make_fragment_A(self.partition_A(x), "partition_fragment_A")

    def partition_fragment_B(self, x):
        """make_fragment_B(partition_B(x))."""
        return self.tiled.make_fragment_B(self.partition_B(x), "partition_fragment_B")

    def partition_fragment_C(self, x):
        """make_fragment_C(partition_C(x))."""
        return self.tiled.make_fragment_C(self.partition_C(x), "partition_fragment_C")

    def make_fragment_A(self, p):
        return self.tiled.make_fragment_A(p)

    def make_fragment_B(self, p):
        return self.tiled.make_fragment_B(p)

    def make_fragment_C(self, p):
        return self.tiled.make_fragment_C(p)

    def __str__(self):
        return f"ThrMMA\n  Thr VMNK: {fmt(self.thr_vmnk)}\n" + str(self.tiled)


def make_tiled_mma(atom, thr_layout=None, permutations=None):
    """Tile `atom` over threads (`thr_layout`, an (M,N,K) layout of atoms, padded to rank 3 with 1:0)
    and values (`permutations`: up to three entries, each _, an int or a Layout; padded with _).

    Post: size(result) == size(atom.ThrID) * size(thr_layout); tile_shape(result) is the (M,N,K) tile;
    the TV layouts of A, B and C cover their tiles (A's and B's once per K block).
    """
    if isinstance(atom, str):
        try:
            atom = make_mma_atom(atom)
        except ValueError as e:
            raise ValueError(f"make_tiled_mma: {e}") from None
    if not isinstance(atom, MMA_Atom):
        raise TypeError(f"make_tiled_mma: atom must be an MMA_Atom (make_mma_atom(name)), got {atom!r}")
    thr_layout = Layout((1, 1, 1)) if thr_layout is None else thr_layout
    if isinstance(thr_layout, tuple) or is_int(thr_layout):
        thr_layout = make_layout(_shape(thr_layout, "make_tiled_mma", "the atom layout"))
    if not isinstance(thr_layout, Layout):
        raise TypeError(f"make_tiled_mma: the atom layout must be a Layout, got {thr_layout!r}")
    if rank(thr_layout) > 3:
        raise ValueError(f"make_tiled_mma: the atom layout {thr_layout} has rank {rank(thr_layout)}; "
                         "TiledMMA requires rank-3 AtomLayoutMNK")
    thr_mnk = append(thr_layout, Layout(1, 0), 3)
    perm = (_, _, _) if permutations is None else permutations
    perm = perm if is_tuple(perm) else (perm,)
    if len(perm) > 3:
        raise ValueError(f"make_tiled_mma: permutation {_tile_str(perm)} has rank {len(perm)}; "
                         "TiledMMA requires rank-3 PermutationMNK")
    perm = tuple(perm) + (_,) * (3 - len(perm))
    _need_tiler(perm, "make_tiled_mma")
    for p in perm:
        if not (p is _ or is_int(p) or isinstance(p, Layout)):
            raise TypeError(f"make_tiled_mma: a permutation entry must be _, an int or a Layout, got {p!r}")
        if not is_static(p.shape if isinstance(p, Layout) else p) or (
                isinstance(p, Layout) and not is_static(p.stride)):
            raise ValueError(f"make_tiled_mma: permutation {_tile_str(perm)} must be static "
                             "(TiledMMA requires static permutations of MNK)")
    mma = TiledMMA(atom, tiled_product(atom.ThrID, thr_mnk), perm)
    for i, mode in enumerate("MNK"):
        step = atom.Shape_MNK[i] * size(mma.thr_layout_vmnk, i + 1)
        if mod(mma.tile_size_mnk(i), step) != 0:
            raise ValueError(f"make_tiled_mma: permutation {_tile_str(perm[i])} of {mode} has size "
                             f"{mma.tile_size_mnk(i)}, not a multiple of the atoms' {mode} extent {step} "
                             f"({atom.Shape_MNK[i]} x {size(mma.thr_layout_vmnk, i + 1)} atoms)")
    return mma


def tile_size(mma, i):
    """Extent of the tiled MMA in mode i (0: M, 1: N, 2: K); of a TiledCopy, size of tiler mode i."""
    if not isinstance(mma, (TiledMMA, TiledCopy)) or not is_int(i):
        raise TypeError(f"tile_size: expected a TiledMMA or TiledCopy and a mode index, got {mma!r}, {i!r}")
    modes = 3 if isinstance(mma, TiledMMA) else len(mma.tiler) if is_tuple(mma.tiler) else 1
    if not 0 <= i < modes:
        raise OutOfRange(f"tile_size: mode {i} is out of range: {type(mma).__name__} has modes 0..{modes - 1}")
    if isinstance(mma, TiledCopy):
        return size(mma.tiler[i]) if is_tuple(mma.tiler) else size(mma.tiler)
    return mma.tile_size_mnk(i)


def tile_shape(x, operand=None):
    """(M, N, K) of a TiledMMA; for an MMA atom and an operand, atoms.tile_shape(atom, operand)."""
    if isinstance(x, TiledMMA):
        return tuple(x.tile_size_mnk(i) for i in range(3))
    return atom_tile_shape(x, operand)


def thr_size(x):
    """Number of threads of a TiledMMA or TiledCopy (same as size(x))."""
    if not isinstance(x, (TiledMMA, TiledCopy)):
        raise TypeError(f"thr_size: expected a TiledMMA or TiledCopy, got {x!r}")
    return size(x.thr_layout)


def _partition_shape(mma, shape, thrfrg_name):
    what = "partition_shape_" + thrfrg_name[-1]
    _check_mma(mma, what)
    thrfrg = getattr(mma, thrfrg_name)
    dummy = thrfrg(make_layout(_shape(shape, what, "shape")))
    return dummy(0, (_, _repeat_free(rank(dummy, 1, 1)))).shape


def partition_shape_A(mma, shape_MK):
    """Shape of any thread's partition_A of an M x K tile: (MMA, MMA_M, MMA_K)."""
    return _partition_shape(mma, shape_MK, "thrfrg_A")


def partition_shape_B(mma, shape_NK):
    return _partition_shape(mma, shape_NK, "thrfrg_B")


def partition_shape_C(mma, shape_MN):
    return _partition_shape(mma, shape_MN, "thrfrg_C")


# ---- TiledCopy -------------------------------------------------------------------------------------------
class TiledCopy:
    """A copy atom tiled over a tile: layout_tv maps (thread index, value) -> coordinate in the tile
    `tiler` (a shape, or a tuple of layouts); the atom moves size(atom values) of each thread's values
    at once."""

    def __init__(self, atom, layout_tv, tiler):
        self.atom, self.layout_tv, self.tiler = atom, layout_tv, tiler

    @property
    def thr_layout(self):
        return get(self.layout_tv, 0)

    @property
    def atom_num_thr(self):
        return size(self.atom.ValLayoutRef, 0)

    @property
    def atom_num_val(self):
        return size(self.atom.ValLayoutRef, 1)

    def _ref2trg(self, trg):
        return composition(right_inverse(self.atom.ValLayoutRef), trg)

    def tile2thrfrg(self, layout, ref2trg):
        """((TileM,TileN,...),(RestM,RestN,...)) -> (Thr,(FrgV,FrgX),(RestM,RestN,...))."""
        atom_tv = zipped_divide(self.layout_tv, (self.atom_num_thr, self.atom_num_val))
        trg_tv = composition(atom_tv, (ref2trg, _))           # ((trg_tid,trg_val),(rest_tid,rest_val))
        thrval2mn = coalesce(_zip(trg_tv), (1, (1, 1)))        # ((trg_tid,rest_tid),(trg_val,rest_val))
        tv = composition(layout, (thrval2mn, _))
        return tv((_, _), _)

    def _tidfrg(self, layout, trg):
        if rank(layout) < _rank_of_tiler(self.tiler):
            raise ValueError(f"partition: the tensor {layout} has fewer modes than the tiler "
                             f"{_tile_str(self.tiler)} (Rank of tensor to be partitioned too small)")
        return self.tile2thrfrg(zipped_divide(layout, self.tiler), self._ref2trg(trg))

    def tidfrg_S(self, layout):
        """(M,N,...) -> (Thr,(FrgV,FrgX),(RestM,RestN,...)) in the source's (thread, value) order."""
        return self._tidfrg(layout, self.atom.ValLayoutSrc)

    def tidfrg_D(self, layout):
        return self._tidfrg(layout, self.atom.ValLayoutDst)

    def retile(self, layout):
        """A thread's (V, Rest...) values regrouped as (atom values, rest values), Rest...: so that a
        fragment made by someone else (e.g. partition_fragment_A) lines up with partition_S/D."""
        r = rank(layout)
        v = size(layout, 0)
        nthr = size(self.layout_tv, 0)
        frg_mn = upcast(_with_shape(right_inverse(self.layout_tv), _tiler_shape(self.tiler)), nthr * v)
        frg_v = zipped_divide(logical_product(make_layout(v), right_inverse(frg_mn)),
                              make_layout(self.atom_num_val))
        t = zipped_divide(layout, (v,) + tuple(product_each(frg_mn.shape) if is_tuple(frg_mn.shape)
                                               else (frg_mn.shape,)))
        vt = composition(t, (frg_v, _))
        return vt(_, (0,) + (_,) * (r - 1))

    def _layout_TV(self, trg):
        shp = _tiler_shape(self.tiler)
        ref = make_layout((shp, 1))
        return self.tile2thrfrg(ref, self._ref2trg(trg))(_, _, 0)

    def get_layoutS_TV(self):
        """(thread index, value) -> index in the tile, in the source's value order."""
        return self._layout_TV(self.atom.ValLayoutSrc)

    def get_layoutD_TV(self):
        return self._layout_TV(self.atom.ValLayoutDst)

    def get_slice(self, thr_idx):
        """Thread thr_idx's view of the tiled copy (ThrCopy). As in C++, an index past the last thread is
        not refused: its partitions slice the thread mode there, which goes on along its last mode."""
        _check_thread(thr_idx, "TiledCopy.get_slice")
        return ThrCopy(self, dyn(thr_idx))

    get_thread_slice = get_slice

    def __str__(self):
        return ("TiledCopy\n"
                f"  Tiler_MN:       {_tile_str(self.tiler)}\n"
                f"  TiledLayout_TV: {self.layout_tv}\n"
                + str(self.atom))

    def __repr__(self):
        return f"TiledCopy({self.atom!r}, {self.layout_tv}, {_tile_str(self.tiler)})"


def _tiler_shape(tiler):
    """shape(Tiler_MN): a shape stays itself; a tuple of layouts gives each layout's shape."""
    if is_tuple(tiler):
        return tuple(_tiler_shape(t) for t in tiler)
    return tiler.shape if isinstance(tiler, Layout) else tiler


def _rank_of_tiler(tiler):
    return len(tiler) if is_tuple(tiler) else 1


class ThrCopy:
    """One thread's share of a TiledCopy: partition_S/D give (CPY, CPY_M, CPY_N, ...) views, where CPY
    is (atom values, atoms); retile_S/D regroup a fragment the same way."""

    def __init__(self, tiled, thr_idx):
        self.tiled, self.thr_idx = tiled, thr_idx

    def _partition(self, x, tidfrg, what):
        lay = _layout_of(x, what)
        return _slice(x, tidfrg(lay), (self.thr_idx, _, _repeat_free(rank(lay))))

    def partition_S(self, x):
        return self._partition(x, self.tiled.tidfrg_S, "partition_S")

    def partition_D(self, x):
        return self._partition(x, self.tiled.tidfrg_D, "partition_D")

    def retile_S(self, x):
        return _view(x, self.tiled.retile(_layout_of(x, "retile_S")))

    def retile_D(self, x):
        return _view(x, self.tiled.retile(_layout_of(x, "retile_D")))

    def __str__(self):
        return f"ThrCopy\n  ThrIdx: {self.thr_idx}\n" + str(self.tiled)


def _make(atom, layout_tv, tiler, what):
    if not isinstance(atom, Copy_Atom):
        raise TypeError(f"{what}: atom must be a Copy_Atom (make_copy_atom(op, type)), got {atom!r}")
    nthr, nval = size(layout_tv, 0), size(layout_tv, 1)
    if mod(nthr, size(atom.ValLayoutRef, 0)) != 0:
        raise ValueError(f"{what}: {nthr} threads are too few for {atom!r}, which needs a multiple of "
                         f"{size(atom.ValLayoutRef, 0)} (TiledCopy uses too few thrs for selected CopyAtom)")
    if mod(nval, size(atom.ValLayoutRef, 1)) != 0:
        raise ValueError(f"{what}: each thread holds {nval} values, not a multiple of the {size(atom.ValLayoutRef, 1)}"
                         f" that {atom!r} moves at once (TiledCopy uses too few vals for selected CopyAtom)")
    return TiledCopy(atom, layout_tv, tiler)


def make_tiled_copy(atom, thr_layout, val_layout=None):
    """Tile a copy atom: thr_layout maps (m,n) -> thread index, val_layout (m,n) -> value index within
    a thread; each thread's block of values sits at its place in the thread grid (raked_product).

    Post: TiledLayout_TV (thread, value) -> (m,n) index in the tile; Tiler_MN == product_each(shape(
    raked_product(thr_layout, val_layout))).
    """
    val_layout = Layout(1) if val_layout is None else val_layout
    for lay, what in ((thr_layout, "thread"), (val_layout, "value")):
        if not isinstance(lay, Layout):
            raise TypeError(f"make_tiled_copy: the {what} layout must be a Layout, got {lay!r}")
    layout_mn = raked_product(thr_layout, val_layout)                  # (M,N) -> (thr, val)
    layout_tv = _with_shape(right_inverse(layout_mn), (size(thr_layout), size(val_layout)))
    return _make(atom, layout_tv, product_each(layout_mn.shape), "make_tiled_copy")


def _check_mma(mma, what):
    if not isinstance(mma, TiledMMA):
        raise TypeError(f"{what}: expected a TiledMMA (make_tiled_mma), got {mma!r}")


def make_tiled_copy_A(atom, mma):
    """The TiledCopy whose threads hold A's values exactly as the TiledMMA wants them (ldmatrix for A)."""
    _check_mma(mma, "make_tiled_copy_A")
    return _make(atom, mma.get_layoutA_TV(), (mma.tile_size_mnk(0), mma.tile_size_mnk(2)), "make_tiled_copy_A")


def make_tiled_copy_B(atom, mma):
    _check_mma(mma, "make_tiled_copy_B")
    return _make(atom, mma.get_layoutB_TV(), (mma.tile_size_mnk(1), mma.tile_size_mnk(2)), "make_tiled_copy_B")


def make_tiled_copy_C(atom, mma):
    _check_mma(mma, "make_tiled_copy_C")
    return _make(atom, mma.get_layoutC_TV(), (mma.tile_size_mnk(0), mma.tile_size_mnk(1)), "make_tiled_copy_C")


def _check_copy(tiled_copy, what):
    if not isinstance(tiled_copy, TiledCopy):
        raise TypeError(f"{what}: expected a TiledCopy (make_tiled_copy...), got {tiled_copy!r}")


def make_tiled_copy_S(atom, tiled_copy):
    """A TiledCopy for another atom with the same source (thread, value) layout as tiled_copy."""
    _check_copy(tiled_copy, "make_tiled_copy_S")
    return _make(atom, tiled_copy.get_layoutS_TV(), tiled_copy.tiler, "make_tiled_copy_S")


def make_tiled_copy_D(atom, tiled_copy):
    _check_copy(tiled_copy, "make_tiled_copy_D")
    return _make(atom, tiled_copy.get_layoutD_TV(), tiled_copy.tiler, "make_tiled_copy_D")


def make_tiled_copy_C_atom(atom, mma):
    """The smallest TiledCopy that covers what one copy atom per thread reaches of C's TV layout."""
    _check_mma(mma, "make_tiled_copy_C_atom")
    if not isinstance(atom, Copy_Atom):
        raise TypeError(f"make_tiled_copy_C_atom: atom must be a Copy_Atom, got {atom!r}")
    layout_c = mma.get_layoutC_TV()
    copy_v = atom.num_val_src
    if copy_v > size(layout_c, 1):
        raise ValueError(f"make_tiled_copy_C_atom: {atom!r} moves {copy_v} values, more than a thread's "
                         f"{size(layout_c, 1)} of C")
    layout_tv = composition(layout_c, make_layout((size(layout_c, 0), copy_v)))
    mma_tiler = (mma.tile_size_mnk(0), mma.tile_size_mnk(1))
    tiler = tuple(filter(composition(Layout(mma_tiler, (1, 0) if i == 0 else (0, 1)), layout_tv))
                  for i in range(2))
    tile2mma = composition(make_layout(mma_tiler), tiler)
    return _make(atom, composition(left_inverse(tile2mma), layout_tv), tiler, "make_tiled_copy_C_atom")

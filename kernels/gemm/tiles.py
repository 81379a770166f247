"""The layouts every tiled GEMM here is built from, as cutelite objects (compiled by kernels.layout_fn).

  * smem_tile(rows, cols, swizzle): a row-major (rows, cols) tile of shared memory, optionally swizzled.
    For tensor cores the swizzle is chapter 4's `swizzle_for(cols, 2)`: the 8 rows one ldmatrix reads (16
    bytes each) then fall into 8 different bank groups.
  * copy_tv(rows, cols, threads, vec): the thread-value layout of a copy of that tile in `vec`-element
    vectors: (thread, value) -> index r + rows * c of the tile's element (CuTe's column-major tile
    index), consecutive threads along a row (coalesced), then down the rows. A TiledCopy's TV layout.
  * mma C fragment: cutelite's MMA atom says which (m, n) of the 16x8 accumulator tile lane l's value v
    is: atom.LayoutC_TV(l, v) = m + 16 n.

A kernel evaluates these at run time only on its thread index: everything else is folded to constants.
"""

from cutelite import Layout, composition, make_mma_atom, swizzle_for

from ..layout_codegen import layout_fn


def smem_tile(rows, cols, swizzle=None):
    """Row-major (rows, cols) tile; composed with `swizzle` (a cutelite Swizzle) when one is given."""
    tile = Layout((rows, cols), (cols, 1))
    return tile if swizzle is None else composition(swizzle, tile)


def ldmatrix_tile(rows, cols):
    """A (rows, cols) tile of 16-bit elements read by ldmatrix: swizzled for conflict-free 16-byte rows."""
    return smem_tile(rows, cols, swizzle_for(cols, 2))


def copy_tv(rows, cols, threads, vec):
    """(thread, value) -> r + rows * c: `threads` threads copy the row-major (rows, cols) tile in vectors
    of `vec` elements. Thread t takes vector t % (cols / vec) of row t // (cols / vec); value v = j + vec * i
    is element j of its i-th vector, i rows of threads further down.

    Post: a bijection from (threads, rows * cols / threads) onto the tile's indices.
    """
    per_row = cols // vec                        # threads along one row
    row_step = threads // per_row                # rows covered by one pass of all threads
    if per_row * vec != cols or row_step * per_row != threads or rows % row_step:
        raise ValueError("copy_tv: %d threads cannot copy a (%d, %d) tile in vectors of %d"
                         % (threads, rows, cols, vec))
    return Layout(((per_row, row_step), (vec, rows // row_step)),
                  ((vec * rows, 1), (rows, row_step)))


def mma_c_fn(atom_name="SM80_16x8x16_F32F16F16F32_TN"):
    """The atom's C layout as a device function (lane, v) -> m + 16 n (m < 16, n < 8)."""
    atom = make_mma_atom(atom_name)
    return layout_fn(atom.LayoutC_TV, by_mode=True, name="c_of")


def raster(pid, num_m, num_n, group):
    """CTA `pid` -> (tile m, tile n), walking `group` tile rows at a time (column by column inside the
    group) so CTAs running together share A and B tiles in L2."""
    per_group = group * num_n
    first_m = (pid // per_group) * group
    rows = min(num_m - first_m, group)
    return first_m + (pid % per_group) % rows, (pid % per_group) // rows


def operand_tile(mn, bk, k_major):
    """The shared-memory (rows, cols) of one stage of an operand: (mn, bk) if K-major, else (bk, mn)."""
    return (mn, bk) if k_major else (bk, mn)


def fragment_loaders(sA_at, sB_at, a_kmajor, b_kmajor):
    """Device functions reading mma fragments with ldmatrix.x4 from shared tiles (sA_at, sB_at: their
    compiled layouts, by mode):
      a_frag(sA, base, m, k, lane): the 16x16 block of A at (m, k) -> (a0, a1, a2, a3) of m16n8k16
          (= the A registers of two m16n8k8 steps, k and k + 8: (a0, a1) then (a2, a3));
      b_frag(sB, base, n, k, lane): the 16x16 block of B at (k, n) -> (b0, b1) of n-tile n, then of n + 8.
    A K-major tile has rows along m (or n) and is read as is; an M/N-major one has rows along k and is
    read with .trans. Lanes 8j..8j+7 give the 8 row addresses of matrix j."""
    from numba import cuda
    from ..intrinsics import ldmatrix_x4, ldmatrix_x4_trans

    @cuda.jit(device=True, inline="always")
    def a_frag(sA, base, m, k, lane):
        if a_kmajor:   # matrix j = (m half j % 2, k half j // 2)
            return ldmatrix_x4(sA, base + sA_at(m + lane % 16, k + 8 * (lane // 16)))
        return ldmatrix_x4_trans(sA, base + sA_at(k + lane % 8 + 8 * (lane // 16), m + 8 * ((lane // 8) % 2)))

    @cuda.jit(device=True, inline="always")
    def b_frag(sB, base, n, k, lane):
        if b_kmajor:   # matrix j = (n half j // 2, k half j % 2)
            return ldmatrix_x4(sB, base + sB_at(n + lane % 8 + 8 * (lane // 16), k + 8 * ((lane // 8) % 2)))
        return ldmatrix_x4_trans(sB, base + sB_at(k + lane % 16, n + 8 * (lane // 16)))

    return a_frag, b_frag

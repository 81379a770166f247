"""The book's objects written in the CuTe DSL: one function per "In the CuTe DSL" box of chapters 1-6
(named chN_...) and per example of chapter 9 (ch9_...). Each builds the object its chapter builds with
cutelite and prints it; none needs a GPU. The DSL reads a function's source to trace it, which is why
they live in this file. Run one with kernels.dsl.run(fn, *args); kernels.dsl.box(name, *args) shows one
in a chapter. Kept narrow: a box is about 80 characters wide.
"""

import cutlass
import cutlass.cute as cute

# ---- chapter 1: layouts ------------------------------------------------------------------------------


@cute.jit
def ch1_layouts():
    L = cute.make_layout((4, 8), stride=(1, 4))     # the stride is a keyword
    print("L =", L, "   L(2, 3) =", L((2, 3)))
    print("LayoutLeft:", cute.make_layout((4, 8)))
    print("row-major: ", cute.make_ordered_layout((4, 8), order=(1, 0)))
    H = cute.make_layout((3, (2, 3)), stride=(3, (12, 1)))
    print("size", cute.size(H), " cosize", cute.cosize(H),
          " rank", cute.rank(H), " depth", cute.depth(H))
    print("get(H, mode=[1]):", cute.get(H, mode=[1]))
    print("H(16) =", H(16), "  H((1, (1, 2))) =", H((1, (1, 2))))


@cute.jit
def ch1_modes():
    a = cute.make_layout((2, 3, 5, 7))
    print("a                    =", a)
    print("select(a, [1, 3])    =", cute.select(a, mode=[1, 3]))
    print("group_modes(a, 0, 2) =", cute.group_modes(a, 0, 2))
    print("flatten(that)        =", cute.flatten(cute.group_modes(a, 0, 2)))
    r, s = cute.make_layout(3), cute.make_layout(4, stride=3)
    print("append(3:1, 4:3)     =", cute.append(r, s))


@cute.jit
def ch1_static_dynamic(m: cutlass.Int32):
    S = cute.make_layout((4, 8))
    D = cute.make_layout((m, 8))              # m is a run-time value
    print("traced:", S, "  ", D)              # what the DSL knows while tracing
    cute.printf("ran:    {}   {}", S, D)      # what the compiled code prints


# ---- chapter 2: the algebra --------------------------------------------------------------------------


@cute.jit
def ch2_algebra():
    A = cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))
    print("coalesce:", cute.coalesce(A))
    print("by mode: ", cute.coalesce(A, target_profile=(1, 1)))
    B = cute.make_layout((10, 2), stride=(16, 4))
    b = cute.make_layout((5, 4), stride=(1, 5))
    print("composition:", cute.composition(B, b))
    P = cute.make_layout((2, 2), stride=(1, 6))
    print("complement: ", cute.complement(P, 24))    # the cotarget is required
    R = cute.make_layout((4, 8), stride=(8, 1))
    print("right_inverse:", cute.right_inverse(R))


@cute.jit
def ch2_divide():
    A = cute.make_layout((9, (4, 8)), stride=(59, (13, 1)))
    T = (cute.make_layout(3, stride=3),
         cute.make_layout((2, 4), stride=(1, 8)))
    print("logical_divide:", cute.logical_divide(A, T))
    print("zipped_divide: ", cute.zipped_divide(A, T))
    print("tiled_divide:  ", cute.tiled_divide(A, T))
    print("flat_divide:   ", cute.flat_divide(A, T))


@cute.jit
def ch2_products():
    a = cute.make_layout((2, 2), stride=(4, 1))
    print("logical_product:", cute.logical_product(a, cute.make_layout(6)))
    blk = cute.make_layout((2, 5), stride=(5, 1))
    tiler = cute.make_layout((3, 4))
    print("blocked_product:", cute.blocked_product(blk, tiler))
    print("raked_product:  ", cute.raked_product(blk, tiler))
    print("tiled_product by a tuple of layouts (C++ takes it, the DSL refuses):")
    cute.tiled_product(blk, (cute.make_layout(3), cute.make_layout(4)))


@cute.jit
def ch2_runtime(n: cutlass.Int32):
    L = cute.make_layout((192, n), stride=(1, 192))   # n: a run-time extent
    print("coalesce:", cute.coalesce(L))               # stays two modes
    R = cute.make_layout((16, n), stride=(1, 16))
    try:
        print("right_inverse:", cute.right_inverse(R))
    except Exception as e:
        print("right_inverse refused:", str(e).splitlines()[-1])
    A = cute.make_layout((64, 64), stride=(1, 64))
    B = cute.make_layout((8, n), stride=(cute.E(0), cute.E(1)))
    try:
        print("composition:", cute.composition(A, B))
    except Exception as e:
        print("composition refused:", str(e).splitlines()[-1])


# ---- chapter 3: tensors ------------------------------------------------------------------------------


@cute.jit
def ch3_tensors():
    # a tensor is memory and a layout: here registers, on the host
    A = cute.make_rmem_tensor(cute.make_layout((8, 24)), cutlass.Float32)
    print("A:", A)
    print("row 1, A[1, None]:", A[1, None].layout)   # None is C++'s _
    print("zipped_divide(A, (4, 8)):", cute.zipped_divide(A, (4, 8)).layout)
    print("local_tile(A, (4, 8), (1, 2)):",
          cute.local_tile(A, (4, 8), (1, 2)).layout)
    thr = cute.make_layout((4, 8))                  # 4 x 8 threads
    p = cute.local_partition(A, thr, cutlass.Int32(13))
    print("local_partition(A, thr, 13):", p.layout)


@cute.jit
def ch3_identity():
    c = cute.make_identity_tensor((18, 29))         # coordinates, no memory
    print("identity tensor:", c)
    corner = cute.local_tile(c, (4, 8), (4, 3))     # the grid's corner tile
    print("corner tile:", corner)
    print("its column 4:", [corner[(m, 4)] for m in range(4)])
    # a predicate is a run-time value: printed by the compiled code
    inside = [cute.elem_less(corner[(m, 4)], (18, 29)) for m in range(4)]
    cute.printf("inside (18, 29): {} {} {} {}", *inside)


# ---- chapter 4: swizzles -----------------------------------------------------------------------------


@cute.jit
def ch4_swizzle():
    sw = cute.make_swizzle(3, 3, 3)
    rows = cute.make_layout((8, 64), stride=(64, 1))
    atom = cute.make_composed_layout(sw, 0, rows)
    print("atom:", atom)
    print("row 1, columns 0, 8, 16, ...:", [atom((1, c)) for c in range(0, 64, 8)])
    print("tile_to_shape(atom, (128, 64)):")
    print(" ", cute.tile_to_shape(atom, (128, 64), (0, 1)))


@cute.jit
def ch4_recast():
    rows = cute.make_layout((8, 64), stride=(64, 1))
    half = cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0, rows)
    print("on halves:       ", half)
    print("on bytes:        ", cute.recast_layout(8, 16, half))
    print("on 128-bit words:", cute.recast_layout(128, 16, half))


# ---- chapter 5: MMA atoms -------------------------------------------------------------------------------


@cute.jit
def ch5_mma_atom():
    # SM80_16x8x16_F16F16F16F16_TN
    op16 = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float16, (16, 8, 16))
    print(op16)
    print(cute.make_mma_atom(op16))
    # mma.m16n8k8 with f32 accumulators (the T4's SM75_16x8x8_F32F16F16F32_TN)
    op8 = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 8))
    print("m16n8k8, TV layout A:", cute.make_mma_atom(op8).tv_layout_A)


@cute.jit
def ch5_ldmatrix():
    # the chapter's ldmatrix.x2 and ldmatrix.x1.trans
    for transpose, matrices in ((False, 2), (True, 1)):
        op = cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, matrices)
        print(cute.make_copy_atom(op, cutlass.Float16))


# ---- chapter 6: TiledMMA and TiledCopy -------------------------------------------------------------


@cute.jit
def ch6_tiled_mma():
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float16, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))
    print(mma)
    print("size", mma.size, "  tile", [mma.get_tile_size(i) for i in range(3)])


@cute.jit
def ch6_partition():
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float16, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))
    sA = cute.make_rmem_tensor(cute.make_layout((128, 32), stride=(1, 128)),
                               cutlass.Float16)
    thr_mma = mma.get_slice(0)
    tCsA = thr_mma.partition_A(sA)
    tCrA = mma.make_fragment_A(tCsA)     # C++: thr_mma.partition_fragment_A(sA)
    print("tCsA:", tCsA.layout)
    print("tCrA:", tCrA.layout)
    ldsm_t = cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 4)
    copy_A = cute.make_tiled_copy_A(cute.make_copy_atom(ldsm_t, cutlass.Float16), mma)
    print(copy_A)
    thr_copy = copy_A.get_slice(0)
    print("partition_S:", thr_copy.partition_S(sA).layout)
    print("retile:     ", thr_copy.retile(tCrA).layout)    # C++: retile_D


@cute.jit
def ch6_tiled_copy():
    for bits, vals in ((128, 4), (32, 1)):
        op = cute.nvgpu.CopyUniversalOp()
        atom = cute.make_copy_atom(op, cutlass.Float32, num_bits_per_copy=bits)
        across = 64 // vals                     # threads along a row of 64 floats
        thr = cute.make_layout((128 // across, across), stride=(across, 1))
        # C++'s make_tiled_copy(atom, thr, val)
        tc = cute.make_tiled_copy_tv(atom, thr, cute.make_layout((1, vals)))
        print(f"{bits}-bit: TV layout {tc.layout_tv_tiled}, tile {tc.tiler_mn}")


# ---- chapter 9: the differences, one example each ------------------------------------------------------


@cute.jit
def ch9_signatures():
    L = cute.make_layout((4, 8), stride=(8, 1))
    print("make_layout((4, 8), stride=(8, 1)) =", L)
    X = cute.make_layout((2, (3, 4)))
    print("size(X, mode=[1])    =", cute.size(X, mode=[1]))
    print("size(X, mode=[1, 0]) =", cute.size(X, mode=[1, 0]))
    A = cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))
    print("coalesce(A, target_profile=(1, 1)) =",
          cute.coalesce(A, target_profile=(1, 1)))
    one = cute.make_layout(1, stride=0)
    print("append(L, 1:0, up_to_rank=4) =", cute.append(L, one, up_to_rank=4))
    a = cute.make_layout((2, 3, 5, 7))
    print("group_modes(a, 1, 3) =", cute.group_modes(a, 1, 3))
    print("slice_(L, (None, 3)) =", cute.slice_(L, (None, 3)))
    print("make_layout((4, 8), (8, 1)):")
    cute.make_layout((4, 8), (8, 1))


@cute.jit
def ch9_swizzle():
    sw = cute.make_swizzle(2, 3, 3)
    rows = cute.make_layout((8, 32), stride=(32, 1))
    C = cute.make_composed_layout(sw, 0, rows)
    print("make_swizzle(2, 3, 3) =", sw)
    print("make_composed_layout(sw, 0, rows) =", C)
    print("C.inner =", C.inner, "  C.outer =", C.outer)
    print("recast_layout(8, 16, C) =", cute.recast_layout(8, 16, C))
    print("composition(sw, rows):")
    cute.composition(sw, rows)


@cute.jit
def ch9_tensor():
    t = cute.make_rmem_tensor(cute.make_layout((2, 3), stride=(3, 1)),
                              cutlass.Float32)
    for i in range(6):
        t[i] = cutlass.Float32(i)
    print("traced:", t)
    cute.print_tensor(t)                  # runs in the compiled code


@cute.jit
def ch9_ops():
    mma_op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    print(mma_op)
    g2s = cute.nvgpu.cpasync.CopyG2SOp(cute.nvgpu.LoadCacheMode.GLOBAL)
    print(g2s)
    print(cute.make_copy_atom(g2s, cutlass.Float16, num_bits_per_copy=128))


@cute.jit
def ch9_tiled_copy_trap():
    op = cute.nvgpu.CopyUniversalOp()
    atom = cute.make_copy_atom(op, cutlass.Float32, num_bits_per_copy=128)
    thr = cute.make_layout((8, 16), stride=(16, 1))
    val = cute.make_layout((1, 4))
    tc = cute.make_tiled_copy_tv(atom, thr, val)
    print("make_tiled_copy_tv:", tc.layout_tv_tiled, "tile", tc.tiler_mn)
    again = cute.make_tiled_copy(atom, tc.layout_tv_tiled, tc.tiler_mn)
    print("make_tiled_copy(atom, layout_tv, tiler):", again.layout_tv_tiled)
    print("make_tiled_copy(atom, thr, val):")
    cute.make_tiled_copy(atom, thr, val)


@cute.jit
def ch9_partition_names():
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))
    print("tv_layout_A (the atom's):      ", mma.tv_layout_A)
    print("tv_layout_A_tiled (the tile's):", mma.tv_layout_A_tiled)
    thr = mma.get_slice(0)
    sA = cute.make_rmem_tensor(cute.make_layout((64, 32), stride=(32, 1)),
                               cutlass.Float16)
    tCrA = mma.make_fragment_A(thr.partition_A(sA))
    ldsm = cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4)
    copy_A = cute.make_tiled_copy_A(cute.make_copy_atom(ldsm, cutlass.Float16), mma)
    print("make_fragment_A:", tCrA.layout)
    print("retile:         ", copy_A.get_slice(0).retile(tCrA).layout)
    print("C++'s names:")
    thr.partition_fragment_A(sA)


@cute.jit
def ch9_static_dynamic(n: cutlass.Int32, k: cutlass.Constexpr):
    L = cute.make_layout((n, k))
    print("traced: L =", L, "  size =", cute.size(L), "  k =", k)
    cute.printf("ran:    L = {}  size = {}", L, cute.size(L))


@cute.jit
def ch9_regrouped():
    a = cute.make_layout((2, 1), stride=(1, 0))
    print("raked_product((2,1):(1,0), (3,4)):",
          cute.raked_product(a, cute.make_layout((3, 4))))
    print("complement(4:2):")
    cute.complement(cute.make_layout(4, stride=2))


def ch9_compile(name):
    from kernels.dsl import build, gemm_tile, tc_sm80
    module = {"gemm_tile": gemm_tile, "tc_sm80": tc_sm80}[name]
    # module.host for run-time sizes, compiled for sm_80: no GPU needed
    compiled = build.compile_gemm(module, arch="sm_80", keep_ptx=True)
    ptx = compiled.__ptx__
    target = next(line for line in ptx.splitlines() if line.startswith(".target"))
    print(target, f"  {len(ptx.splitlines())} lines of PTX")
    for instruction, n in sorted(build.instruction_mix(ptx).items()):
        print(f"{n:4d}  {instruction}")

"""The instructions every kernel calls, from sm_70 to sm_90a, as one pattern: real inline PTX on a GPU
(ptx.py, hopper_ptx.py), pure-Python twins with the same names and behaviour in Numba's simulator (sim.py,
hopper_sim.py). Which one is decided once, here, at import, so a kernel's source runs unchanged in both.

    from kernels.instructions import mma_for, ldmatrix_for, cp_async_cg_16, SMEM_ALIGN
    mma = mma_for(make_mma_atom("SM80_16x8x16_F32F16F16F32_TN"))   # d = mma(a, b, c), tuples of registers

An MMA atom's intrinsic and twin are built from the atom itself (atoms.py: its PTX, its registers from its
TV layouts and types); so is an ldmatrix copy atom's. Each intrinsic is named after its PTX
(mma_m16n8k16_f32_f16, ldmatrix_x4_trans, ...), and is reachable under that name here too.
`python -m kernels.gpu_check` runs selftest.py's test of every one. Import after kernels.setup().
"""

from cutelite import MMA_ATOMS, make_copy_atom

from ..runtime import in_simulator
from .atoms import LDSM_PTX, ldmatrix_name, mma_name, supported

if in_simulator():
    from . import hopper_sim as _hopper
    from . import sim as _warp
else:
    from . import hopper_ptx as _hopper
    from . import ptx as _warp

_BUILT = {}


def mma_for(atom):
    """The intrinsic d = mma(a, b, c) of an MMA atom's instruction (built once per atom)."""
    key = ("mma", atom.name)
    if key not in _BUILT:
        _BUILT[key] = _warp.make_mma(atom)
    return _BUILT[key]


def ldmatrix_for(copy_atom):
    """The intrinsic regs = ldmatrix(array, element offset of this lane's row) of an ldmatrix copy atom."""
    key = ("ldmatrix", copy_atom.op)
    if key not in _BUILT:
        _BUILT[key] = _warp.make_ldmatrix(copy_atom)
    return _BUILT[key]


_PLAIN = ["SIMULATOR", "SMEM_ALIGN", "cp_async_ca_4", "cp_async_ca_8", "cp_async_ca_16", "cp_async_cg_16",
          "cp_async_cg_16_zfill", "cp_async_commit", "cp_async_wait", "pack_half2", "unpack_half2", "pack_bf16x2",
          "unpack_bf16x2", "exp2_approx", "tanh_approx", "globaltimer", "shfl_sync", "shfl_xor_sync", "shfl_down_sync",
          "shfl_up_sync", "syncwarp"]
_PLAIN += ["%s_%s_v%d_%s" % (op, space, n, kind) for op in ("ld", "st") for space in ("global", "shared")
           for n in (1, 2, 4) for kind in ("f32", "b32")]
_HOPPER = ["wgmma_fence", "wgmma_commit", "wgmma_wait", "wgmma_zero", "wgmma_uninit", "wgmma",
           "mbarrier_init", "mbarrier_arrive", "mbarrier_arrive_expect_tx", "mbarrier_try_wait", "fence_proxy_async",
           "fence_mbarrier_init", "tma_load_2d", "tma_prefetch_desc", "setmaxnreg_inc", "setmaxnreg_dec",
           "named_barrier_sync", "named_barrier_arrive", "shared_address",
           "tma_store_2d", "tma_store_commit", "tma_store_wait_read", "tma_store_wait",
           "wgmma_rs", "tma_load_4d", "tma_store_4d", "tma_reduce_add_2d",
           "tma_load_2d_multicast", "mbarrier_arrive_cluster", "cluster_arrive", "cluster_wait"]
globals().update({name: getattr(_warp, name) for name in _PLAIN})
globals().update({name: getattr(_hopper, name) for name in _HOPPER})
_SHORT = {}
for _atom in MMA_ATOMS.values():          # atoms with the same PTX (SM75_ and SM80_16x8x8...) share one
    if supported(_atom) and mma_name(_atom) not in _SHORT:
        _SHORT[mma_name(_atom)] = mma_for(_atom)
for _op in LDSM_PTX:
    _SHORT[ldmatrix_name(_op)] = ldmatrix_for(make_copy_atom(_op, "half_t"))
globals().update(_SHORT)

__all__ = ["mma_for", "ldmatrix_for"] + _PLAIN + _HOPPER + sorted(_SHORT)

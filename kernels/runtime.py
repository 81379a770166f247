"""Where kernels run: a real CUDA GPU, or Numba's CUDA simulator on a machine without one.

Every chapter's first cell is

    import kernels
    info = kernels.setup()

`setup` must run before anything imports numba: Numba reads NUMBA_ENABLE_CUDASIM once, when it is first
imported. So this module looks for a GPU through the driver library itself (ctypes, libcuda), never
through numba, sets the variable when there is none, and only then imports numba.

A profile makes every capability decision as on another GPU: `setup(profile="sm_75")`, or the environment
variable CUTE_PROFILE=sm_75, runs the book as on a T4. `current_cc()` is the one answer to "what compute
capability do we decide for": `supports`, `require`, the intrinsics (`check_target`) and the chapters'
`info.cc` all ask it. In the simulator the twins then refuse what that GPU lacks; on a GPU a profile can only
lower the capability, and Numba compiles for the profile's target (NUMBA_FORCE_CUDA_CC).
"""

import ctypes
import os
import sys
from dataclasses import dataclass

from . import capability

PROFILE_ENV = "CUTE_PROFILE"


@dataclass(frozen=True)
class DeviceInfo:
    """What `setup()` found. `cc` is (major, minor), e.g. (7, 5) for a T4: the compute capability every
    capability decision uses (a profile's if one is set); None in the simulator without a profile, where
    every instruction has a twin. `gpu_cc` is the GPU's own (None without a GPU)."""
    simulator: bool
    name: str
    cc: tuple = None
    profile: str = None
    gpu_cc: tuple = None

    @property
    def sm(self):
        return "sm_%d%d" % self.cc if self.cc else "simulator"

    @property
    def label(self):
        """The device as messages and tables name it: 'Tesla T4', 'NVIDIA H100 80GB HBM3 run as a T4'."""
        return self.name + (" run as %s" % capability.PROFILES[self.profile] if self.profile else "")


_INFO = None  # the DeviceInfo of the last setup(), for messages; setup() is the only writer


def count_gpus():
    """Number of CUDA devices the driver reports, asked through libcuda directly (0 if there is no driver)."""
    names = {"win32": ["nvcuda.dll"], "darwin": []}.get(sys.platform, ["libcuda.so.1", "libcuda.so"])
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    return 0


def _env_wants_simulator():
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def in_simulator():
    """True when Numba's CUDA simulator runs the kernels (decided when numba was first imported)."""
    if "numba.cuda" in sys.modules:
        try:
            from numba.cuda.core import config
        except ImportError:  # older numba-cuda keeps the flag in numba's own config
            from numba.core import config
        return bool(config.ENABLE_CUDASIM)
    return _env_wants_simulator()


def pick_size(gpu, sim):
    """`gpu` on a real GPU, `sim` in the simulator (one OS thread per CUDA thread: keep it small)."""
    return sim if in_simulator() else gpu


def setup(verbose=True, simulator=None, profile=None):
    """Choose GPU or simulator, import numba, print a one-line banner and return a DeviceInfo.

    simulator=None decides by itself: the simulator when NUMBA_ENABLE_CUDASIM is already set or no CUDA
    GPU is found. simulator=True / False forces the choice (only before numba is first imported; False
    without a GPU still allows cuda.compile_ptx).
    profile (default: the CUTE_PROFILE environment variable; one of capability.PROFILES, e.g. "sm_75")
    makes every capability decision as on that GPU. On a GPU it must not be above the GPU's own capability,
    and Numba compiles for it; choose it before the first kernel is compiled (Numba keeps what it compiled).
    Post: in_simulator() == result.simulator; numba.cuda is imported.
    """
    global _INFO
    source = "setup(profile=%r)" % profile if profile else "%s=%s" % (PROFILE_ENV, os.environ.get(PROFILE_ENV))
    profile = profile or os.environ.get(PROFILE_ENV) or None
    pcc = capability.profile_cc(profile) if profile else None
    numba_loaded = "numba" in sys.modules
    want_sim = simulator if simulator is not None else (_env_wants_simulator() or count_gpus() == 0)
    if not numba_loaded:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1" if want_sim else "0"
    from numba import cuda  # noqa: E402  (the point of this function: import numba only now)
    _numpy_compat()

    sim = in_simulator()
    note = ""
    if numba_loaded and sim != want_sim:
        note = (" (numba was imported before kernels.setup(), so this could not be changed: "
                "restart the kernel and call kernels.setup() first)")
    as_profile = "; profile %s (%s): every capability decision as on %s" % (
        profile, source, capability.PROFILES[profile]) if profile else ""
    if sim:
        info = DeviceInfo(simulator=True, name="CUDA simulator", cc=pcc, profile=profile)
        why = "NUMBA_ENABLE_CUDASIM=1" if count_gpus() else "no GPU"
        banner = "%s: kernels run in the CUDA simulator, sizes reduced%s%s" % (why, as_profile, note)
    elif not cuda.is_available():
        info = DeviceInfo(simulator=False, name="no GPU", cc=pcc, profile=profile)
        _force_numba_cc(pcc if pcc != (9, 0) else None)   # sm_90a is named by the caller (compile_ptx(cc=(9, 0, "a")))
        banner = ("no GPU, and numba runs without the simulator: kernels can be compiled "
                  "(cuda.compile_ptx) but not launched%s%s" % (as_profile, note))
    else:
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        gpu_cc = tuple(dev.compute_capability)
        if pcc and pcc > gpu_cc:
            raise ValueError("setup: profile %s is above this GPU's sm_%d%d (%s): a profile can only lower the "
                             "capability" % (profile, gpu_cc[0], gpu_cc[1], name))
        info = DeviceInfo(simulator=False, name=name, cc=pcc or gpu_cc, profile=profile, gpu_cc=gpu_cc)
        _force_numba_cc(pcc if pcc != gpu_cc else None)   # the GPU's own: Numba's choice (sm_90a on an H100)
        _hopper_target(info.cc)
        try:
            mma = capability.best_mma_for(info.cc)
        except capability.CapabilityError:
            mma = "none (needs sm_70+)"
        banner = "GPU: %s, compute capability %d.%d (%s); tensor-core mma: %s%s%s" % (
            name, gpu_cc[0], gpu_cc[1], "sm_%d%d" % gpu_cc, mma,
            as_profile + (", Numba compiles for %s" % info.sm if pcc and pcc != gpu_cc else ""), note)
    _INFO = info
    if verbose:
        print(banner)
    return info


def _numba_configs():
    """Numba's config modules that hold FORCE_CUDA_CC (numba-cuda's own, and numba's for older numba-cuda)."""
    mods = []
    for name in ("numba.cuda.core.config", "numba.core.config"):
        try:
            mods.append(__import__(name, fromlist=["FORCE_CUDA_CC"]))
        except ImportError:
            pass
    return [m for m in mods if hasattr(m, "FORCE_CUDA_CC")]


def _force_numba_cc(cc):
    """Make Numba compile for `cc` (None: for the device again): NUMBA_FORCE_CUDA_CC, which its NVVM arch
    choice reads, in the environment (for a config reload) and in the loaded config."""
    if cc:
        os.environ["NUMBA_FORCE_CUDA_CC"] = "%d.%d" % cc
    elif os.environ.get("NUMBA_FORCE_CUDA_CC") and _INFO is not None and _INFO.profile:
        del os.environ["NUMBA_FORCE_CUDA_CC"]         # set by an earlier setup's profile, not by the user
    else:
        return
    for config in _numba_configs():
        config.FORCE_CUDA_CC = cc


def _numpy_compat():
    """numba-cuda 0.30 launches kernels through np.row_stack, which NumPy 2.5 removed; it was always
    another name for np.vstack, so give it back rather than fail every launch."""
    import numpy as np
    if not hasattr(np, "row_stack"):
        def row_stack(tup, **kwargs):
            return np.vstack(tup, **kwargs)
        np.row_stack = row_stack


def _hopper_target(cc):
    """Compile for sm_90a on a compute capability 9.0 GPU, whatever the numba-cuda.

    wgmma and setmaxnreg exist only on the arch-specific target sm_90a. numba-cuda >= 0.30 picks it by
    itself; 0.22 (Colab's) compiles for sm_90, and ptxas then refuses those instructions. For 0.22 the NVVM
    arch option and the linker's arch get the "a" here (its `nvrtc.get_arch_option` and `_Linker`), once.
    """
    if tuple(cc) != (9, 0):
        return
    import dataclasses
    from numba.cuda.cudadrv import driver, nvrtc
    import inspect
    get_arch = getattr(nvrtc, "get_arch_option", None)
    if get_arch is None or len(inspect.signature(get_arch).parameters) != 2 or get_arch(9, 0) != "compute_90":
        return      # a numba-cuda that names arch-specific targets itself (0.30: get_arch_option(9, 0, "a"))

    def get_arch_option(major, minor):
        arch = get_arch(major, minor)
        return arch + "a" if arch == "compute_90" else arch

    linker_init = driver._Linker.__init__

    def init(self, *args, **kwargs):
        linker_init(self, *args, **kwargs)
        if self.arch == "sm_90":
            self.arch = "sm_90a"
            if dataclasses.is_dataclass(self.options):
                self.options = dataclasses.replace(self.options, arch="sm_90a")
            else:
                self.options.arch = "sm_90a"

    nvrtc.get_arch_option = get_arch_option
    driver._Linker.__init__ = init


def device_info():
    """The DeviceInfo of the last setup(), running a quiet setup() first if there was none."""
    return _INFO if _INFO is not None else setup(verbose=False)


def current_cc():
    """The compute capability every capability decision uses: the GPU's, or the profile's (setup(profile=...),
    CUTE_PROFILE); None in the simulator without a profile, where every instruction has a twin."""
    return device_info().cc


def supports(name, cc=None):
    """capability.supports on `cc`, by default current_cc(); True where that is None (the simulator)."""
    cc = cc or current_cc()
    return cc is None or capability.supports(name, cc)


def why_not(*names):
    """None when the current GPU (or profile) has every instruction of `names`, else a sentence saying what
    it lacks, for a chapter to print instead of running a kernel: capability.why_not on current_cc()."""
    info = device_info()
    return capability.why_not(names, info.cc, info.label)


def require(name, cc=None, device_name=None):
    """capability.require on `cc`, by default current_cc() (naming the GPU or the profile). Nothing is raised
    in the simulator without a profile: every instruction has a Python twin there."""
    if cc is None:
        info = device_info()
        if info.cc is None:
            return
        cc, device_name = info.cc, device_name or info.label
    capability.require(name, cc, device_name)


def target_cc():
    """The compute capability the code being built is for, or None (no limit).

    In the simulator: current_cc() (the profile's). On a GPU or offline: NUMBA_FORCE_CUDA_CC when it is set
    (a profile sets it; Numba's NVVM then compiles for it whatever it was asked), else what Numba is
    compiling for right now, inside an intrinsic's codegen: numba-cuda keeps it on the target-config stack
    (`flags.compute_capability`); `cuda.compile_ptx(cc=...)` and a launch on a device both set it.
    """
    if in_simulator():
        return _INFO.cc if _INFO is not None else None
    forced = next((c.FORCE_CUDA_CC for c in _numba_configs() if c.FORCE_CUDA_CC), None)
    if forced:
        return tuple(forced)
    try:
        try:
            from numba.cuda.core import targetconfig
        except ImportError:  # older numba-cuda
            from numba.core import targetconfig
        cc = getattr(targetconfig.ConfigStack().top(), "compute_capability", None)
    except Exception:
        return None
    return tuple(cc) if cc else None


def check_target(name):
    """Called by every intrinsic while it is compiled, and by every simulator twin when it runs: fail with a
    clear message on a too-old target (naming the GPU, or the profile, when the target is setup()'s)."""
    cc = target_cc()
    if cc is not None and not capability.supports(name, cc):
        info = _INFO
        ours = info is not None and (info.simulator or info.gpu_cc) and tuple(info.cc or ()) == tuple(cc[:2])
        capability.require(name, cc, info.label if ours else None)


def shared_limit():
    """The bytes of dynamic shared memory a block may opt in to here: the GPU's own attribute
    (MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), or in the simulator the target's (capability.max_shared_per_block of
    current_cc(): 232,448 for sm_90), so a kernel too large for its GPU is refused in CI as on the GPU."""
    if in_simulator():
        return capability.max_shared_per_block(current_cc())
    from numba import cuda
    return cuda.get_current_device().MAX_SHARED_MEMORY_PER_BLOCK_OPTIN


def require_shared(nbytes, what):
    """A ValueError naming `what` (the kernel and its configuration), the bytes and the limit unless a block may
    have `nbytes` of dynamic shared memory here (shared_limit): before the driver is asked, which answers
    only CUDA_ERROR_INVALID_VALUE."""
    limit = shared_limit()
    if nbytes > limit:
        raise ValueError("%s asks for %s bytes of shared memory a block; %s allows at most %s"
                         % (what, format(nbytes, ","), device_info().label if not in_simulator() or current_cc()
                            else "no GPU", format(limit, ",")))


def allow_dynamic_shared(kernel, args, nbytes):
    """Compile `kernel` (a cuda.jit dispatcher) for `args` and let it take `nbytes` of dynamic shared memory:
    above 48 KB a kernel must ask for it (the function attribute MAX_DYNAMIC_SHARED_SIZE_BYTES), and
    numba-cuda does not. Returns the compiled kernel; does nothing in the simulator.

    numba-cuda 0.22 (Colab's) hands out a CUfunction, which cuFuncSetAttribute takes; numba-cuda 0.30 a
    library kernel (CUkernel), which needs cuKernelSetAttribute: the first that accepts the handle is used.
    """
    if in_simulator() or nbytes <= 48 * 1024:
        return None
    from numba import typeof
    from numba.cuda.cudadrv.driver import CudaAPIError, binding, driver
    compiled = kernel.compile(tuple(typeof(a) for a in args))
    cufunc = compiled._codelibrary.get_cufunc()
    attr = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    try:
        driver.cuFuncSetAttribute(cufunc.handle, attr, nbytes)
    except (CudaAPIError, TypeError, AttributeError):
        driver.cuKernelSetAttribute(attr, nbytes, cufunc.handle, cufunc.device.id)
    return compiled


def prepared_launch(kernel, args, grid, block, nbytes, stream=0, cluster=None):
    """A callable that launches `kernel` (a cuda.jit dispatcher) on these very arguments, grid, block, dynamic
    shared memory and stream, with one driver call (cuLaunchKernel) and nothing else: the arguments are
    converted once, here. Numba's own launch types and converts every argument on every call (tens of
    microseconds, more than a 2048^3 GEMM takes on an H100). Valid while the arrays live at the same
    addresses with the same shapes: the caller keys its cache on those. None in the simulator, or where the
    driver handle cannot be had (the caller then launches through Numba). `cluster`: the blocks of a cluster
    along x, y, z, launched together (cuLaunchKernelEx with the cluster-dimension attribute)."""
    if in_simulator():
        return None
    from numba import typeof
    compiled = allow_dynamic_shared(kernel, args, nbytes) or kernel.compile(tuple(typeof(a) for a in args))
    try:
        handle = int(compiled._codelibrary.get_cufunc().handle)
        stream_handle = int(stream.handle) if stream else 0
        values, keep = [], []
        for t, v in zip(compiled.argument_types, args):
            compiled._prepare_args(t, v, stream, keep, values)
    except (AttributeError, TypeError, ValueError):
        return None
    # numba-cuda 0.22 gives ctypes values; 0.30 gives an array's fields (sizes, address, shape, strides) as
    # plain ints, which its launcher passes as pointer-sized integers: so do we
    values = [v if isinstance(v, ctypes._SimpleCData) else ctypes.c_ssize_t(int(v)) for v in values]
    params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    lib = ctypes.CDLL("libcuda.so.1")
    gx, gy, gz = tuple(grid) + (1,) * (3 - len(grid)) if isinstance(grid, tuple) else (grid, 1, 1)
    bx, by, bz = tuple(block) + (1,) * (3 - len(block)) if isinstance(block, tuple) else (block, 1, 1)
    if cluster:
        launch = _cluster_launch(lib, handle, (gx, gy, gz), (bx, by, bz), nbytes, stream_handle, params, cluster,
                                 kernel.py_func.__name__)
        launch.arguments = (values, keep, params)
        return launch
    call = lib.cuLaunchKernel
    call.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

    def launch():
        rc = call(handle, gx, gy, gz, bx, by, bz, nbytes, stream_handle, params, None)
        if rc:
            raise RuntimeError("cuLaunchKernel failed with CUresult %d (%s, grid %s, block %s, %d bytes of shared "
                               "memory)" % (rc, kernel.py_func.__name__, grid, block, nbytes))
    launch.arguments = (values, keep, params)     # alive as long as the launcher
    return launch


def prepared_zero(array, stream=0):
    """A callable that sets the 2-D float32 device array `array` (rows of unit stride, any pitch) to zeros on
    `stream` with one driver call (cuMemsetD2D32Async: only its elements, not the bytes between its rows),
    queued in order with the stream's kernels. In the simulator: NumPy's fill."""
    if in_simulator():
        def fill():
            array[...] = 0
        return fill
    rows, cols = array.shape
    pitch, unit = array.strides
    if unit != 4 or array.dtype.itemsize != 4 or pitch % 4:
        raise ValueError("prepared_zero: a 2-D array of 4-byte elements with rows of unit stride, got strides %s, "
                         "dtype %s" % (array.strides, array.dtype))
    address = array.__cuda_array_interface__["data"][0]
    stream_handle = int(stream.handle) if stream else 0
    call = ctypes.CDLL("libcuda.so.1").cuMemsetD2D32Async
    call.argtypes = [ctypes.c_uint64, ctypes.c_size_t, ctypes.c_uint, ctypes.c_size_t, ctypes.c_size_t,
                     ctypes.c_void_p]

    def zero():
        rc = call(address, max(pitch, 4 * cols), 0, cols, rows, stream_handle)
        if rc:
            raise RuntimeError("cuMemsetD2D32Async failed with CUresult %d (%d x %d floats, pitch %d bytes)"
                               % (rc, rows, cols, pitch))
    return zero


CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4      # cuda.h, CUlaunchAttributeID


class CUlaunchAttribute(ctypes.Structure):
    """cuda.h's CUlaunchAttribute: an id, padding to 8 bytes, a 64-byte value (here the cluster's x, y, z)."""
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("x", ctypes.c_uint), ("y", ctypes.c_uint),
                ("z", ctypes.c_uint), ("rest", ctypes.c_char * 52)]


class CUlaunchConfig(ctypes.Structure):
    """cuda.h's CUlaunchConfig: grid, block, dynamic shared memory, stream, the attributes."""
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(CUlaunchAttribute)), ("numAttrs", ctypes.c_uint)]


def cluster_config(grid, block, nbytes, stream_handle, cluster):
    """The CUlaunchConfig of a launch in clusters of `cluster` = (x, y, z) blocks, and its attribute (kept alive
    with it). A grid that is not whole clusters is refused, as the driver would (CUDA_ERROR_INVALID_CLUSTER_SIZE)."""
    cluster = tuple(cluster) + (1,) * (3 - len(cluster))
    if any(g % c for g, c in zip(grid, cluster)):
        raise ValueError("cluster_config: grid %s is not whole clusters of %s blocks" % (grid, cluster))
    attr = CUlaunchAttribute(id=CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, x=cluster[0], y=cluster[1], z=cluster[2])
    config = CUlaunchConfig(*grid, *block, nbytes, ctypes.c_void_p(stream_handle or None), ctypes.pointer(attr), 1)
    return config, attr


def max_active_clusters(kernel, args, block, nbytes, cluster):
    """How many clusters of `cluster` = (x, y, z) blocks of `kernel` (a cuda.jit dispatcher, compiled for
    `args`) with `block` threads and `nbytes` of dynamic shared memory the GPU runs at once
    (cuOccupancyMaxActiveClusters): fewer than its SMs divided by the cluster's size where its GPCs' SM counts
    are not multiples of it. A persistent grid of more clusters than this runs the rest in a second wave. None
    in the simulator or where the driver cannot be asked."""
    if in_simulator():
        return None
    from numba import typeof
    compiled = allow_dynamic_shared(kernel, args, nbytes) or kernel.compile(tuple(typeof(a) for a in args))
    lib = ctypes.CDLL("libcuda.so.1")
    try:
        handle = int(compiled._codelibrary.get_cufunc().handle)
        query = lib.cuOccupancyMaxActiveClusters
    except AttributeError:
        return None
    query.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_void_p, ctypes.POINTER(CUlaunchConfig)]
    cluster = tuple(cluster) + (1,) * (3 - len(cluster))
    block = tuple(block) + (1,) * (3 - len(block)) if isinstance(block, tuple) else (block, 1, 1)
    config, attr = cluster_config(cluster, block, nbytes, 0, cluster)
    n = ctypes.c_int(0)
    if query(ctypes.byref(n), handle, ctypes.byref(config)):
        function = ctypes.c_void_p()              # numba-cuda 0.30 hands out a library kernel: its function here
        get = getattr(lib, "cuKernelGetFunction", None)
        if get is None or get(ctypes.byref(function), ctypes.c_void_p(handle)):
            return None
        if query(ctypes.byref(n), function, ctypes.byref(config)):
            return None
    return n.value or None


def _cluster_launch(lib, handle, grid, block, nbytes, stream_handle, params, cluster, name):
    try:
        call = lib.cuLaunchKernelEx
    except AttributeError:
        raise RuntimeError("prepared_launch: this CUDA driver has no cuLaunchKernelEx (CUDA 12.0 or newer), which "
                           "a launch in clusters of %s blocks needs" % (cluster,)) from None
    call.argtypes = [ctypes.POINTER(CUlaunchConfig), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    config, attr = cluster_config(grid, block, nbytes, stream_handle, cluster)

    def launch():
        rc = call(ctypes.byref(config), handle, params, None)
        if rc:
            raise RuntimeError("cuLaunchKernelEx failed with CUresult %d (%s, grid %s, block %s, cluster %s, %d bytes "
                               "of shared memory)" % (rc, name, grid, block, cluster, nbytes))
    launch.config = (config, attr)
    return launch

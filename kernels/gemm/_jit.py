"""cuda.jit with the options the simulator does not take (launch_bounds) dropped there."""

from numba import cuda

from ..runtime import in_simulator


def jit(launch_bounds=None, **options):
    if in_simulator() or launch_bounds is None:
        return cuda.jit(**options)
    return cuda.jit(launch_bounds=launch_bounds, **options)


device = cuda.jit(device=True, inline="always")


def allow_dynamic_shared(kernel, args, nbytes):
    """Compile `kernel` for `args` and let it take `nbytes` of dynamic shared memory: above 48 KB a
    kernel must ask (cuFuncSetAttribute); numba-cuda does not. No-op in the simulator."""
    if in_simulator() or nbytes <= 48 * 1024:
        return
    from numba import typeof
    from numba.cuda.cudadrv.driver import binding, driver
    compiled = kernel.compile(tuple(typeof(a) for a in args))
    cufunc = compiled._codelibrary.get_cufunc()
    attr = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    driver.cuKernelSetAttribute(attr, nbytes, cufunc.handle, cufunc.device.id)

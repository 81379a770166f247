"""Which GPU can run which instruction: the minimum compute capability of every instruction `kernels` emits.

A T4 (Colab's free GPU) is sm_75: it has the Turing tensor-core shapes (m8n8k4, m16n8k8 with f16) and
`ldmatrix`, but not the Ampere additions (m16n8k16, bf16 inputs, `cp.async`). Chapters ask
`best_mma_for(cc)` which shape to build on, and `require(name, cc)` fails early with a message that names the
instruction and the device instead of a PTX assembler error.

This module imports neither numba nor the rest of `kernels` (only cutelite, whose atoms name their
instructions): it is pure rules, usable before `kernels.setup()`. What the *current* GPU or compile target is
lives in kernels.runtime.
"""

from cutelite import MMA_ATOMS
from cutelite.numeric import numeric


def mma_need(atom):
    """The name an mma.sync atom's instruction goes by here: mma.<shape>.<A's PTX type>, 'mma.m16n8k16.f16'."""
    return "mma.%s.%s" % (atom.ptx.split(".")[3], numeric(atom.types[1]).ptx)


def _mma_min_sm():
    """mma.<shape>.<type> -> the oldest SM of the CuTe atoms with that instruction: C++ names an atom after the
    architecture whose atoms file holds it (SM75_16x8x8_F32F16F16F32_TN: mma.m16n8k8.f16 from sm_75 on; bf16
    inputs from sm_80, e4m3 from sm_89), never older than the PTX ISA's minimum. Volta's m8n8k4 is sm_70's:
    HMMA.884 on sm_75, none on sm_80+ (kernels.sass)."""
    out = {}
    for atom in MMA_ATOMS.values():
        if atom.ptx.startswith("mma.sync.aligned.") and atom.name[:2] == "SM":
            cc = (int(atom.name[2]), int(atom.name[3]))
            out[mma_need(atom)] = min(out.get(mma_need(atom), cc), cc)
    return out


# instruction name (as PTX spells it, without .sync.aligned) -> minimum (major, minor)
MIN_SM = {
    **_mma_min_sm(),
    "ldmatrix": (7, 5),
    "cp.async": (8, 0),
    "cvt.rn.bf16x2.f32": (8, 0),   # two floats to a bf16 pair (the f16 pair converts on sm_75)
    "ld.global.v4": (2, 0),
    "st.global.v4": (2, 0),
    "tanh.approx.f32": (7, 5),       # GELU's tanh
    # Hopper: kernels.instructions.hopper_ptx compiles them for the arch-specific target sm_90a only
    "wgmma": (9, 0),
    "setmaxnreg": (9, 0),
    "cp.async.bulk.tensor": (9, 0),  # TMA loads and stores
    "mbarrier.try_wait": (9, 0),     # and the .expect_tx arrive these kernels pair it with
    "fence.proxy.async": (9, 0),
}

# The GPUs a profile can stand for (kernels.setup(profile=...), CUTE_PROFILE): what the book's readers have.
PROFILES = {"sm_75": "a T4", "sm_80": "an A100", "sm_89": "an L4", "sm_90": "an H100"}


# The most dynamic shared memory one block may opt in to, in bytes: the CUDA C++ Programming Guide's
# technical specifications per compute capability (book/references.bib, cuda_programming_guide; "maximum amount
# of shared memory per thread block": 64 KB on 7.5, 163 KB on 8.0 and 8.7, 99 KB on 8.6 and 8.9, 227 KB on 9.0).
SHARED_PER_BLOCK = {(7, 5): 64 * 1024, (8, 0): 163 * 1024, (8, 6): 99 * 1024, (8, 7): 163 * 1024,
                    (8, 9): 99 * 1024, (9, 0): 227 * 1024}


def max_shared_per_block(cc=None):
    """The bytes of dynamic shared memory a block may opt in to on compute capability `cc`; with cc None (the
    simulator standing for any GPU) the most any GPU of the table allows."""
    if cc is None:
        return max(SHARED_PER_BLOCK.values())
    if tuple(cc[:2]) not in SHARED_PER_BLOCK:
        raise KeyError("max_shared_per_block: no limit recorded for %s; known: %s"
                       % (sm(cc), ", ".join(sm(c) for c in SHARED_PER_BLOCK)))
    return SHARED_PER_BLOCK[tuple(cc[:2])]


class CapabilityError(RuntimeError):
    """An instruction was asked for on (or compiled for) a GPU that does not have it."""


def sm(cc):
    """`(7, 5)` -> `'sm_75'`."""
    return "sm_%d%d" % tuple(cc[:2])


def profile_cc(profile):
    """`'sm_75'` -> `(7, 5)`: the compute capability a profile stands for (one of PROFILES)."""
    if profile not in PROFILES:
        raise ValueError("profile: unknown %r; known: %s" % (profile, ", ".join(PROFILES)))
    return int(profile[3]), int(profile[4])


def supports(name, cc):
    """True when a GPU of compute capability `cc` (a (major, minor) tuple) executes `name`."""
    if name not in MIN_SM:
        raise KeyError("supports: unknown instruction %r; known: %s" % (name, ", ".join(sorted(MIN_SM))))
    return tuple(cc[:2]) >= MIN_SM[name]


def lacking(names, cc):
    """The instructions of `names` that compute capability `cc` lacks (none when cc is None: no limit)."""
    return [n for n in names if cc is not None and not supports(n, cc)]


def why_not(names, cc, device_name=None):
    """None when compute capability `cc` has every instruction of `names`, else a sentence saying what is
    missing: 'needs cp.async (sm_80 or newer); this is Tesla T4 (sm_75)'."""
    missing = lacking(names, cc)
    if not missing:
        return None
    return "needs %s (%s or newer); this is %s (%s)" % (" and ".join(missing), sm(max(MIN_SM[n] for n in missing)),
                                                      device_name or "a GPU", sm(cc))


def require(name, cc, device_name=None):
    """Raise CapabilityError unless `name` runs on compute capability `cc` (`device_name`, if given, is
    named in the message). kernels.require(name) asks this of the current GPU."""
    if not supports(name, cc):
        raise CapabilityError(_message(name, cc, device_name))


def _message(name, cc, device_name=None):
    need = MIN_SM[name]
    dev = "%s (%s)" % (device_name, sm(cc)) if device_name else sm(cc)
    hint = ""
    if name.startswith("mma.m16n8k16") or name == "mma.m16n8k8.bf16":
        hint = " On sm_75 use mma.m16n8k8 with f16 inputs (kernels.best_mma_for(cc) picks it)."
    elif name == "cp.async":
        hint = " On sm_75 copy through registers (ld.global.v4 + st.shared) instead."
    elif need >= (9, 0):
        hint = " It is a Hopper instruction (the target must be sm_90a)."
    return "%s needs %s or newer, but the target is %s.%s" % (name, sm(need), dev, hint)


def best_mma_for(cc, dtype="f16"):
    """The largest tensor-core mma shape for f16 (or 'bf16') inputs on compute capability `cc`.

    Post: supports('mma.' + result + '.' + dtype, cc). sm_80+ -> 'm16n8k16'; sm_75 -> 'm16n8k8';
          sm_70 -> 'm8n8k4' (f16 only).
    """
    for shape in ("m16n8k16", "m16n8k8", "m8n8k4"):
        name = "mma.%s.%s" % (shape, dtype)
        if name in MIN_SM and supports(name, cc):
            return shape
    raise CapabilityError("best_mma_for: no tensor-core mma with %s inputs on %s" % (dtype, sm(cc)))

"""Replay the waits and arrivals a kernel recorded (one program of events a role: a thread or a warp) on
cutelite's mbarrier model, as the GPU would run them: each role steps until it waits for a parity its barrier
has not passed yet; the TMA's bytes land at once. Used by the protocol tests of chapter 8's GEMM and of
chapter 10's Hopper attention kernel."""

import threading


class EventLog:
    """The events a kernel's threads record in the simulator (which runs each CUDA thread as a Python thread):
    (thread index, kind, ...), in the order they happened."""

    def __init__(self):
        self.events, self.lock = [], threading.Lock()

    def log(self, *e):
        tid = threading.current_thread().threadIdx.x
        with self.lock:
            self.events.append((tid,) + e)


def replay(roles, bars, tma_bytes):
    """roles: {role: [(kind, barrier, arg), ...]} with kind "wait" (arg: the parity), "expect_tx" (arg: bytes),
    "tma" or "arrive"; bars: {barrier id: cutelite.pipeline.MBarrier}; tma_bytes(role, barrier, k): the bytes
    the k-th TMA load after the role's last expect_tx completes. Returns the roles left waiting: {role: the
    event each is stuck at} (empty when every role ran to its end)."""
    at, loads = {r: 0 for r in roles}, {r: 0 for r in roles}
    moved = True
    while moved:
        moved = False
        for r, program in roles.items():
            while at[r] < len(program):
                e = program[at[r]]
                if e[0] == "wait" and not bars[e[1]].try_wait(e[2]):
                    break
                if e[0] == "expect_tx":
                    bars[e[1]].arrive(expect_tx=e[2])
                    loads[r] = 0
                elif e[0] == "tma":
                    bars[e[1]].complete_tx(tma_bytes(r, e[1], loads[r]))
                    loads[r] += 1
                elif e[0] == "arrive":
                    bars[e[1]].arrive()
                at[r] += 1
                moved = True
    return {r: program[at[r]] for r, program in roles.items() if at[r] < len(program)}

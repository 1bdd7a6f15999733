# cython: language_level=3
"""C-level declarations shared by the compiled kernel (_kernel.pyx) and the compiled
simulator (_sim.pyx): the hot-dice modes and a view of a duel's turn plans.

A ``PlanView`` points into the arrays of a ``Plans`` object (thousand.kernel._kernel.Plans or
thousand.kernel._pure.Plans, see thousand.kernel.DuelPlans), which owns them: the view is valid
while that object lives. Mover ``i``'s rows are ``ptr[i]:ptr[i+1]``, one per turn total.
"""

from libc.stdint cimport int64_t, uint8_t

cdef enum:
    HOT_MUST_ROLL = 0     # hot dice: the roll of all dice is compulsory
    HOT_FREE = 1          # hot dice: roll all dice or stop
    HOT_CONFIRM = 2       # hot dice: a compulsory roll that banks at once if it scores

ctypedef struct PlanView:
    const int64_t* ptr        # per state: its first row; ptr[n] = rows
    const uint8_t* stop_ok    # per row: a bank at this total is allowed
    const uint8_t* forced_ok  # per row: the turn ends here (dump, overshoot)
    const int64_t* next       # per row: the mover's state after the end (-1: a win)
    const int64_t* after      # per row: the mover's score reached (overtaking)
    const uint8_t* climbed    # per row: the end put the mover on the barrel
    const int64_t* bust       # per state: the state after a zero turn
    const int64_t* score
    const int64_t* overtaken  # per state: the state after being overtaken
    const int64_t* pushed     # per state: the state after being pushed off the barrel
    const uint8_t* on_barrel


cdef inline int plan_view(PlanView* v, object plans) except -1:
    """Point ``v`` at the arrays of ``plans`` (C-contiguous int64 / uint8 arrays)."""
    cdef const int64_t[::1] ptr = plans.ptr, nxt = plans.next, after = plans.after, bust = plans.bust
    cdef const int64_t[::1] score = plans.score, overtaken = plans.overtaken, pushed = plans.pushed
    cdef const uint8_t[::1] stop_ok = plans.stop_ok, forced_ok = plans.forced_ok, climbed = plans.climbed
    cdef const uint8_t[::1] on_barrel = plans.on_barrel
    cdef bint rows = ptr.shape[0] > 0 and ptr[ptr.shape[0] - 1] > 0
    v.ptr = &ptr[0]
    v.stop_ok = &stop_ok[0] if rows else NULL
    v.forced_ok = &forced_ok[0] if rows else NULL
    v.next = &nxt[0] if rows else NULL
    v.after = &after[0] if rows else NULL
    v.climbed = &climbed[0] if rows else NULL
    v.bust = &bust[0]
    v.score = &score[0]
    v.overtaken = &overtaken[0]
    v.pushed = &pushed[0]
    v.on_barrel = &on_barrel[0]
    return 0

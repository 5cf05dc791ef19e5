"""How far from perfect: the clairvoyant offline optimum of a window (`schedrl bound`).

`problem` (a window's offline problem and the replay that scores a schedule with our metric code), `lower` (the
bounds that need no solver), `cpsat` (the solver, OR-Tools imported lazily), `sgs` (the serial schedule-generation
scheme: the exact brute force of small windows), `windows` (a scenario's or a trace's windows bounded, warm-started
from the heuristics and policies), `gap` (the share of the reference-to-optimum gap a method closes).
"""

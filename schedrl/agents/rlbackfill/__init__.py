"""Learned backfilling (`rl-backfill`; RLBackfilling, PMBS'23 workshop at SC'23): a policy chooses which job to backfill.

A base heuristic (F1 by default, any of `schedrl.heuristics.HEURISTICS` or a tuned rule) orders the queue and its
choice that does not fit gets the reservation of `easy` backfilling (or RLScheduler's `rlscheduler` variant), as
usual. Whenever one or more waiting jobs can be backfilled (they fit now and, by their requested times, do not delay
the reservation: `Simulator.candidates`), a small network scores every candidate with one shared MLP (RLScheduler's
kernel idea) and the best-scored one starts, instead of EASY's first fit; then the candidates are listed again, until
none is left (or, with `skip`, until the policy chooses to start no more before the next event).
A specialisation of `schedrl.agents.baserule` (what it shares with the inspector). Modules: `config` (its env
settings and semantics: the learned backfilling, `slots`, `skip`), `decisions` (the decision points, shared by env
and policy), `observation`, `env`, `module` (the RLModule), `inference` (the same network without ray), `policy`,
`agent`. docs/agents/rl-backfill.md.
"""

ENV_ID = "schedrl/RLBackfill-v0"
ENVS = {ENV_ID: ("schedrl.agents.rlbackfill.env:RLBackfillEnv", None)}
AGENT = "schedrl.agents.rlbackfill.agent:RLBackfillAgent"

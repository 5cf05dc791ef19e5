"""What the inspector and learned backfilling share: an agent that decides on top of a base rule's proposal.

A base rule (a heuristic of `schedrl.heuristics.HEURISTICS`, F1 by default, or a tuned rule, `tuned:FILE`) schedules
as it always does; at some of its decisions a small network, trained with PPO against the base on the same sequence,
decides instead. What the decision is belongs to each specialisation: the inspector (`agents/inspector/`) accepts or
rejects the job the base proposes; learned backfilling (`agents/rlbackfill/`) chooses which of EASY's candidates
starts. What does not depend on it lives here, once:

- `config`: the base rule (`make_base`, `check_base`, `base_label`) and `BaseRuleEnvConfig`, the env settings both
  read (trace, semantics, base, metric, sequence length, the held-out split, normalisation) and their checks;
- `observation`: `Normalisation` (the training trace's time scale, saved with checkpoints) and `TimeScaled`, the
  log1p time features both observers build on;
- `env`: `BaseRuleEnv`, the env skeleton (episodes from the training part, the base's cached value per sequence, the
  reward relative to it, the checks a step begins with);
- `module`: the tanh MLP of the RLModules;
- `policy`: `BaseRulePolicy`, a trained network as a simulator policy over its run's base and normalisation;
- `agent`: `BaseRuleSettings` (PPO) and `BaseRuleAgent`, the `Agent` plumbing (options, configure, judge, prepare,
  the RLlib config, loading a policy and its ray-free network: `schedrl.agents.inference.LayerNetwork`).

Not an agent itself: it has no entry in the registry (`schedrl.agents.AGENTS`). No ray or torch at import, except
`module` (ray) and `policy` (torch).
"""

"""The inspector (SchedInspector, Zhang, Dai, Xie, HPDC'22): accept or reject the job a base heuristic proposes.

At every scheduling point the base heuristic (F1 by default, any of `schedrl.heuristics.HEURISTICS` or a tuned rule)
proposes the job it would start; a small policy network sees that job, a summary of the queue, the free resources and
the running jobs' remaining requested times, and accepts (the job is started, or held as the heuristic would hold it)
or rejects (nothing starts now; the decision is taken again at the next arrival or completion: `Simulator.defer`).
A specialisation of `schedrl.agents.baserule` (what it shares with learned backfilling). Modules: `config` (its env
settings: the backfilling, the history features, the starvation guard), `observation` (the features), `env`,
`module` (the RLModule), `inference` (the same network without ray), `policy` (a trained network as a simulator
policy), `agent` (the contract: the teacher's options), `teacher` (the hindsight teacher's DAgger), `probe`.
docs/agents/inspector.md.
"""

ENV_ID = "schedrl/Inspector-v0"
ENVS = {ENV_ID: ("schedrl.agents.inspector.env:InspectorEnv", None)}
AGENT = "schedrl.agents.inspector.agent:InspectorAgent"
COMMANDS = {"inspector": ("schedrl.cli.inspector",
                          "look inside a trained inspector (`probe`), score policies (`score`), check they do no "
                          "harm (`harm`)")}
"""`schedrl inspector probe ...` (`probe.main`)."""

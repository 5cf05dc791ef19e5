"""`schedrl inspector probe|score|harm`: the inspector's tools.

`probe` is the inspector package's own command (`schedrl.agents.inspector.probe`: a trained inspector's reject
probabilities and latency), reached by name as the command line reaches every agent's command (`forward.py`);
`score` and `harm` are evaluation's (`schedrl.eval.inspector_score`: policies on a scenario's sequences with the longest
wait, utilisation and the inspector's counts; `schedrl.eval.inspector_harm`: a trained policy's do-no-harm checks on
the real traces it did not train on), which an agent package may not import.
"""

from __future__ import annotations

import importlib
import sys

PROBE = "schedrl.agents.inspector.probe"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["score"]:
        from schedrl.eval import inspector_score

        return inspector_score.main(argv[1:])
    if argv[:1] == ["harm"]:
        from schedrl.eval import inspector_harm

        return inspector_harm.main(argv[1:])
    if argv[:1] in (["-h"], ["--help"]) or not argv:
        print("usage: schedrl inspector {probe,score,harm} ...\n\n"
              "  probe  a trained inspector's reject probabilities and latency, or random rejections\n"
              "  score  policies on a scenario's validation or evaluation sequences, paired with its reference, with\n"
              "         longest wait, utilisation and the inspector's counts\n"
              "  harm   a trained policy on every real trace it did not train on: light-load, non-inferiority, per-user\n"
              "         and per-class, starvation checks (exit 1 where any misses)\n\n"
              "`schedrl inspector probe|score|harm --help` list their options")
        return 0 if argv else 2
    return int(importlib.import_module(PROBE).main(argv) or 0)

"""`schedrl inspector probe|score`: the inspector's two tools.

`probe` is the inspector package's own command (`schedrl.agents.inspector.probe`: a trained inspector's reject
probabilities and latency), reached by name as the command line reaches every agent's command (`forward.py`);
`score` is evaluation's (`schedrl.eval.inspector_score`: policies on a scenario's sequences with the longest wait,
utilisation and the inspector's counts), which an agent package may not import.
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
    if argv[:1] in (["-h"], ["--help"]) or not argv:
        print("usage: schedrl inspector {probe,score} ...\n\n"
              "  probe  a trained inspector's reject probabilities and latency, or random rejections\n"
              "  score  policies on a scenario's validation or evaluation sequences, paired with its reference, with\n"
              "         longest wait, utilisation and the inspector's counts\n\n"
              "`schedrl inspector probe --help` and `schedrl inspector score --help` list their options")
        return 0 if argv else 2
    return int(importlib.import_module(PROBE).main(argv) or 0)

"""Remaining-runtime prediction for SWF traces (numpy; the trained model uses torch).

`RuntimePredictor` is the interface: `fit(workload)` on a trace's training jobs, `predict(queries)`
the remaining run time (seconds) of jobs described by their request, their user's recent run times
and their elapsed time (`Queries`, built causally from a trace by `queries_for`). Implementations:
`RequestedTime` (the user's estimate), `LastTwoMean` (Tsafrir, Etsion & Feitelson 2007: the mean of
the user's last two run times), and `MLPPredictor` (`schedrl.predict.mlp`, a small torch MLP
trained per trace). `evaluation` splits a trace (first 70 % to train, last 30 % to test) and
reports MAPE; `schedrl predict train|eval` runs it.
"""

from schedrl.predict.base import Queries, RuntimePredictor, queries_for
from schedrl.predict.baselines import LastTwoMean, RequestedTime
from schedrl.predict.history import user_history

__all__ = ["LastTwoMean", "Queries", "RequestedTime", "RuntimePredictor", "queries_for", "user_history"]

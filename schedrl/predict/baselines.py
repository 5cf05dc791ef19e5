"""The two baselines: the user's requested time, and the mean of the user's last two run times."""

from __future__ import annotations

import numpy as np

from schedrl.predict.base import Queries, RuntimePredictor


def remaining(total: np.ndarray, queries: Queries) -> np.ndarray:
    """Remaining time from a predicted total: total - elapsed; once a job outlives its prediction, requested - elapsed;
    never below one second."""
    left = total - queries.elapsed
    left = np.where(left > 0, left, queries.requested - queries.elapsed)
    return np.maximum(left, 1.0)


class RequestedTime(RuntimePredictor):
    """The user's requested time, as a batch scheduler uses it."""

    name = "requested"

    def predict(self, queries: Queries) -> np.ndarray:
        return remaining(queries.requested, queries)


class LastTwoMean(RuntimePredictor):
    """Tsafrir, Etsion & Feitelson (2007): the mean of the user's last two run times, capped at the request;
    the last run alone when there is one, the request when there is none."""

    name = "last-two"

    def predict(self, queries: Queries) -> np.ndarray:
        last = queries.history[:, :2]
        count = np.sum(~np.isnan(last), axis=1)
        mean = np.divide(np.nansum(last, axis=1), count, out=np.zeros(len(queries)), where=count > 0)
        total = np.where(count > 0, np.minimum(mean, queries.requested), queries.requested)
        return remaining(total, queries)

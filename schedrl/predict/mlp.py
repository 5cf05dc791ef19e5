"""`MLPPredictor`: a small torch MLP per trace, trained to minimise the absolute percentage error of the remaining time.

Features of a query (all log1p-scaled, then standardised with the training set's mean and std):
requested processors, requested time, elapsed time, requested time left (max(requested - elapsed, 0)),
each of the user's last k run times (0 when missing) with a presence flag, the mean of the last two
(Tsafrir's prediction, 0 when missing). The network outputs log(remaining seconds); the loss is
the absolute log error |out - ln y|. (Training on MAPE itself was tried: MAPE rewards predicting
almost nothing, a constant ~0 scores 100 %, and the network learned just that, mean |ln error| 2.6-3.6.) Training
samples: each training job once at
elapsed 0 and `elapsed_samples` times at an elapsed time drawn uniformly within its run (a job is
only asked about while it still runs), keeping samples whose remaining time is >= `min_remaining`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from schedrl.predict.base import HISTORY, Queries, RuntimePredictor, queries_for
from schedrl.workload.workload import Workload


@dataclass(frozen=True)
class MLPSettings:
    """Network and training settings (ours: the predictor is not from a paper)."""

    history: int = HISTORY
    """k: the user's recent run times used as features."""
    hiddens: tuple[int, ...] = (64, 64)
    """Hidden layer widths."""
    epochs: int = 10
    """Passes over the training samples."""
    batch_size: int = 1024
    """Samples per Adam step."""
    lr: float = 1e-3
    """Adam learning rate."""
    elapsed_samples: int = 2
    """Extra samples per training job at random elapsed times within its run."""
    min_remaining: float = 60.0
    """Samples with less remaining time (seconds) are not trained or evaluated on (their percentage errors explode)."""
    seed: int = 0
    """Seed of the sampling, the initialisation and the shuffling."""

    def __post_init__(self) -> None:
        if self.history < 1 or self.epochs < 1 or self.batch_size < 1 or not self.lr > 0 or self.elapsed_samples < 0:
            raise ValueError("history, epochs and batch_size must be >= 1, lr > 0, elapsed_samples >= 0")


def features(queries: Queries) -> np.ndarray:
    """(n, 4 + 2k + 1) float32 raw features (before standardisation); layout in the module docstring."""
    h = queries.history
    present = ~np.isnan(h)
    runs = np.log1p(np.where(present, h, 0.0))
    last = h[:, :2]
    count = np.sum(~np.isnan(last), axis=1)
    mean2 = np.divide(np.nansum(last, axis=1), count, out=np.zeros(len(queries)), where=count > 0)
    left = np.maximum(queries.requested - queries.elapsed, 0.0)
    cols = [np.log1p(queries.procs), np.log1p(queries.requested), np.log1p(queries.elapsed), np.log1p(left)]
    return np.column_stack(cols + [runs, present.astype(float), np.log1p(mean2)]).astype(np.float32)


def training_samples(workload: Workload, settings: MLPSettings, rng: np.random.Generator) -> tuple[Queries, np.ndarray]:
    """(queries, true remaining seconds) of the training samples of `workload`."""
    base = queries_for(workload, settings.history)
    run = workload.columns["run"].astype(float)
    parts = [(base, run)]
    for _ in range(settings.elapsed_samples):
        elapsed = np.floor(rng.random(len(run)) * run)
        parts.append((base.at(elapsed), run - elapsed))
    q = Queries(*(np.concatenate([getattr(p, f) for p, _ in parts]) for f in ("procs", "requested", "history", "elapsed")))
    y = np.concatenate([r for _, r in parts])
    keep = y >= settings.min_remaining
    return q.take(keep), y[keep]


class _Net(nn.Module):
    def __init__(self, inputs: int, hiddens: tuple[int, ...]):
        super().__init__()
        layers: list[nn.Module] = []
        for width in hiddens:
            layers += [nn.Linear(inputs, width), nn.ReLU()]
            inputs = width
        layers.append(nn.Linear(inputs, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


class MLPPredictor(RuntimePredictor):
    """A small MLP trained per trace on log-scaled request, history and elapsed features (module docstring)."""

    name = "mlp"

    def __init__(self, settings: MLPSettings = MLPSettings()):
        self.settings = settings
        self.net: _Net | None = None
        self.mean: np.ndarray | None = None
        self.std: np.ndarray | None = None
        self.losses: list[float] = []

    def fit(self, workload: Workload, log=None) -> "MLPPredictor":
        s = self.settings
        rng = np.random.default_rng(s.seed)
        torch.manual_seed(s.seed)
        q, y = training_samples(workload, s, rng)
        if len(y) == 0:
            raise ValueError(f"no training sample with remaining time >= {s.min_remaining} s in {workload.name!r}")
        x = features(q)
        self.mean, self.std = x.mean(0), x.std(0) + 1e-6
        xt = torch.from_numpy((x - self.mean) / self.std)
        yt = torch.from_numpy(y.astype(np.float32))
        self.net = _Net(x.shape[1], s.hiddens)
        with torch.no_grad():
            self.net.net[-1].bias.fill_(float(np.log(np.median(y))))
        optimizer = torch.optim.Adam(self.net.parameters(), lr=s.lr)
        generator = torch.Generator().manual_seed(s.seed)
        self.losses = []
        for epoch in range(s.epochs):
            order = torch.randperm(len(yt), generator=generator)
            total = 0.0
            for start in range(0, len(order), s.batch_size):
                idx = order[start:start + s.batch_size]
                loss = torch.abs(self.net(xt[idx]) - torch.log(yt[idx])).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += float(loss.detach()) * len(idx)
            self.losses.append(total / len(yt))
            if log is not None:
                log(f"epoch {epoch + 1}/{s.epochs}: training mean |ln error| {self.losses[-1]:.3f}")
        return self

    def predict(self, queries: Queries) -> np.ndarray:
        if self.net is None:
            raise RuntimeError("MLPPredictor.predict before fit or load")
        x = torch.from_numpy((features(queries) - self.mean) / self.std)
        with torch.inference_mode():
            out = torch.exp(self.net(x).clamp(max=20.0)).numpy().astype(float)
        return np.maximum(out, 1.0)

    def save(self, path: str | Path, **meta) -> None:
        """Weights, feature scaling, settings and `meta` (e.g. the trace) in one torch file."""
        if self.net is None:
            raise RuntimeError("MLPPredictor.save before fit")
        settings = {**asdict(self.settings), "hiddens": list(self.settings.hiddens)}
        torch.save({"state_dict": self.net.state_dict(), "mean": self.mean.tolist(), "std": self.std.tolist(),
                    "settings": settings, "meta": meta}, Path(path))

    @classmethod
    def load(cls, path: str | Path) -> tuple["MLPPredictor", dict]:
        """(predictor, meta) from a file written by `save`."""
        data = torch.load(Path(path), weights_only=True)
        settings = MLPSettings(**{**data["settings"], "hiddens": tuple(data["settings"]["hiddens"])})
        predictor = cls(settings)
        predictor.mean = np.asarray(data["mean"], dtype=np.float32)
        predictor.std = np.asarray(data["std"], dtype=np.float32)
        predictor.net = _Net(len(predictor.mean), settings.hiddens)
        predictor.net.load_state_dict(data["state_dict"])
        predictor.net.eval()
        return predictor, dict(data["meta"])

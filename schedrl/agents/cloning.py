"""Behaviour cloning of a teacher into an RLModule before RL training, shared by the agents' warm starts.

`clone` fits a module's policy to a teacher's actions (cross-entropy on the module's masked logits) and,
when it has one, its value network to the returns of the demonstrated trajectories (MSE). The agents
build the demonstrations from their own envs (`rlscheduler/warm_start.py`: one pass of a heuristic;
`rlschert/warm_start.py`: DAgger rounds labelled by the env's teacher) and call this on the learner.

Torch is imported inside the functions: importing this module pulls in neither torch nor ray.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np


def clone(module, obs: Mapping[str, np.ndarray], labels: np.ndarray, returns: np.ndarray, value_net=None,
          epochs: int = 8, minibatch: int = 512, lr: float = 1e-3, seed: int = 0, smoothing: float = 0.0,
          mask_key: str | None = None, weights: np.ndarray | None = None) -> dict[str, float]:
    """Fit `module`'s policy to `labels` (cross-entropy) and `value_net` (part of `module`) to `returns` (MSE).

    `smoothing` > 0 fits (1 - smoothing) on the label plus `smoothing` spread evenly over the valid actions
    (`obs[mask_key]` > 0), so the clone keeps the teacher's greedy choice but still samples other actions: a
    clone that matches its teacher exactly is otherwise almost deterministic and PPO never explores from it.
    `weights` (N,), if given, weights each decision's policy loss (a minibatch's loss is its weighted mean), e.g.
    to up-weight a rare action the teacher takes (RLSchert's kills, `rlschert/warm_start.py`).

    `obs`: the observation dict's arrays, (N, ...) each, exactly as the module's forward reads them
    (any dtype: each minibatch is cast to float32, so 0/1 images can be stored as uint8). The value
    output's bias is first shifted to the mean return, so a -300 return does not take 10^5 Adam steps
    to reach; the value loss is divided by the mean |return| to stay unit-free beside the policy's.
    Returns the statistics: the greedy agreement with the labels and the losses, before and after.
    """
    import torch
    from ray.rllib.core.columns import Columns

    t0 = time.perf_counter()
    # the module's device: a learner with `num_gpus_per_learner` holds it on the GPU
    device = module_device(module)
    tensors = {k: torch.from_numpy(np.ascontiguousarray(v)).to(device) for k, v in obs.items()}
    labels_t = torch.from_numpy(np.asarray(labels, dtype=np.int64)).to(device)
    returns_t = torch.from_numpy(np.asarray(returns, dtype=np.float32)).to(device)
    n = len(labels_t)
    if n == 0:
        raise ValueError("behaviour cloning needs at least one demonstrated decision")
    weights_t = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float32)
        if w.shape != (n,) or (w < 0).any() or not (w > 0).any():
            raise ValueError(f"weights must be {n} non-negative numbers, not all 0; got shape {w.shape}")
        weights_t = torch.from_numpy(w).to(device)
    value_params = {id(p) for p in value_net.parameters()} if value_net is not None else set()
    policy_params = [p for p in module.parameters() if id(p) not in value_params]

    if not 0.0 <= smoothing < 1.0 or (smoothing > 0.0 and mask_key not in obs):
        raise ValueError(f"smoothing must be in [0, 1) and needs the action mask (mask_key={mask_key!r}); got {smoothing}")

    def policy_loss(logits, idx):
        logp = torch.log_softmax(logits, dim=-1)
        loss = -logp.gather(-1, labels_t[idx][:, None])[:, 0]
        if smoothing > 0.0:
            valid = (tensors[mask_key][idx] > 0).float()
            spread = -(logp * valid).sum(-1) / valid.sum(-1).clamp(min=1.0)
            loss = (1.0 - smoothing) * loss + smoothing * spread
        if weights_t is None:
            return loss.mean()
        w = weights_t[idx]
        return (w * loss).sum() / w.sum().clamp(min=1e-8)

    def batch(idx):
        return {Columns.OBS: {k: v[idx].float() for k, v in tensors.items()}}

    def forward(idx):
        b = batch(idx)
        logits = module._forward_train(b)[Columns.ACTION_DIST_INPUTS]
        return logits, module.compute_values(b) if value_net is not None else None

    def measure() -> tuple[float, float, float]:
        with torch.no_grad():
            agree, ce, mse = 0.0, 0.0, 0.0
            for idx in torch.arange(n, device=device).split(4096):
                logits, values = forward(idx)
                agree += float((logits.argmax(-1) == labels_t[idx]).sum())
                ce += float(torch.nn.functional.cross_entropy(logits, labels_t[idx], reduction="sum"))
                if values is not None:
                    mse += float(((values - returns_t[idx]) ** 2).sum())
        return agree / n, ce / n, mse / n

    before = measure()
    last = last_linear(value_net)
    if last is not None and last.bias is not None:  # start the value output at the mean return
        with torch.no_grad():
            values = torch.cat([module.compute_values(batch(i)) for i in torch.arange(n, device=device).split(4096)])
            last.bias += float(returns_t.mean() - values.mean())
    optimizers = [torch.optim.Adam(policy_params, lr=lr)]
    if value_params:
        optimizers.append(torch.optim.Adam(value_net.parameters(), lr=lr))
    generator = torch.Generator().manual_seed(seed)
    scale = max(float(returns_t.abs().mean()), 1e-6)
    module.train()
    steps = 0
    for _ in range(epochs):
        for idx in torch.randperm(n, generator=generator).to(device).split(minibatch):
            logits, values = forward(idx)
            loss = policy_loss(logits, idx)
            if values is not None:
                loss = loss + torch.nn.functional.mse_loss(values / scale, returns_t[idx] / scale)
            for opt in optimizers:
                opt.zero_grad()
            loss.backward()
            for opt in optimizers:
                opt.step()
            steps += 1
    after = measure()
    return {"agreement_before": before[0], "agreement": after[0], "cross_entropy_before": before[1],
            "cross_entropy": after[1], "value_mse_before": before[2], "value_mse": after[2],
            "gradient_steps": float(steps), "clone_seconds": time.perf_counter() - t0}


def module_device(module):
    """The device of `module`'s parameters (the CPU for a module without any, or that is no torch module)."""
    import torch

    parameters = getattr(module, "parameters", None)
    return next((p.device for p in parameters()), torch.device("cpu")) if callable(parameters) else torch.device("cpu")


def last_linear(net):
    """The last `torch.nn.Linear` of `net` (None for no net or no linear layer)."""
    if net is None:
        return None
    import torch

    linears = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    return linears[-1] if linears else None


def clone_on_learners(algorithm, fit) -> dict[str, float]:
    """Run `fit(module)` on every learner's default module (all hold the same weights), push the weights to the
    env runners, and return the first learner's statistics."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    results = algorithm.learner_group.foreach_learner(lambda learner: fit(learner.module[DEFAULT_MODULE_ID].unwrapped()))
    stats = [result.get() for result in results][0]
    algorithm.env_runner_group.sync_weights(from_worker_or_learner_group=algorithm.learner_group, inference_only=True)
    return stats


def progress_log(algorithm, echo: bool = True):
    """A `log(line)` for a warm start inside a training trial: each line appended to the trial directory's
    `trial_keys.WARM_START_LOG` (the driver prints it: `training.callbacks.ProgressLine`) and, with `echo`, printed.
    Outside a Tune trial (no trial directory) it only prints."""
    from pathlib import Path

    from schedrl.agents.trial_keys import WARM_START_LOG

    storage = getattr(algorithm, "_storage", None)
    where = getattr(storage, "trial_fs_path", None)
    path = Path(where) / WARM_START_LOG if where else None

    def log(line: str) -> None:
        if echo:
            print(line, flush=True)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a") as f:
                f.write(line.rstrip("\n") + "\n")
    return log

"""The policy networks RLScheduler compares its kernel network against (Table IV, Fig. 8).

Both see the whole job matrix at once, so unlike the kernel network they can (and, per the
paper's Fig. 8, do) key on job positions. Masking and the value network are inherited from
:class:`~schedrl.agents.rlscheduler.modules.queue_module.JobQueueModule`, so the ablation changes the policy only,
as in the paper ("sharing the same value network and hyper-parameters except the policy
network", §V-B1).
"""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from schedrl.agents.rlscheduler.modules.queue_module import JobQueueModule, mlp


class FlatMLPPolicyModule(JobQueueModule):
    """An MLP from the flattened ``(slots * F)`` job matrix to ``slots`` logits.

    ``model_config`` keys: ``policy_hiddens`` (default ``(32, 16, 8)``, Table IV MLP_v2; the
    registry's ``mlp_v1``/``mlp_v3`` presets set the other two rows), ``value_hiddens``.
    """

    KIND: ClassVar[str] = "flat"

    POLICY_DEFAULTS: ClassVar[dict[str, Any]] = {
        # RLScheduler Table IV, MLP_v2: 3 layers, 32, 16, 8
        "policy_hiddens": (32, 16, 8),
    }

    def build_policy(self, config: dict[str, Any]) -> nn.Module:
        return mlp(self.num_slots * self.num_features, config["policy_hiddens"], self.num_slots)


class LeNetPolicyModule(JobQueueModule):
    """LeNet-style CNN: 2 x (per-job conv, max-pool over neighbouring jobs), then dense layers.

    Table IV lists "LeNet: 6 layers, 2x(conv2d, maxpooling2d), dense". Following the authors'
    code (DIR-LAB/deep-batch-scheduler, ppo-pick-jobs.py, ``lenet``), the convolutions have a
    1-job kernel with the job features as channels (so they act like the kernel network) and the
    pooling merges neighbouring jobs, which is where job order gets mixed in (§V-B1). That code
    lays the queue out as a square grid and pools 2x2 (4 jobs); here the queue stays 1-D and
    ``pool`` = 4 merges the same number of jobs. It adds ReLU after each layer, which the
    authors' code omits (its LeNet is linear between poolings).

    ``model_config`` keys: ``conv_channels`` (default ``(32, 64)``), ``pool`` (default 4),
    ``dense_hiddens`` (default ``(64,)``), ``value_hiddens``.
    """

    KIND: ClassVar[str] = "lenet"

    POLICY_DEFAULTS: ClassVar[dict[str, Any]] = {
        # DIR-LAB/deep-batch-scheduler ppo-pick-jobs.py lenet: conv filters 32 then 64
        "conv_channels": (32, 64),
        # same code: 2x2 max-pooling over the job grid = 4 jobs per pooled cell
        "pool": 4,
        # same code: one dense layer of 64 units before the output layer
        "dense_hiddens": (64,),
    }

    @classmethod
    def resolve_config(cls, model_config):
        config = super().resolve_config(model_config)
        pool = config["pool"]
        if not isinstance(pool, int) or isinstance(pool, bool) or pool < 1:
            raise ValueError(f"{cls.__name__}: model_config['pool'] must be a positive int, got {pool!r}")
        return config

    def build_policy(self, config: dict[str, Any]) -> nn.Module:
        pool = config["pool"]
        layers: list[nn.Module] = []
        channels, length = self.num_features, self.num_slots
        for out_channels in config["conv_channels"]:
            layers += [nn.Conv1d(channels, out_channels, kernel_size=1), nn.ReLU(), nn.MaxPool1d(pool)]
            channels, length = out_channels, length // pool
        if length < 1:
            raise ValueError(
                f"{type(self).__name__}: {len(config['conv_channels'])} poolings of {pool} leave no jobs "
                f"out of {self.num_slots} slots; lower model_config['pool']"
            )
        layers += [nn.Flatten(), mlp(channels * length, config["dense_hiddens"], self.num_slots)]
        return nn.Sequential(*layers)

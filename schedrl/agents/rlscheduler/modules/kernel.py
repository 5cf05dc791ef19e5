"""RLScheduler's kernel-based policy network (Zhang et al., SC'20, §IV-B1, Fig. 5)."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from schedrl.agents.rlscheduler.modules.queue_module import JobQueueModule, mlp


class KernelPolicyModule(JobQueueModule):
    """One small MLP scores every job row; the scores, masked, are the action logits.

    The same 3-layer MLP (the "kernel") is applied to each of the ``MAX_OBSV_SIZE`` job rows
    independently, so permuting the rows permutes the logits identically and the policy cannot
    learn anything from a job's position in the queue (RLScheduler §III-1, §IV-B1). With the
    paper's 32-16-8 kernel and 8 features per job it has 961 parameters (the paper: "less than
    1,000"). The value network is the shared flattened-matrix MLP of :class:`JobQueueModule`.

    ``model_config`` keys: ``kernel_hiddens`` (default ``(32, 16, 8)``), ``value_hiddens``
    (default ``(64, 32, 8)``).
    """

    KIND: ClassVar[str] = "kernel"

    POLICY_DEFAULTS: ClassVar[dict[str, Any]] = {
        # RLScheduler Table IV ("RLScheduler: 3 layers, 32, 16, 8") and Fig. 5
        "kernel_hiddens": (32, 16, 8),
    }

    def build_policy(self, config: dict[str, Any]) -> nn.Module:
        return mlp(self.num_features, config["kernel_hiddens"], 1)

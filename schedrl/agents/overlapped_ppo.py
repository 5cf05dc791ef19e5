"""PPO whose env runners sample the next batch while the learner trains on the last one.

RLlib's PPO (2.60) alternates: every env runner samples, then the learner updates while the runners
wait, then the new weights go out. On a machine with two cores, one env-runner process and the
training process can instead work at the same time: iteration k trains on the batch sampled during
iteration k-1 and, meanwhile, the runners sample the batch of iteration k+1. An iteration then takes
about max(sampling, learning) instead of their sum (`benchmarks/bench_scaling.py --overlap`).

The price is one update of staleness: the batch trained on at iteration k+1 was sampled with the
weights of the end of iteration k-1, while the learner starts from those of iteration k. PPO's ratio
is taken against the policy that sampled (the batch's own action log-probabilities), so clipping and
the KL early stop still bound how far the update moves from the sampling policy; with one update of
lag the two policies differ by at most one update's KL. This is the scheme of asynchronous PPO
variants (and of RLlib's APPO without its V-trace correction); it is ours to offer, not the papers'.
With no remote env runner (sampling in the training process) there is nothing to overlap with and
the algorithm is RLlib's PPO unchanged.

Env-runner failures: a runner that dies while sampling returns no batch; the iteration then trains on
nothing (as RLlib's PPO does when every runner failed) and RLlib restarts the runner as configured.
"""

from __future__ import annotations

from ray.rllib.algorithms.ppo import PPO
from ray.rllib.utils.metrics import (
    ALL_MODULES, ENV_RUNNER_RESULTS, ENV_RUNNER_SAMPLING_TIMER, LEARNER_RESULTS, LEARNER_UPDATE_TIMER,
    NUM_ENV_STEPS_SAMPLED_LIFETIME, NUM_MODULE_STEPS_TRAINED_LIFETIME, SYNCH_WORKER_WEIGHTS_TIMER, TIMERS,
)

OVERLAP_KEY = "overlap_sampling"
"""`learner_config_dict` key: True makes `OverlappedPPO` overlap sampling with learning."""

_SAMPLE_TAG = "schedrl_overlapped_sample"


def _sample_with_metrics(runner):
    return runner.sample(), runner.get_metrics()


class OverlappedPPO(PPO):
    """RLlib's PPO, sampling the next batch during the update when `learner_config_dict[OVERLAP_KEY]` is set
    and there are remote env runners (see the module docstring)."""

    _sampling_in_flight: bool = False

    def training_step(self) -> None:
        group = self.env_runner_group
        if not self.config.learner_config_dict.get(OVERLAP_KEY) or group.num_healthy_remote_env_runners() == 0:
            self._sampling_in_flight = False
            return super().training_step()

        with self.metrics.log_time((TIMERS, ENV_RUNNER_SAMPLING_TIMER)):
            if not self._sampling_in_flight:  # the first iteration (or runners back after a failure)
                group.foreach_env_runner_async(_sample_with_metrics, tag=_SAMPLE_TAG)
            results = group.fetch_ready_async_reqs(tags=_SAMPLE_TAG, timeout_seconds=self.config.sample_timeout_s)
            # the next batch, sampled with the weights the runners hold now, while the learner trains on this one
            self._sampling_in_flight = group.foreach_env_runner_async(_sample_with_metrics, tag=_SAMPLE_TAG) > 0
            if not results:
                return
            episodes = [episode for _, (batch, _) in results for episode in batch]
            self.metrics.aggregate([metrics for _, (_, metrics) in results], key=ENV_RUNNER_RESULTS)

        # from here on as RLlib's PPO.training_step (new API stack): update, then send the weights out
        with self.metrics.log_time((TIMERS, LEARNER_UPDATE_TIMER)):
            learner_results = self.learner_group.update(
                episodes=episodes,
                timesteps={
                    NUM_ENV_STEPS_SAMPLED_LIFETIME: self.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME)),
                    NUM_MODULE_STEPS_TRAINED_LIFETIME: self.metrics.peek(
                        (LEARNER_RESULTS, ALL_MODULES, NUM_MODULE_STEPS_TRAINED_LIFETIME), default=0),
                },
                num_epochs=self.config.num_epochs,
                minibatch_size=self.config.minibatch_size,
                shuffle_batch_per_epoch=self.config.shuffle_batch_per_epoch,
            )
            self.metrics.aggregate(learner_results, key=LEARNER_RESULTS)
        with self.metrics.log_time((TIMERS, SYNCH_WORKER_WEIGHTS_TIMER)):
            # queued behind the sampling in flight: the runners take these weights for the batch after it
            self.env_runner_group.sync_weights(from_worker_or_learner_group=self.learner_group,
                                               policies=set(learner_results[0].keys()) - {ALL_MODULES},
                                               inference_only=True)

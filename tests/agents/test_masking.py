"""`mask_logits` (`schedrl/agents/masking.py`): valid logits untouched, invalid ones never chosen, every
distribution quantity finite, no gradient through the masked slots."""

from __future__ import annotations

import torch
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical

from schedrl.agents.masking import MASK_GAP, mask_logits


def test_valid_logits_are_kept_and_invalid_ones_sit_80_below_the_best_valid_one():
    logits = torch.tensor([[1.0, 5.0, -2.0, 3.0], [0.5, 0.5, 0.5, 0.5]], requires_grad=True)
    mask = torch.tensor([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    out = mask_logits(logits, mask)
    assert torch.equal(out[0, [0, 2, 3]], logits[0, [0, 2, 3]])
    assert out[0, 1] == 3.0 - MASK_GAP  # the best *valid* logit is 3, not the masked 5
    assert torch.isfinite(out).all()  # a row with nothing valid stays finite (uniform)
    dist = TorchCategorical(logits=out)
    probs = torch.softmax(out, -1)
    assert probs[0, 1] < 1e-34 and torch.isfinite(dist.entropy()).all()
    assert torch.isfinite(dist.logp(torch.tensor([0, 1]))).all()
    # greedy and sampled actions are valid ones
    assert out[0].argmax() == 3
    sampled = TorchCategorical(logits=out[:1].expand(20_000, -1)).sample()
    assert set(sampled.tolist()) <= {0, 2, 3}
    # no gradient reaches a masked slot, through the loss or through the floor
    (-dist.logp(torch.tensor([0, 2]))).sum().backward()
    assert logits.grad[0, 1] == 0 and logits.grad[1].abs().sum() == 0


def test_the_masked_distribution_equals_the_one_over_the_valid_actions_alone():
    torch.manual_seed(0)
    logits = torch.randn(64, 128) * 3
    mask = (torch.rand(64, 128) < 0.2).float()
    mask[:, 0] = 1.0
    masked = torch.log_softmax(mask_logits(logits, mask), -1)
    for row in range(64):
        valid = mask[row] > 0
        alone = torch.log_softmax(logits[row, valid], -1)
        assert torch.allclose(masked[row, valid], alone, atol=1e-6)

"""One judge over the whole option space (issue 54): the 64 combinations of `tests/eval/one_judge.OPTIONS`, each
through every table path and every kind of policy (`tests/eval/test_one_judge.py:check_combination`, whose fast-tier
run takes two of them). In the integration tier for its time (about two and a half minutes on two cores), not for
what it starts: it runs in-process, without Ray or a subprocess."""

from __future__ import annotations

import pytest

from tests.eval.one_judge import COMBINATIONS
from tests.eval.test_one_judge import check_combination, files  # noqa: F401  (the module's fixture)


@pytest.mark.integration
@pytest.mark.parametrize("options", COMBINATIONS,
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items() if v) or "defaults")
def test_every_combination_every_path_every_kind(files, options):  # noqa: F811
    assert check_combination(files, options) == 8

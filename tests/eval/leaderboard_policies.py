"""Outside policies for the leaderboard tests (`--policies leaderboard_policies:NAME`)."""

from schedrl.heuristics import get_heuristic


def sjf_again(scenario):
    """SJF under another name: its row must equal the SJF baseline's."""
    return None if scenario.generated else get_heuristic("sjf", 0)


def broken(scenario):
    raise RuntimeError("this policy cannot be built")


def not_here(scenario):
    return None

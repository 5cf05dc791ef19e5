"""Simulator configuration: discipline, backfilling, event order, kills."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

DISCIPLINES = ("pick-and-wait", "list")
BACKFILLS = ("none", "easy", "conservative", "rlscheduler")
EVENT_ORDERS = ("standard", "rlscheduler")
ALLOCATIONS = ("procs", "nodes")


@dataclass(frozen=True)
class SimConfig:
    """How the simulated cluster schedules. Every combination is valid."""

    discipline: str = "pick-and-wait"
    """`pick-and-wait` (RLScheduler/SchedGym: one pick, held until it fits) or `list` (DRAS/MRSch: pick from a window
    until one does not fit, reserve it, backfill)."""
    backfill: str = "none"
    """`none`, `easy`, `conservative`, or `rlscheduler` (the shadow-time-only variant of RLScheduler's released code)."""
    event_order: str = "standard"
    """`standard`: all events of an instant at once, completions before arrivals. `rlscheduler`: one event at a time,
    an arrival before a completion at the same instant (SchedGym's loop), to reproduce its published numbers."""
    kill_at_limit: bool = True
    """Kill a job when it reaches its requested time (counted in the metrics as `killed`)."""
    allocation: str = "procs"
    """Resource 0 counts `procs`, or whole `nodes` (a job needs ceil(procs / procs_per_node) nodes)."""
    window: int = 0
    """`list` discipline: how many jobs at the front of the queue the policy may pick from (0: all)."""
    backfill_choice: str = "first-fit"
    """`first-fit`: the simulator starts backfill candidates in queue order; `policy`: each backfill is a decision point (DRAS level 2)."""

    def __post_init__(self) -> None:
        for name, allowed in (("discipline", DISCIPLINES), ("backfill", BACKFILLS),
                              ("event_order", EVENT_ORDERS), ("allocation", ALLOCATIONS),
                              ("backfill_choice", ("first-fit", "policy"))):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"SimConfig.{name} must be one of {', '.join(allowed)}; got {value!r}")
        if self.window < 0:
            raise ValueError(f"SimConfig.window must be >= 0, got {self.window}")

    @classmethod
    def rlscheduler(cls, backfill: bool = False) -> "SimConfig":
        """SchedGym's semantics (RLScheduler's released code), to reproduce its tables."""
        return cls.preset("rlscheduler", backfill="rlscheduler" if backfill else "none")

    @classmethod
    def preset(cls, name: str = "standard", **overrides) -> "SimConfig":
        """A named preset (`PRESETS`) with some fields overridden (discipline, backfill, window...).

        The one home of each paper's simulator semantics: agents, the CLI's `--preset` and run
        records all go through here, and a run record stores the resulting `SimConfig` itself.
        """
        if name not in PRESETS:
            raise ValueError(f"unknown simulator preset {name!r}; choose one of {', '.join(PRESETS)}")
        return cls(**{**PRESETS[name], **overrides})

    def to_dict(self) -> dict:
        """Every field: what a table's JSON records as the semantics a row ran under."""
        return asdict(self)

    def describe(self, backfill: bool = True) -> str:
        """Every field in one phrase, as a table's title names the semantics its rows ran under (`backfill=False`: all
        but the backfilling, where the table has a row per strategy)."""
        parts = [self.discipline + (f" (window {self.window})" if self.window else "")]
        if backfill:
            parts.append(f"backfill {self.backfill}")
        if self.backfill_choice != "first-fit":
            parts.append(f"backfill choice {self.backfill_choice}")
        parts += ["walltime kill" if self.kill_at_limit else "no kill", f"{self.allocation} allocation",
                  f"{self.event_order} event order"]
        return ", ".join(parts)

    def differences(self, other: "SimConfig") -> list[str]:
        """The fields where `other` differs from this one, as `name this vs other` (empty: the same semantics)."""
        return [f"{f.name} {getattr(self, f.name)!r} vs {getattr(other, f.name)!r}" for f in fields(self)
                if getattr(self, f.name) != getattr(other, f.name)]

    @classmethod
    def from_dict(cls, data) -> "SimConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown SimConfig field(s): {', '.join(unknown)}")
        return cls(**dict(data))


PRESETS: dict[str, dict] = {
    "standard": {},
    # SchedGym (RLScheduler's released code): one event at a time with arrivals before completions,
    # whole-node allocation, no walltime kill; used to reproduce RLScheduler's published tables
    "rlscheduler": {"discipline": "pick-and-wait", "event_order": "rlscheduler", "kill_at_limit": False,
                    "allocation": "nodes"},
}
"""Named simulator semantics: preset name -> SimConfig fields it sets."""

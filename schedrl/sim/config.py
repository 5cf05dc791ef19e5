"""Simulator configuration: discipline, backfilling (Slurm's parameters under `slurm`), event order, kills."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Mapping

DISCIPLINES = ("pick-and-wait", "list")
BACKFILLS = ("none", "easy", "conservative", "rlscheduler", "slurm")
EVENT_ORDERS = ("standard", "rlscheduler")
ALLOCATIONS = ("procs", "nodes")
SLURM_DEFAULTS = {"bf_interval": 30, "bf_resolution": 60, "bf_window": 1440, "bf_max_job_test": 500}
"""Slurm's defaults for the backfill scheduler's parameters (slurm.conf(5), SchedulerParameters)."""
SLURM_SITE = (*SLURM_DEFAULTS, "node_procs")
"""A site's Slurm: the `backfill: slurm` fields an agent's env config carries (its `slurm` entry), so that a policy
trained on a scenario of that site trains under them (`policy_top` is the adapter's interface, not the site's)."""


@dataclass(frozen=True)
class SimConfig:
    """How the simulated cluster schedules. Every combination is valid."""

    discipline: str = "pick-and-wait"
    """`pick-and-wait` (RLScheduler/SchedGym: one pick, held until it fits) or `list` (DRAS/MRSch: pick from a window
    until one does not fit, reserve it, backfill)."""
    backfill: str = "none"
    """`none`, `easy`, `conservative`, `rlscheduler` (the shadow-time-only variant of RLScheduler's released code), or
    `slurm` (Slurm's backfill scheduler: passes every `bf_interval`, a plan rounded to `bf_resolution` whose
    reservations hold whole nodes; `schedrl.sim.backfill`)."""
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
    bf_interval: int = SLURM_DEFAULTS["bf_interval"]
    """`slurm`: seconds between the backfill scheduler's passes (jobs start only at passes). Under any other
    backfilling this and the next four are ignored (and left out of `to_dict` where at their defaults)."""
    bf_resolution: int = SLURM_DEFAULTS["bf_resolution"]
    """`slurm`: seconds to which a reservation's start and end are rounded down."""
    bf_window: int = SLURM_DEFAULTS["bf_window"]
    """`slurm`: minutes ahead within which a job that cannot start is reserved (slurm.conf's unit)."""
    bf_max_job_test: int = SLURM_DEFAULTS["bf_max_job_test"]
    """`slurm`: queued jobs tested per pass (the policy's picks, then the queue in submit order)."""
    node_procs: int = 0
    """`slurm`: procs per node of the node plan: a reservation holds its procs rounded up to whole nodes (0: only
    its own procs)."""
    policy_top: int = 0
    """`slurm`, `pick-and-wait`: 0, a pick that cannot start is held until it starts (the discipline's rule); K > 0,
    at each pass the policy picks up to K jobs, each started or reserved in turn and left waiting, before the queue
    in submit order (the Slurm adapter's top K, put first by its bonuses)."""

    def __post_init__(self) -> None:
        for name, allowed in (("discipline", DISCIPLINES), ("backfill", BACKFILLS),
                              ("event_order", EVENT_ORDERS), ("allocation", ALLOCATIONS),
                              ("backfill_choice", ("first-fit", "policy"))):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"SimConfig.{name} must be one of {', '.join(allowed)}; got {value!r}")
        if self.window < 0:
            raise ValueError(f"SimConfig.window must be >= 0, got {self.window}")
        for name in SLURM_DEFAULTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"SimConfig.{name} must be a whole number >= 1, got {value!r}")
        for name in ("node_procs", "policy_top"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"SimConfig.{name} must be a whole number >= 0, got {value!r}")
        if self.policy_top and (self.backfill != "slurm" or self.discipline != "pick-and-wait"):
            raise ValueError("SimConfig.policy_top applies to backfill slurm under the pick-and-wait discipline")
        if self.backfill == "slurm":
            for name, allowed in (("event_order", "standard"), ("backfill_choice", "first-fit")):
                if getattr(self, name) != allowed:
                    raise ValueError(f"SimConfig.backfill slurm needs {name} {allowed}, got {getattr(self, name)!r}")

    @property
    def backfill_text(self) -> str:
        """The backfilling in words, with Slurm's parameters under `slurm` (what every table's semantics line says)."""
        if self.backfill != "slurm":
            return self.backfill
        nodes = f", nodes of {self.node_procs} procs" if self.node_procs else ""
        top = f", the policy's top {self.policy_top} first" if self.policy_top else ""
        return (f"slurm (bf_interval {self.bf_interval} s, bf_resolution {self.bf_resolution} s, bf_window "
                f"{self.bf_window} min, bf_max_job_test {self.bf_max_job_test}{nodes}{top})")

    @classmethod
    def slurm(cls, params=None, node_procs: int = 0, **overrides) -> "SimConfig":
        """`backfill: slurm` with a site's parameters (a `schedrl.sim.slurmconf.BackfillParams`; Slurm's defaults
        without); ValueError where a parameter is not a whole number of seconds (minutes for bf_window)."""
        fields_ = {}
        if params is not None:
            for name, value in (("bf_interval", params.interval_s), ("bf_resolution", params.resolution_s),
                                ("bf_window", params.window_s / 60.0), ("bf_max_job_test", params.max_job_test)):
                if value != int(value):
                    raise ValueError(f"{name} {value:g} is not a whole number (Slurm's own unit)")
                fields_[name] = int(value)
        return cls(**{"backfill": "slurm", **fields_, "node_procs": node_procs, **overrides})

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
        """Every field (what a table's JSON records as the semantics a row ran under); Slurm's parameters only under
        `backfill: slurm` or where they were given, so the records of other backfilling stay as they were."""
        data = asdict(self)
        if self.backfill != "slurm":
            for name, default in (*SLURM_DEFAULTS.items(), ("node_procs", 0), ("policy_top", 0)):
                if data[name] == default:
                    del data[name]
        return data

    def describe(self, backfill: bool = True) -> str:
        """Every field in one phrase, as a table's title names the semantics its rows ran under (`backfill=False`: all
        but the backfilling, where the table has a row per strategy)."""
        parts = [self.discipline + (f" (window {self.window})" if self.window else "")]
        if backfill:
            parts.append(f"backfill {self.backfill_text}")
        if self.backfill_choice != "first-fit":
            parts.append(f"backfill choice {self.backfill_choice}")
        parts += ["walltime kill" if self.kill_at_limit else "no kill", f"{self.allocation} allocation",
                  f"{self.event_order} event order"]
        return ", ".join(parts)

    def differences(self, other: "SimConfig") -> list[str]:
        """The fields where `other` differs from this one, as `name this vs other` (empty: the same semantics)."""
        return [f"{f.name} {getattr(self, f.name)!r} vs {getattr(other, f.name)!r}" for f in fields(self)
                if getattr(self, f.name) != getattr(other, f.name)]

    @property
    def slurm_site(self) -> dict[str, int]:
        """Under `backfill: slurm`, the site's fields (`SLURM_SITE`) and their values; otherwise empty."""
        return {name: getattr(self, name) for name in SLURM_SITE} if self.backfill == "slurm" else {}

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


def check_slurm_site(backfill: str, values: Mapping[str, int] | None) -> dict[str, int]:
    """An env config's `slurm` entry checked (a site's `SLURM_SITE` fields, applied over Slurm's defaults under
    `backfill: slurm`): ValueError naming an unknown key, a value that is not a whole number of Slurm's unit, or an
    entry given under another backfilling."""
    values = dict(values or {})
    unknown = sorted(set(values) - set(SLURM_SITE))
    if unknown:
        raise ValueError(f"slurm: unknown key(s) {', '.join(map(str, unknown))}; the keys are {', '.join(SLURM_SITE)}")
    if values and backfill != "slurm":
        raise ValueError(f"slurm: {', '.join(values)} given, but they apply only to backfill slurm (backfill is "
                         f"{backfill!r})")
    try:
        SimConfig(backfill="slurm", **values)
    except ValueError as e:
        raise ValueError(f"slurm: {e}") from None
    return values

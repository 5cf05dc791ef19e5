"""The one owner of "which jobs": a trace argument, its cleaning, the simulator preset that implies a
cleaning, and MRSch's augmentation, resolved once into a `Workload`.

Every command and agent that reads a trace goes through `WorkloadSpec`: the rule "preset rlscheduler
means cleaning rlscheduler" and the list of cleaning presets are written here and nowhere else.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Callable, Mapping

CLEANING_PRESETS = ("default", "none", "rlscheduler")
"""`CleaningRules.preset` names a trace argument may take (`--cleaning`)."""
SIM_PRESETS = ("standard", "rlscheduler")
"""Simulator presets (`schedrl.sim.config.PRESETS`) whose name also picks a cleaning."""


def cleaning_for(preset: str | None, cleaning: str | None = None) -> str:
    """The cleaning preset a run uses: the one given, else the simulator preset's (SchedGym's filtering
    for `rlscheduler`), else `default`."""
    if cleaning is not None:
        return cleaning
    return "rlscheduler" if preset == "rlscheduler" else "default"


@dataclass(frozen=True)
class WorkloadSpec:
    """A trace and how it is read: everything that decides the jobs a scenario, a run or a command sees."""

    trace: str
    """Catalog name (`schedrl traces list`) or SWF path."""
    cleaning: str | None = None
    """Cleaning preset (`CLEANING_PRESETS`); None: the one `preset` implies (`cleaning_for`)."""
    preset: str = "standard"
    """Simulator preset the jobs are read for (`SIM_PRESETS`); only its cleaning matters here."""
    augment: str | None = None
    """MRSch's burst-buffer/power augmentation (S1..S10), or None."""
    augment_seed: int = 0
    """Seed of the augmentation."""

    def __post_init__(self) -> None:
        if not isinstance(self.trace, str) or not self.trace.strip():
            raise ValueError(f"workload.trace must be a catalog name or a path, got {self.trace!r}")
        if self.cleaning is not None and self.cleaning not in CLEANING_PRESETS:
            raise ValueError(f"workload.cleaning {self.cleaning!r} is not a cleaning preset; choose one of "
                             f"{', '.join(CLEANING_PRESETS)}")
        if self.preset not in SIM_PRESETS:
            raise ValueError(f"workload.preset {self.preset!r} is not a simulator preset; choose one of "
                             f"{', '.join(SIM_PRESETS)}")
        if self.augment is not None:
            from schedrl.workload.augment import MRSCH_PRESETS

            if self.augment not in MRSCH_PRESETS:
                raise ValueError(f"workload.augment {self.augment!r} is not one of {', '.join(MRSCH_PRESETS)}")
        if isinstance(self.augment_seed, bool) or not isinstance(self.augment_seed, int):
            raise ValueError(f"workload.augment_seed must be an integer, got {self.augment_seed!r}")

    @property
    def cleaning_preset(self) -> str:
        """The cleaning preset actually applied."""
        return cleaning_for(self.preset, self.cleaning)

    def load(self, note: Callable[[str], None] | None = None):
        """The cleaned (and augmented) `Workload`. ValueError (a `TraceError` for the file) when the trace is
        missing or malformed, or when cleaning leaves no job; `note` receives what the cleaning dropped (one line,
        never silent: the positions every option counts are of the jobs kept) and the augmentation's report lines."""
        from schedrl.workload.catalog import load_trace
        from schedrl.workload.cleaning import CleaningRules

        workload = load_trace(self.trace, CleaningRules.preset(self.cleaning_preset))
        if len(workload) == 0:
            raise ValueError(f"cleaning ({self.cleaning_preset}) dropped all {workload.report.jobs_in} jobs of "
                             f"{self.trace}: nothing to schedule (`schedrl traces info {self.trace} --cleaning "
                             f"{self.cleaning_preset}` says why)")
        if note is not None and workload.report.dropped:
            note(f"{workload.report.summary().splitlines()[0]} (`schedrl traces info {self.trace} --cleaning "
                 f"{self.cleaning_preset}` says why)")
        if not self.augment:
            return workload
        from schedrl.workload.augment import augment_preset

        out, notes = augment_preset(workload, self.augment, self.augment_seed)
        for line in notes:
            if note is not None:
                note(f"{out.name}: {line}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "workload") -> "WorkloadSpec":
        if not isinstance(data, Mapping):
            raise ValueError(f"{where} must be a mapping with a `trace`, got {data!r}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        if "trace" not in data:
            raise ValueError(f"{where}: `trace` is required (a catalog name or an SWF path)")
        return cls(**dict(data))

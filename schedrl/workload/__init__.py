"""Workloads: SWF traces, cleaning, the trace catalog, generators and samplers.

Imports numpy only (pandas lazily), never gymnasium, torch or ray.
"""

from schedrl.workload.cleaning import CleaningAction, CleaningReport, CleaningRules
from schedrl.workload.errors import TraceError
from schedrl.workload.fields import FIELD_NAMES, SWF_FIELDS
from schedrl.workload.header import SwfHeader
from schedrl.workload.priority import priority_flags
from schedrl.workload.swf import read_swf, write_swf
from schedrl.workload.workload import Workload

__all__ = [
    "CleaningAction",
    "CleaningReport",
    "CleaningRules",
    "FIELD_NAMES",
    "SWF_FIELDS",
    "SwfHeader",
    "TraceError",
    "Workload",
    "priority_flags",
    "read_swf",
    "write_swf",
]

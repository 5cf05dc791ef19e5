"""The export check rerun after the zoo's safetensors conversion (issue 47): for each zoo policy, the weights.pt of git revision
REV (default cb34cb7, the last before the conversion) and the shipped weights.safetensors are the same tensors (names,
dtypes, shapes, bytes), and the two networks make the same decisions and scores on the export check's episodes
(`check_episodes`: the run's validation sequences and two more). Needs the real traces ($SCHEDRL_TRACE_PATH).

    python tools/zoo_export_check.py [--rev REV] [NAME ...]
"""
import io
import subprocess
import sys
import time

import torch
from schedrl.agents import get_agent
from schedrl.agents.checkpoint import RunRecord, check_episodes, policy_from_tensors
from schedrl.zoo import decisions, manifest, store

args = sys.argv[1:]
rev = "cb34cb7"
if args[:1] == ["--rev"]:
    rev, args = args[1], args[2:]
names = args or [e.name for e in manifest.entries()]
for name in names:
    t = time.time()
    entry = next(e for e in manifest.entries() if e.name == name)
    old_bytes = subprocess.run(["git", "show", f"{rev}:schedrl/zoo/{entry.fields['directory']}/weights.pt"],
                               capture_output=True, check=True).stdout
    old = torch.load(io.BytesIO(old_bytes), weights_only=True)
    exported = manifest.checked(entry)
    new = exported.tensors()
    assert store.identical(old, new), name
    record = RunRecord.from_dict(exported.record, name)
    agent = get_agent(record.agent)
    def policy(state):
        return policy_from_tensors(agent, record, exported.architecture, state)
    judge = agent.judge(agent.env_config_class.from_dict(dict(record.env_config)))
    workload = judge.load()
    episodes = check_episodes(judge, workload, dict(record.validation))

    def run(p):
        return [judge.score_policy(p, workload, ids, n) for ids, n in episodes]

    a, sa = decisions.logged(policy(old), run)
    b, sb = decisions.logged(policy(new), run)
    assert decisions.first_difference(a, b) is None and sa == sb, name
    print(f"{name}: {len(old)} tensors bit-identical; {judge.decisions_note(len(b.calls), b.choices)} on "
          f"{' and '.join(f'{len(i)} sequences of {n} jobs' for i, n in episodes)} identical ({time.time()-t:.0f} s)", flush=True)

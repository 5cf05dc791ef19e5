"""RLlib RLModules (torch): the RLScheduler kernel policy, its ablations, and their registry.

Import the submodules directly (``schedrl.models.registry.module_spec``); this package
re-exports nothing so that importing it stays cheap until a model is needed.
"""

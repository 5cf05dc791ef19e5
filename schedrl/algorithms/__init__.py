"""RLlib algorithm builders: our frozen settings in, RLlib AlgorithmConfigs out.

Import the submodules directly (``schedrl.algorithms.ppo.build_ppo_config``); this package
re-exports nothing so that importing it pulls in neither torch nor ray.
"""

"""Gymnasium environments: thin views (observation, action, reward) over the simulator."""

"""The model zoo: trained policies stored so that loading them runs no code, each with its model card.

An RLlib checkpoint is a pickle and needs ray; an exported policy (`schedrl export CKPT --out DIR`) is a directory
with the network's weights as tensors only (`weights.safetensors`, checked against its sha256 at every load), a JSON record
of the architecture, normalisation, env and scenario (`policy.json`) and a card (`README.md`); its agent's ray-free
network (`Agent.inference_module`, torch and numpy only) runs it, making the checkpoint's decisions.

    store.py      one exported policy on disk: write, read, the weights' checksum and precision
    card.py       the card's fields and Markdown; the warning when a policy is used outside its machine or normalisation
    decisions.py  logs a policy's decisions, so an export is checked against its checkpoint on whole episodes
    manifest.py   the policies shipped here (`policies/NAME/`, `manifest.json`): entries, names, adding one

Exporting and loading go through the agent of the run record, in `schedrl.agents.checkpoint` (`export_policy`,
`load_policy("zoo:NAME" | DIR)`), which imports this package; this package imports no agent. `zoo:NAME` is accepted
wherever a checkpoint is (`evaluate`, `compare --policies`, `simulate --policy`); `schedrl zoo list` shows the zoo.
"""

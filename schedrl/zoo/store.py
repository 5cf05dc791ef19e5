"""One exported policy on disk: a directory with `policy.json`, `weights.pt` and `README.md` (its model card).

`policy.json` holds the run record the policy was trained under (`schedrl.agents.checkpoint.RunRecord.to_dict`),
the architecture of its ray-free network (`Agent.inference_module`), the card's fields (`schedrl.zoo.card`) and the
sha256, size and precision of the weights file. `weights.pt` is the network's state dict written with `torch.save`
and read with `torch.load(weights_only=True)`: tensors only, so loading it runs no code (an RLlib checkpoint is a
pickle). Weights stored in half precision (when the export found the decisions unchanged, `schedrl.zoo.card`) are
cast back to float32 at load.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = 1
"""Version of the layout below; a reader refuses another."""
POLICY_FILE = "policy.json"
WEIGHTS_FILE = "weights.pt"
CARD_FILE = "README.md"
PRECISIONS = ("fp32", "fp16")
_KEYS = ("format", "name", "record", "architecture", "weights", "card")


class ZooError(ValueError):
    """An exported policy or a zoo name that cannot be used; the message is one line naming the file or name."""


def check_file(path: Path, expected: str, recorder: str, missing: str, fix: str) -> None:
    """ZooError (one line naming `path`) unless the file is there with the sha256 `expected` that `recorder` records."""
    if not path.is_file():
        raise ZooError(f"{path}: missing ({missing})")
    actual = file_sha256(path)
    if actual != expected:
        raise ZooError(f"{path}: checksum mismatch (sha256 {actual[:12]}..., {recorder} records {expected[:12]}...): "
                       f"the file is corrupt or was changed; {fix}")


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def is_exported(path: str | Path) -> bool:
    """Whether `path` is the directory of an exported policy (it has a `policy.json`)."""
    return (Path(path).expanduser() / POLICY_FILE).is_file()


@dataclass(frozen=True)
class Exported:
    """An exported policy's directory and its `policy.json`."""

    directory: Path
    data: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(self.data["name"])

    @property
    def record(self) -> Mapping[str, Any]:
        """The run record dict (`RunRecord.from_dict` reads it)."""
        return self.data["record"]

    @property
    def architecture(self) -> Mapping[str, Any]:
        return self.data["architecture"]

    @property
    def card(self) -> Mapping[str, Any]:
        return self.data["card"]

    @property
    def policy_file(self) -> Path:
        return self.directory / POLICY_FILE

    @property
    def weights_file(self) -> Path:
        return self.directory / WEIGHTS_FILE

    def check_weights(self) -> None:
        """ZooError (one line) unless the weights file is there and has the sha256 `policy.json` records."""
        check_file(self.weights_file, self.data["weights"]["sha256"], POLICY_FILE,
                   f"an exported policy is {POLICY_FILE} and {WEIGHTS_FILE} together", "copy or export it again")

    def weights(self) -> dict:
        """The state dict, checked against its sha256, read as tensors only and in float32."""
        import pickle

        import torch

        self.check_weights()
        try:
            state = torch.load(self.weights_file, map_location="cpu", weights_only=True)
        except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as e:
            raise ZooError(f"{self.weights_file}: not a tensors-only state dict ({type(e).__name__}: "
                           f"{str(e).splitlines()[0] if str(e) else ''})") from None
        if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise ZooError(f"{self.weights_file}: not a state dict of tensors")
        return {k: v.float() if v.is_floating_point() else v for k, v in state.items()}


def read(directory: str | Path) -> Exported:
    """The exported policy in `directory` (its `policy.json` checked; the weights are checked when read)."""
    directory = Path(directory).expanduser().resolve()
    path = directory / POLICY_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ZooError(f"{directory}: not an exported policy (no {POLICY_FILE}; `schedrl export CKPT --out DIR` "
                       "writes one)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ZooError(f"{path}: corrupt (not JSON: {e})") from None
    if not isinstance(data, dict) or any(key not in data for key in _KEYS):
        missing = [key for key in _KEYS if not isinstance(data, dict) or key not in data]
        raise ZooError(f"{path}: not an exported policy (missing {', '.join(missing)})")
    if data["format"] != FORMAT:
        raise ZooError(f"{path}: format {data['format']!r}; this schedrl reads format {FORMAT} (export it again "
                       "with this version, or load it with the version that wrote it)")
    return Exported(directory, data)


def write(directory: str | Path, name: str, record: Mapping[str, Any], architecture: Mapping[str, Any],
          weights: Mapping[str, Any], card: Mapping[str, Any], precision: str = "fp32") -> Exported:
    """Write an exported policy: the weights (in `precision`), then `policy.json` with their checksum, then the card."""
    import torch

    from schedrl.zoo.card import markdown

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    directory = Path(directory).expanduser().resolve()
    directory.mkdir(parents=True, exist_ok=True)
    half = precision == "fp16"
    tensors = {k: (v.half() if half and v.is_floating_point() else v).detach().cpu().contiguous().clone()
               for k, v in weights.items()}
    torch.save(tensors, directory / WEIGHTS_FILE)
    size = (directory / WEIGHTS_FILE).stat().st_size
    data = {"format": FORMAT, "name": name, "card": dict(card), "record": dict(record),
            "architecture": dict(architecture),
            "weights": {"file": WEIGHTS_FILE, "sha256": file_sha256(directory / WEIGHTS_FILE), "bytes": size,
                        "precision": precision, "parameters": int(sum(t.numel() for t in tensors.values()))}}
    (directory / POLICY_FILE).write_text(json.dumps(data, indent=2, default=str) + "\n")
    exported = Exported(directory, json.loads((directory / POLICY_FILE).read_text()))
    (directory / CARD_FILE).write_text(markdown(exported))
    return exported

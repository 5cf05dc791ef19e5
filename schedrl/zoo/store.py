"""One exported policy on disk: a directory with `policy.json`, `weights.safetensors` and `README.md` (its model card).

`policy.json` holds the run record the policy was trained under (`schedrl.agents.checkpoint.RunRecord.to_dict`),
the architecture of its ray-free network (`Agent.inference_module`), the card's fields (`schedrl.zoo.card`) and the
sha256, size and precision of the weights file; its shape is checked field by field when read (`schedrl.zoo.fields`).
`weights.safetensors` is the network's state dict in the safetensors format: a JSON header and raw tensor bytes, no
pickle container at all, so loading it runs no code (an RLlib checkpoint is a pickle). The bytes are checked against
their sha256 and parsed from the same read. Weights stored in half precision (when the export found the decisions
unchanged, `schedrl.zoo.card`) are cast back to float32 at load.

Format 1 (before 2026-11-28) stored `weights.pt` (`torch.save`, read with `torch.load(weights_only=True)`, a
restricted pickle); it is still read, with a deprecation line, until schedrl 0.2.0: `convert` (`schedrl zoo convert
DIR`) rewrites such a directory with bit-identical tensors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = 2
"""Version of the layout below (2: safetensors weights); a reader refuses another than `READS`."""
READS = {1: "weights.pt", 2: "weights.safetensors"}
"""The formats read, each with its weights file."""
POLICY_FILE = "policy.json"
WEIGHTS_FILE = "weights.safetensors"
LEGACY_WEIGHTS_FILE = "weights.pt"
LEGACY_UNTIL = "0.2.0"
"""The version that stops reading format 1 (`weights.pt`)."""
CARD_FILE = "README.md"
PRECISIONS = ("fp32", "fp16")
_warned: set[Path] = set()


class ZooError(ValueError):
    """An exported policy or a zoo name that cannot be used; the message is one line naming the file or name."""


def check_fields(value: Any, spec: Any, prefix: str, where: str = "") -> None:
    """ZooError (one line: `prefix: ` then the field and what is wrong with it) unless `value` fits `spec`
    (`schedrl.zoo.fields`)."""
    from schedrl.zoo.fields import problem

    found = problem(value, spec, where)
    if found:
        raise ZooError(f"{prefix}: {found}")


WEIGHTS_LIMIT = 1 << 30
"""The largest file of a zoo policy read (its weights: the shipped ones are under 4 MiB)."""


def check_file(path: Path, expected: str, recorder: str, missing: str, fix: str) -> bytes:
    """The file's bytes; ZooError (one line naming `path`) unless it is there with the sha256 `expected` that
    `recorder` records. The bytes returned are the ones checked: parse them, not the file read again."""
    from schedrl.bounded import TooLarge, read_bounded

    if not path.is_file():
        raise ZooError(f"{path}: missing ({missing})")
    try:
        data = read_bounded(path, "a zoo policy's file", WEIGHTS_LIMIT)
    except TooLarge as e:
        raise ZooError(str(e)) from None
    except OSError as e:
        raise ZooError(f"{path}: cannot read it ({e.strerror or type(e).__name__})") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise ZooError(f"{path}: checksum mismatch (sha256 {actual[:12]}..., {recorder} records {expected[:12]}...): "
                       f"the file is corrupt or was changed; {fix}")
    return data


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
        return self.directory / self.data["weights"]["file"]

    @property
    def legacy(self) -> bool:
        """Format 1: `weights.pt`, read until schedrl `LEGACY_UNTIL`."""
        return self.data["weights"]["file"] == LEGACY_WEIGHTS_FILE

    def check_weights(self) -> bytes:
        """The weights file's bytes; ZooError (one line) unless it is there with the sha256 `policy.json` records."""
        return check_file(self.weights_file, self.data["weights"]["sha256"], POLICY_FILE,
                          f"an exported policy is {POLICY_FILE} and {self.weights_file.name} together",
                          "copy or export it again")

    def tensors(self, warn=None) -> dict:
        """The state dict as stored (fp16 stays fp16), from the bytes checked against their sha256."""
        import torch

        data = self.check_weights()
        if self.legacy:
            return _legacy_tensors(self.weights_file, data, warn)
        from safetensors import SafetensorError
        from safetensors.torch import load

        try:
            state = load(data)
        except (SafetensorError, ValueError, RuntimeError, OverflowError) as e:
            raise ZooError(f"{self.weights_file}: not a safetensors file ({type(e).__name__}: "
                           f"{str(e).splitlines()[0] if str(e) else ''})") from None
        if not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise ZooError(f"{self.weights_file}: not a state dict of tensors")
        return check_finite(state, self.weights_file)

    def weights(self, warn=None) -> dict:
        """The state dict, checked against its sha256, read as tensors only and in float32."""
        return {k: v.float() if v.is_floating_point() else v for k, v in self.tensors(warn).items()}


def _legacy_tensors(path: Path, data: bytes, warn=None) -> dict:
    """A format-1 `weights.pt` (`torch.load(weights_only=True)`: a restricted pickle), with the deprecation line."""
    import io
    import pickle
    import sys

    import torch

    if path not in _warned:
        _warned.add(path)
        (warn or (lambda text: print(text, file=sys.stderr, flush=True)))(
            f"schedrl: warning: {path}: weights.pt (a restricted pickle) is read until schedrl {LEGACY_UNTIL}; "
            f"convert it to safetensors with `schedrl zoo convert {path.parent}`")
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as e:
        raise ZooError(f"{path}: not a tensors-only state dict ({type(e).__name__}: "
                       f"{str(e).splitlines()[0] if str(e) else ''})") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ZooError(f"{path}: not a state dict of tensors")
    return check_finite(state, path)


def check_finite(state: Mapping[str, Any], where) -> Mapping[str, Any]:
    """`state` (a state dict), or ZooError naming the first tensor holding NaN or infinity: a network with such a
    weight computes NaN logits, and a policy whose every score is NaN decides like the first valid action (FCFS),
    never like the policy it claims to be."""
    for key, value in state.items():
        if value.is_floating_point() and not bool(value.isfinite().all()):
            bad = int((~value.isfinite()).sum())
            raise ZooError(f"{where}: tensor {key} holds {bad} NaN or infinite value{'s' if bad != 1 else ''} of "
                           f"{value.numel()}: not a usable network; export it again from a sound checkpoint")
    return state


def read(directory: str | Path) -> Exported:
    """The exported policy in `directory` (its `policy.json` checked; the weights are checked when read)."""
    directory = Path(directory).expanduser().resolve()
    path = directory / POLICY_FILE
    from schedrl.bounded import TooLarge, read_bounded

    try:
        text = read_bounded(path, f"a {POLICY_FILE}")
    except TooLarge as e:
        raise ZooError(str(e)) from None
    except (FileNotFoundError, NotADirectoryError):
        raise ZooError(f"{directory}: not an exported policy (no {POLICY_FILE}; `schedrl export CKPT --out DIR` "
                       "writes one)") from None
    except IsADirectoryError:
        raise ZooError(f"{path}: a directory, not an exported policy's {POLICY_FILE}") from None
    return Exported(directory, parse(text, path))


def load_json(text: bytes | str, path: Path | str) -> Any:
    """JSON of the zoo (`policy.json`, `manifest.json`): ZooError naming `path` when it is not JSON or writes a key
    twice in one object."""
    from schedrl.zoo.fields import duplicate_keys, written_twice

    try:
        data = json.loads(text, object_pairs_hook=duplicate_keys)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ZooError(f"{path}: corrupt (not JSON: {e})") from None
    except RecursionError:
        raise ZooError(f"{path}: corrupt (nested too deep)") from None
    twice = written_twice(data)
    if twice:
        raise ZooError(f"{path}: {twice}")
    return data


def parse(text: bytes | str, path: Path | str) -> dict[str, Any]:
    """A policy.json's content, its format and every field the readers use checked (ZooError naming the field)."""
    from schedrl.zoo import fields

    data = load_json(text, path)
    if not isinstance(data, dict) or "format" not in data:
        raise ZooError(f"{path}: not an exported policy (no format)")
    if data["format"] not in READS:
        raise ZooError(f"{path}: format {data['format']!r}; this schedrl reads formats "
                       f"{', '.join(map(str, READS))} (export it again with this version, or load it with the "
                       "version that wrote it)")
    check_fields(data, fields.POLICY_FILE, str(path))
    if data["weights"]["file"] != READS[data["format"]]:
        raise ZooError(f"{path}: weights.file is {data['weights']['file']!r}; format {data['format']} stores "
                       f"{READS[data['format']]}")
    return data


def write(directory: str | Path, name: str, record: Mapping[str, Any], architecture: Mapping[str, Any],
          weights: Mapping[str, Any], card: Mapping[str, Any], precision: str = "fp32") -> Exported:
    """Write an exported policy: the weights (in `precision`), then `policy.json` with their checksum, then the card."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    directory = Path(directory).expanduser().resolve()
    directory.mkdir(parents=True, exist_ok=True)
    half = precision == "fp16"
    tensors = {k: (v.half() if half and v.is_floating_point() else v).detach().cpu().contiguous().clone()
               for k, v in weights.items()}
    data = {"format": FORMAT, "name": name, "card": dict(card), "record": dict(record),
            "architecture": dict(architecture),
            "weights": {"file": WEIGHTS_FILE, "precision": precision,
                        "parameters": int(sum(t.numel() for t in tensors.values()))}}
    return _write(directory, data, tensors)


def _safetensors(tensors: Mapping[str, Any]) -> bytes:
    from safetensors.torch import save

    return save({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, metadata={"schedrl": str(FORMAT)})


def _write(directory: Path, data: dict[str, Any], tensors: Mapping[str, Any]) -> Exported:
    """The weights (safetensors), then policy.json with their checksum, then the card; each file atomically."""
    from schedrl.outputs import atomic_write
    from schedrl.zoo.card import markdown

    raw = _safetensors(tensors)
    atomic_write(directory / WEIGHTS_FILE, raw)
    data = {**data, "format": FORMAT,
            "weights": {**data["weights"], "file": WEIGHTS_FILE, "sha256": hashlib.sha256(raw).hexdigest(),
                        "bytes": len(raw)}}
    text = json.dumps(data, indent=2, default=str) + "\n"
    atomic_write(directory / POLICY_FILE, text)
    exported = Exported(directory, parse(text, directory / POLICY_FILE))
    atomic_write(directory / CARD_FILE, markdown(exported))
    return exported


def identical(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two state dicts with the same names, dtypes, shapes and bytes."""
    def raw(t):
        return t.detach().cpu().contiguous().numpy().tobytes()
    return set(a) == set(b) and all(a[k].dtype == b[k].dtype and tuple(a[k].shape) == tuple(b[k].shape)
                                    and raw(a[k]) == raw(b[k]) for k in a)


def convert(directory: str | Path, warn=None) -> tuple[Exported, bool]:
    """Rewrite a format-1 exported policy (`weights.pt`) as format 2 (`weights.safetensors`), checking that every
    tensor reads back bit-identical (same names, dtypes, shapes and bytes); the old file is removed last.
    Returns the policy and whether it was converted (False: it was format 2 already)."""
    exported = read(directory)
    if not exported.legacy:
        return exported, False
    from safetensors.torch import load

    old = exported.weights_file
    tensors = exported.tensors(warn=warn or (lambda text: None))
    if not identical(load(_safetensors(tensors)), tensors):  # before anything is written
        raise ZooError(f"{old}: its tensors do not survive safetensors bit-identical; not converted")
    converted = _write(exported.directory, {**exported.data, "weights": dict(exported.data["weights"])}, tensors)
    if not identical(converted.tensors(), tensors):
        raise ZooError(f"{converted.weights_file}: the tensors did not read back bit-identical; {old} kept")
    old.unlink()
    return converted, True

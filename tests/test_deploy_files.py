"""Deployment files stay valid and agree with pyproject.toml: cluster.yaml, the Dockerfiles, the Slurm script."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
DOCKERFILES = [REPO / "docker" / "Dockerfile", REPO / "docker" / "Dockerfile.gpu"]
CLUSTER_YAML = REPO / "cluster.yaml"
SLURM_SCRIPT = REPO / "examples" / "slurm" / "ray_cluster.sbatch"


def pyproject_pins() -> dict[str, tuple[str, str]]:
    """Dependency name -> (extras as written, pinned version) for every `==` pin in pyproject.toml."""
    with open(REPO / "pyproject.toml", "rb") as fh:
        deps = tomllib.load(fh)["project"]["dependencies"]
    pins = {}
    for dep in deps:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?==([^;\s]+)", dep.strip())
        if m:
            pins[m.group(1).lower()] = (m.group(2) or "", m.group(3))
    return pins


def dockerfile_args(text: str) -> dict[str, str]:
    """`ARG NAME=value` defaults of a Dockerfile."""
    return dict(re.findall(r"^ARG\s+(\w+)=(\S+)\s*$", text, flags=re.MULTILINE))


def test_pyproject_pins_torch_and_ray():
    pins = pyproject_pins()
    assert "torch" in pins and "ray" in pins, f"pyproject.toml should pin torch and ray with ==, found {pins}"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_pins_agree_with_pyproject(dockerfile: Path):
    text = dockerfile.read_text()
    args = dockerfile_args(text)
    (_, torch_version), (ray_extras, ray_version) = pyproject_pins()["torch"], pyproject_pins()["ray"]
    assert args.get("TORCH_VERSION") == torch_version, f"{dockerfile.name}: ARG TORCH_VERSION should be {torch_version}"
    assert args.get("RAY_VERSION") == ray_version, f"{dockerfile.name}: ARG RAY_VERSION should be {ray_version}"
    assert '"torch==${TORCH_VERSION}"' in text
    assert f'"ray{ray_extras}==${{RAY_VERSION}}"' in text, f"{dockerfile.name} should install ray{ray_extras}"
    # torch before ray and before schedrl itself, as pyproject.toml's comment requires
    torch_at = text.index('"torch==${TORCH_VERSION}"')
    assert torch_at < text.index("==${RAY_VERSION}") < text.index("pip install /tmp/schedrl-src")


def test_cpu_image_uses_cpu_torch_and_gpu_image_does_not():
    cpu, gpu = (p.read_text() for p in DOCKERFILES)
    assert "download.pytorch.org/whl/cpu" in cpu
    assert "download.pytorch.org/whl/cpu" not in gpu


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_runs_as_non_root_with_traces(dockerfile: Path):
    text = dockerfile.read_text()
    users = re.findall(r"^USER\s+(\S+)", text, flags=re.MULTILINE)
    assert users, f"{dockerfile.name} has no USER instruction: the image would run as root"
    assert users[-1].split(":")[0] not in {"root", "0"}, f"{dockerfile.name} ends as USER {users[-1]}"
    assert re.search(rf"useradd\b.*\b{re.escape(users[-1].split(':')[0])}\b", text), "the USER is never created"
    assert re.search(r"^WORKDIR\s+\S+", text, flags=re.MULTILINE)
    assert re.search(r"^COPY\s+traces\s", text, flags=re.MULTILINE), "the image must hold the repository's traces/"
    assert re.search(r'^CMD\s+\["schedrl",\s*"--help"\]', text, flags=re.MULTILINE)
    # every path the image copies from the build context exists in the repository
    for sources in re.findall(r"^COPY\s+(?:--\S+\s+)*(.+)\s+\S+$", text, flags=re.MULTILINE):
        for source in sources.split():
            if "*" not in source:
                assert (REPO / source).exists(), f"{dockerfile.name} copies {source}, which is not in the repository"


def load_cluster_yaml() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load(CLUSTER_YAML.read_text())


def test_cluster_yaml_passes_ray_validation():
    pytest.importorskip("jsonschema")
    util = pytest.importorskip("ray.autoscaler._private.util")
    config = load_cluster_yaml()
    assert config["provider"]["type"] == "local"
    prepared = util.prepare_config(config)
    util.validate_config(prepared)
    assert prepared["available_node_types"]["local.cluster.node"]["max_workers"] == len(config["provider"]["worker_ips"])


def test_cluster_yaml_installs_pinned_torch_first_and_starts_with_token_auth():
    config = load_cluster_yaml()
    torch_version = pyproject_pins()["torch"][1]
    setup = config["setup_commands"]
    torch_step = next(i for i, c in enumerate(setup) if "torch==" in c)
    schedrl_step = next(i for i, c in enumerate(setup) if "install" in c and "~/schedrl" in c and "torch" not in c)
    assert f"torch=={torch_version}" in setup[torch_step]
    assert torch_step < schedrl_step
    for key in ("head_start_ray_commands", "worker_start_ray_commands"):
        start = next(c for c in config[key] if "ray start" in c)
        assert "RAY_AUTH_MODE=token" in start, f"{key}: every node must start in the same auth mode"
    # every local path the launcher syncs exists (the token is the user's, outside the repository)
    for local in config["file_mounts"].values():
        if not local.startswith("~"):
            assert (REPO / local).exists(), f"cluster.yaml mounts {local}, which is not in the repository"


@pytest.mark.integration  # bash -n
def test_slurm_script_is_valid_bash():
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash not installed")
    result = subprocess.run([bash, "-n", str(SLURM_SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

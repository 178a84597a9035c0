import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest



def scratch_dir(prefix: str) -> Path:
    """A temporary directory for this test process, removed when it exits (for what a module needs at import,
    before pytest's tmp_path exists: every xdist worker and every mutmut run would otherwise leave one)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, True)
    return path


# Hermetic models: no test sees a developer's fastembed cache (bge-small, cross-encoders), so
# `--embedder auto` means the offline model and a named cross-encoder is missing, everywhere.
os.environ["FASTEMBED_CACHE_PATH"] = str(scratch_dir("assay-empty-fastembed-cache-"))

# Property tests draw the same examples on every run (CI included): a failure reproduces, and `make test` cannot
# pass on one run and fail on the next. Set ASSAY_HYPOTHESIS_RANDOM=1 to explore new examples locally.
if not os.environ.get("ASSAY_HYPOTHESIS_RANDOM"):
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("assay", derandomize=True)
    _hypothesis_settings.load_profile("assay")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini"
DEMO = ROOT / "judgments" / "demo"


@pytest.fixture
def warehouse(tmp_path):
    from assay.store.warehouse import Warehouse

    wh = Warehouse.open(tmp_path / "wh.duckdb")
    yield wh
    wh.close()


@pytest.fixture(scope="session")
def mini_bm25(tmp_path_factory):
    """One BM25 run (chunk size 120) of the mini corpus and judgments in a warehouse of its own: (path, the
    run's record). Shared by every test that asks: copy the file before writing to it."""
    from assay.runs.runner import RunOptions, run
    from assay.store.warehouse import Warehouse

    path = tmp_path_factory.mktemp("mini-bm25") / "mini.duckdb"
    with Warehouse.open(path) as wh:
        record = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions("bm25", chunk_size=120))
    return path, record


SPARK_MASTER = "local[2]"


@pytest.fixture(scope="session")
def spark_root():
    """The one SparkSession every Spark test shares: the JVM starts once per test process (each xdist worker: keep
    Spark tests in few files), whichever module asks first. A lake opened with ``open_lake(path, engine="spark",
    spark_master=SPARK_MASTER)`` gets a child session of it, with views of its own."""
    from assay.store.lake.spark import spark_session

    # Tuned for many small queries over a few thousand rows, where compiling costs more CPU than it saves:
    # - the JIT's first tier only (on 2 cores: the JVM's start ~25 -> ~15 CPU-s, each measure query ~15% less),
    #   with the code cache tiered compilation would have: alone, that tier reserves 48 MB, which the parity
    #   module fills, and the JVM then turns its compiler off ("CodeCache is full") and runs ~10x slower;
    # - no Java code generated per query: Spark evaluates the same plan with its interpreted expressions (its own
    #   tests hold both paths to the same results), and a measure query costs ~35% less JVM CPU (54 -> 35 CPU-s
    #   for 20 queries, measured beside other load); users' lakes keep Spark's defaults;
    # - one shuffle partition: the data fits in one task;
    # - a 2 GB heap: the parity module caches every measure view of a lake holding a SciFact run, and Spark's
    #   default 1 GB ran out under a loaded CI (StackOverflowError in TaskMemoryManager.allocatePage, which retries
    #   a failed page allocation by recursion).
    return spark_session(spark_master=SPARK_MASTER, **{
        "spark.driver.memory": "2g",
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m",
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        "spark.sql.shuffle.partitions": "1",
    })


@pytest.fixture
def mini_corpus():
    return MINI / "corpus"


@pytest.fixture
def mini_judgments():
    return MINI / "judgments.jsonl"


def pytest_collection_modifyitems(config, items):
    """Under mutmut, the cheapest modules first (_cheapest_first); in an xdist worker, the slowest first
    (_slowest_first). Otherwise the order pytest collected."""
    if "__mutmut_" in os.environ.get("MUTANT_UNDER_TEST", ""):
        _cheapest_first(items)
    elif hasattr(config, "workerinput"):
        _slowest_first(items)


def _slowest_first(items):
    """Under pytest-xdist with --dist loadfile (the Makefile), each test file is one unit of work, handed to
    the workers in the order collected (--no-loadscope-reorder). The files holding tests marked slow go first,
    then the others by number of tests, most first, so that the last file to start is a short one and no worker
    waits long for the other at the end. Every worker computes the same order, as xdist requires; which tests
    run is unchanged, and a file's tests keep their order."""
    def module(item):
        return item.nodeid.split("::", 1)[0]

    slow: set[str] = set()
    count: dict[str, int] = {}
    for item in items:
        count[module(item)] = count.get(module(item), 0) + 1
        if item.get_closest_marker("slow") is not None:
            slow.add(module(item))
    items.sort(key=lambda item: (module(item) not in slow, -count[module(item)]))  # stable


def _cheapest_first(items):
    """Under mutmut, with a mutant applied (MUTANT_UNDER_TEST names it), run the cheapest test modules first.

    mutmut stops at the first failing test (-x), but hands its tests over in no particular order, so a mutant
    that a 0.1 s test kills could first wait through 20 s ones. Whole modules move, in order of their tests'
    total time from mutmut's last full run (mutants/mutmut-stats.json), so module fixtures are built once; which
    tests run, and so which mutants die, is unchanged. Outside mutmut this does nothing."""
    import json

    try:  # mutmut runs the tests from its copy of the tree, mutants/, where it keeps the file
        durations = json.loads(Path("mutmut-stats.json").read_text(encoding="utf-8"))["duration_by_test"]
    except (OSError, ValueError, KeyError):
        return
    cost: dict[str, float] = {}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        cost[module] = cost.get(module, 0.0) + durations.get(item.nodeid, 0.0)
    items.sort(key=lambda item: cost[item.nodeid.split("::", 1)[0]])  # stable: a module keeps its own order


@pytest.fixture
def small_disk(tmp_path):
    """``small_disk(kib)``: a real file system of ``kib`` KiB (tmpfs) mounted under tmp_path, so a write runs out of
    space (ENOSPC) as on a full disk. Skips where this process may not mount (it needs root's CAP_SYS_ADMIN)."""
    import subprocess

    mounted = []

    def mount(kib: int) -> Path:
        import shutil

        where = tmp_path / f"small-{len(mounted)}"
        where.mkdir()
        if shutil.which("mount") is None:
            pytest.skip("no mount command here; a full disk is tested where one can be mounted")
        made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k,mode=1777", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"cannot mount a small file system here ({made.stderr.strip() or made.returncode}); a full "
                        "disk is tested where one can be mounted")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", str(where)], capture_output=True)

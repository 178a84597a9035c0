"""The lake on a Spark standalone cluster, not only `local[*]`: a master and a worker started here on loopback
(pyspark's own `spark-class`, the same processes `start-master.sh` and `start-worker.sh` run), and `assay lake`
commands in their own processes given `--spark-master spark://...`. Their output equals the DuckDB engine's, byte
for byte: the driver plans, the executor (a JVM the worker starts) reads the lake's Parquet and computes, and the
rows travel back over the network. On a cluster the lake must be at the same path for every executor; here it is
one machine.

Never skipped: it needs Java 17 and pyspark, as the parity module does.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli
from conftest import DEMO

pytestmark = pytest.mark.slow  # four JVMs: the master, the worker, its executor, the driver
STARTED = re.compile(r"Successfully started service 'sparkMaster' on port (\d+)")
WAIT = 240  # seconds for a JVM to say it is up: generous, for a loaded machine


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def start(log: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_WORKER_DIR": str(log.parent / "work"), "SPARK_NO_DAEMONIZE": "1"}
    return subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def wait_for(proc: subprocess.Popen, log: Path, pattern: re.Pattern) -> re.Match:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = pattern.search(log.read_text(errors="replace"))
        if found:
            return found
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"{log.name}: not up after {WAIT} s (exit {proc.poll()}):\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """spark://127.0.0.1:PORT with one worker (1 core, 1 GB) registered."""
    base = tmp_path_factory.mktemp("spark-cluster")
    procs = []
    try:
        master_log = base / "master.log"
        procs.append(start(master_log, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                           "--port", "0", "--webui-port", "0"))
        port = wait_for(procs[0], master_log, STARTED).group(1)
        url = f"spark://127.0.0.1:{port}"
        worker_log = base / "worker.log"
        procs.append(start(worker_log, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                           "--cores", "1", "--memory", "1g", "--webui-port", "0", url))
        wait_for(procs[1], worker_log, re.compile(r"Successfully registered with master"))
        yield url
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """Two demo runs (chunks of 800 and 400 characters) in a lake."""
    lake = tmp_path_factory.mktemp("cluster-lake") / "lake"
    for extra in ([], ["--chunk-size", "400"]):
        result = CliRunner().invoke(cli, ["run", "--lake", str(lake), "--corpus", str(DEMO / "corpus"),
                                          "--judgments", str(DEMO / "judgments.jsonl"), *extra])
        assert result.exit_code == 0, result.output
    return lake


# The tuning of conftest's shared session (spark_root: the JIT's first tier, interpreted expressions, one shuffle
# partition; the data fits in one task), for the driver and for the executor the worker starts.
JIT = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
TUNING = {"spark.sql.shuffle.partitions": "1", "spark.sql.codegen.wholeStage": "false",
          "spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.driver.extraJavaOptions": JIT,
          "spark.executor.extraJavaOptions": JIT}


def test_a_standalone_cluster_reports_computes_and_follows_history_as_duckdb_does(cluster, lake):
    # One driver process for the three reads: `lake compute` with a measure no run stored (P@3: its SQL runs on the
    # executor over the cached views, as `lake compute` caches them), `lake history`, and the report of a run
    script = (
        "import json, sys\n"
        "from assay.store.lake import open_lake\n"
        "from assay.measures.registry import parse_measure\n"
        "from assay.measures.run_means import run_means\n"
        "from assay.present.report import build_report\n"
        "from assay.verdicts.regression import history\n"
        "cluster = {'spark_master': sys.argv[3], **json.loads(sys.argv[4])} if len(sys.argv) > 3 else {}\n"
        "lake = open_lake(sys.argv[1], *sys.argv[2:3], **cluster)\n"
        "if cluster:\n"
        "    lake.cache_views()\n"
        "runs = [r for r, in lake.con.execute('SELECT run_id FROM complete_runs ORDER BY run_id').fetchall()]\n"
        "out = {'master': getattr(getattr(lake, 'session', None), 'sparkContext', None) and "
        "lake.session.sparkContext.master,\n"
        "       'compute': run_means(lake, [parse_measure(m) for m in ('nDCG@10', 'SpanRecall@1000tok', 'P@3')]),\n"
        "       'history': history(lake, 'bm25', 'nDCG@10', None),\n"
        "       'report': build_report(lake, runs[-1])}\n"
        "print(json.dumps(out, default=str, sort_keys=True))\n"
    )
    on_duck = run_script(script, str(lake))
    on_cluster = run_script(script, str(lake), "spark", cluster, json.dumps(TUNING))
    assert on_cluster["master"] == cluster and on_duck["master"] is None
    assert len(on_duck["compute"]) == 2 * 5 and all(r["n"] for r in on_duck["compute"])  # 2 runs, 5 levels
    for part in ("compute", "history", "report"):
        assert on_cluster[part] == on_duck[part], part


def run_script(script: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])

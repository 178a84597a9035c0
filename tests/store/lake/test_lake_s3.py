"""A lake on an S3-compatible object store: `assay run --lake s3://...` and every `assay lake` command against a
real S3-protocol server on loopback (moto's standalone server, tests/store/lake/s3_server.py), started and stopped
here. The same runs read from the store and from a local copy give the same output; two writers at once both
land; a writer killed mid-run leaves no visible run and a later writer removes what it left; an unsupported
scheme, missing credentials, an unreachable endpoint and a missing bucket are one line each, before any work."""

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

pytest.importorskip("moto.server", reason="moto[server] (requirements-test.lock) runs the S3 server these tests use")

from assay.cli import cli  # noqa: E402
from assay.store.lake import PARTITION_FILE  # noqa: E402
from assay.store.lake.location import lake_location  # noqa: E402
from assay.store.lake.reader import visible_runs  # noqa: E402
from assay.store.lake.writer import PAUSE_VAR, collect_orphans  # noqa: E402
from conftest import MINI  # noqa: E402
from s3_server import BUCKET, aws, s3, s3_server  # noqa: E402,F401  (aws, s3: fixtures)

pytestmark = pytest.mark.slow  # a real S3 server on loopback, every request through it: `make test` runs them, `make check` does not

HANG_S = 600  # a bound no loaded machine reaches while a process works, never a measure of its speed
# every table a plain BM25 run of the mini set writes
RUN_WRITES = {"runs", "run_queries", "hits", "run_stages", "stage_latency", "measure_values", "interval_memo"}
# and the shared parts of its corpus, chunk set, judgments and tokenizer, once per content key (_shared/<table>/)
SHARED_WRITES = {"corpora", "documents", "chunk_sets", "chunks", "judgment_sets", "queries", "judgment_gold",
                 "gold_spans", "tokenizers", "doc_tokens", "chunk_tokens"}


def child_env(s3, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {**env, **s3.env, **extra}


def start(lake, cwd, env, *extra, pause=None):
    """A real `assay run --lake LAKE` of the mini set; with ``pause`` it sleeps that long before its `runs`
    partition (the commit) is written."""
    env = {**env, **({PAUSE_VAR: str(pause)} if pause else {})}
    return subprocess.Popen([sys.executable, "-m", "assay", "run", "--lake", str(lake), "--corpus",
                             str(MINI / "corpus"), "--judgments", str(MINI / "judgments.jsonl"), *extra], cwd=cwd,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))


def finish(proc) -> str:
    out, err = proc.communicate(timeout=HANG_S)
    assert proc.returncode == 0, err
    return out.strip()


def run_ids_in(keys) -> set[str]:
    """The run ids any table holds objects of, committed or not."""
    return {k.split("/")[1].removeprefix("run_id=") for k in keys if k.count("/") == 2 and not k.startswith("_")}


def waiting(proc, s3, lake, known=()) -> str:
    """Wait until ``proc`` has written its tables and sleeps before its commit; its run id (``known``: the runs
    already there)."""
    deadline = time.monotonic() + HANG_S
    while not (ids := run_ids_in(s3.keys(lake)) - set(known)):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the writer never wrote an object"
        time.sleep(0.05)
    (run_id,) = ids
    while f"interval_memo/run_id={run_id}/{PARTITION_FILE}" not in s3.keys(lake):  # the last table before `runs`
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the writer never reached its commit"
        time.sleep(0.05)
    return run_id


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def lake_outputs(lake, run_ids) -> dict[str, str]:
    """What `assay lake` runs, report, history and compute print for ``lake``, with the lake's name taken out."""
    commands = {
        "runs": ["runs", lake, "--format", "json"],
        "report": ["report", lake, *run_ids, "--format", "json"],
        "history": ["history", lake, "--metric", "nDCG@10", "--pipeline", "bm25", "--format", "json"],
        "compute": ["compute", lake, "-m", "nDCG@10", "-m", "Success@3", "-m", "R@10", "--format", "json"],
    }
    outputs = {}
    for name, args in commands.items():
        result = invoke("lake", *args)
        assert result.exit_code == 0, (name, result.output)
        outputs[name] = result.output.replace(str(lake), "LAKE")
    return outputs


@pytest.mark.slow  # two real runs, eight reads
def test_runs_written_to_s3_read_as_the_same_runs_copied_to_a_local_lake(aws, tmp_path):
    from pyarrow import fs as pafs

    lake = aws.lake()
    env = child_env(aws)
    run_ids = [finish(start(lake, tmp_path, env, "--chunk-size", str(size))) for size in (100, 140)]
    assert visible_runs(lake) == sorted(run_ids)
    keys = aws.keys(lake)
    for run_id in run_ids:
        assert {k.split("/")[0] for k in keys if f"/run_id={run_id}/" in k} == RUN_WRITES
    shared = [k for k in keys if k.startswith("_shared/")]
    assert all(k.endswith("/" + PARTITION_FILE) for k in keys if k not in shared)  # no staging, no other marker
    assert {k.split("/")[1] for k in shared} == SHARED_WRITES
    # one corpus, one set of judgments: one part each; two chunk sizes: two chunk sets
    assert sorted(k.split("/")[1] for k in shared if k.split("/")[1] in ("documents", "queries", "chunks")) == \
        ["chunks", "chunks", "documents", "queries"]
    assert not (tmp_path / "s3:").exists()
    local = tmp_path / "local-lake"
    pafs.copy_files(lake.removeprefix("s3://"), str(local), source_filesystem=aws.fs(),
                    destination_filesystem=pafs.LocalFileSystem())
    on_s3, on_disk = lake_outputs(lake, run_ids), lake_outputs(local, run_ids)
    assert on_s3 == on_disk
    assert sorted(r["run_id"] for r in json.loads(on_s3["runs"])) == sorted(run_ids)
    computed = json.loads(on_s3["compute"])
    assert {r["run_id"] for r in computed} == set(run_ids) and all(r["value"] is not None for r in computed)


@pytest.mark.slow  # four real writers
def test_two_writers_at_once_both_land_and_one_writing_is_never_half_visible(aws, tmp_path):
    lake = aws.lake()
    env = child_env(aws)
    together = [start(lake, tmp_path, env, "--chunk-size", str(size)) for size in (100, 120)]
    both = sorted(finish(p) for p in together)
    assert visible_runs(lake) == both
    slow = start(lake, tmp_path, env, pause=HANG_S)
    try:
        slow_run = waiting(slow, aws, lake, known=both)
        assert visible_runs(lake) == both  # its tables are written, its commit is not: not a run yet
        fast = finish(start(lake, tmp_path, env, "--chunk-size", "140"))
        assert visible_runs(lake) == sorted(both + [fast])
        assert slow_run in run_ids_in(aws.keys(lake))  # the other writer left a live writer's objects alone
    finally:
        slow.send_signal(signal.SIGTERM)
        out, err = slow.communicate(timeout=HANG_S)
    assert (slow.returncode, out) == (143, "")
    assert err.splitlines()[-1] == "terminated (SIGTERM); nothing was written"
    assert slow_run not in run_ids_in(aws.keys(lake))  # a stopped writer deletes what it wrote
    result = invoke("lake", "runs", lake, "--format", "json")
    assert result.exit_code == 0, result.output
    assert sorted(r["run_id"] for r in json.loads(result.output)) == sorted(both + [fast])


@pytest.mark.slow  # two real writers
def test_a_killed_writer_leaves_no_visible_run_and_a_later_writer_removes_its_objects(aws, tmp_path):
    lake = aws.lake()
    env = child_env(aws)
    killed = start(lake, tmp_path, env, pause=HANG_S)
    dead_run = waiting(killed, aws, lake)
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=HANG_S)
    assert killed.returncode == -signal.SIGKILL
    left = [k for k in aws.keys(lake) if f"/run_id={dead_run}/" in k]
    assert left and not any(k.startswith("runs/") for k in left)  # written, never committed
    assert visible_runs(lake) == []
    result = invoke("lake", "runs", lake, "--format", "json")
    assert (result.exit_code, json.loads(result.output)) == (0, [])
    # within the grace period (an hour by default) it may be a slow writer on another machine: kept
    assert collect_orphans(lake_location(lake)) == []
    assert [k for k in aws.keys(lake) if not k.startswith("_shared/")] == sorted(left)  # (its shared parts stay)
    (tmp_path / "assay.toml").write_text("[lake]\norphan_grace_s = 0\n", encoding="utf-8")
    later = finish(start(lake, tmp_path, env))
    assert run_ids_in(aws.keys(lake)) == {later} and visible_runs(lake) == [later]


@pytest.mark.parametrize("url", ["gs://bucket/lake", "http://127.0.0.1:9/lake", "s3a://bucket/lake"])
def test_an_unsupported_scheme_is_refused_in_one_line_before_any_work(tmp_path, monkeypatch, url):
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "--lake", url, "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl")
    scheme = url.split(":")[0]
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"error: lake {url}: {scheme}:// is not supported" + (
            " (write s3:// for an S3 lake; Spark's s3a is used for it where needed)" if scheme == "s3a" else "")
        + "; a lake is a local directory or s3://bucket/prefix (any S3-compatible store, its endpoint in "
          "AWS_ENDPOINT_URL or [lake] endpoint); nothing was run"]
    assert list(tmp_path.iterdir()) == []  # no directory named gs: or http:
    read = invoke("lake", "runs", url)
    assert read.exit_code == 1 and read.output.splitlines() == result.output.splitlines()


def test_missing_credentials_are_one_line_before_any_work(aws, tmp_path, monkeypatch):
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    half = invoke("lake", "runs", aws.lake())
    assert half.exit_code == 1 and half.output.splitlines() == [
        f"error: lake {half.output.split()[2][:-1]}: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not; "
        "set both (and AWS_SESSION_TOKEN for temporary credentials); nothing was run"]
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    lake = aws.lake()
    env = {k: v for k, v in child_env(aws).items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    proc = start(lake, tmp_path, env)
    out, err = proc.communicate(timeout=HANG_S)
    line = (f"error: lake {lake}: no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
            "AWS_SESSION_TOKEN for temporary ones), or AWS_PROFILE; nothing was run")
    assert (proc.returncode, out, err.splitlines()) == (1, "", [line])
    read = invoke("lake", "report", lake)
    assert read.exit_code == 1 and read.output.splitlines() == [line]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once it is closed


def test_an_unreachable_endpoint_is_named_in_one_line_within_seconds(aws, tmp_path, monkeypatch):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    lake = aws.lake()
    began = time.monotonic()
    proc = start(lake, tmp_path, child_env(aws, AWS_ENDPOINT_URL=endpoint))
    out, err = proc.communicate(timeout=HANG_S)
    assert (proc.returncode, out) == (1, "")
    (line,) = err.splitlines()
    assert line.startswith(f"error: lake {lake}: cannot reach the object store at {endpoint} (")
    assert line.endswith("); check AWS_ENDPOINT_URL or [lake] endpoint, and that the store is up; nothing was done")
    assert "Traceback" not in err
    read = invoke("lake", "history", lake, "--metric", "nDCG@10")
    assert read.exit_code == 1 and read.output.startswith(f"error: lake {lake}: cannot reach the object store at ")
    assert len(read.output.splitlines()) == 1
    assert time.monotonic() - began < HANG_S / 4  # seconds of connect timeouts and few retries, not the SDK's minutes


def test_a_missing_bucket_is_one_line_before_any_work(aws, tmp_path):
    lake = f"s3://no-such-{BUCKET}/lake"
    proc = start(lake, tmp_path, child_env(aws))
    out, err = proc.communicate(timeout=HANG_S)
    assert (proc.returncode, out) == (1, "")
    assert err.splitlines() == [f"error: lake {lake}: no bucket no-such-{BUCKET} at {aws.endpoint}; create it first "
                                "(assay never creates buckets); nothing was run"]
    read = invoke("lake", "runs", lake)
    assert read.exit_code == 1 and read.output.splitlines() == [
        f"error: no lake at {lake}: no object under that prefix; `assay run --lake {lake}` writes one"]


def test_a_lake_setting_holding_a_secret_is_refused(aws, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "assay.toml").write_text('[lake]\nendpoint = "http://x"\nsecret_access_key = "s"\n', encoding="utf-8")
    result = invoke("lake", "runs", aws.lake())
    assert result.exit_code == 1 and result.output.splitlines() == [
        "error: [lake] secret_access_key in assay.toml: credentials never go in the file; set AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) in the environment instead"]


def test_the_lake_settings_give_endpoint_and_region_and_the_environment_comes_first(aws, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    monkeypatch.delenv("AWS_REGION")
    settings = {"endpoint": aws.endpoint, "region": "eu-west-3"}
    location = lake_location(aws.lake(), settings)
    assert (location.endpoint, location.region) == (aws.endpoint, "eu-west-3")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    assert (lake_location(aws.lake(), settings).endpoint, lake_location(aws.lake(), settings).region) == (
        "http://127.0.0.1:1", "ap-south-1")
    # the settings' endpoint reaches the store: a run written through it is read back
    (tmp_path / "assay.toml").write_text(f'[lake]\nendpoint = "{aws.endpoint}"\n', encoding="utf-8")
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3")
    lake = aws.lake()
    env = {k: v for k, v in child_env(aws).items() if k != "AWS_ENDPOINT_URL"}
    run_id = finish(start(lake, tmp_path, env))
    result = invoke("lake", "runs", lake, "--format", "json")
    assert result.exit_code == 0 and [r["run_id"] for r in json.loads(result.output)] == [run_id]


@pytest.mark.slow  # a JVM
def test_spark_without_the_s3_connector_says_what_to_add_before_reading(aws, spark_root):
    import re

    from conftest import SPARK_MASTER

    lake = aws.lake()
    with aws.fs().open_output_stream(f"{lake.removeprefix('s3://')}/runs/run_id=x/{PARTITION_FILE}") as out:
        out.write(b"not read: the connector is looked for first")
    result = invoke("lake", "runs", lake, "--engine", "spark", "--spark-master", SPARK_MASTER)
    assert result.exit_code == 1, result.output
    (line,) = result.output.splitlines()
    assert re.fullmatch(
        re.escape(f"error: lake {lake}: this Spark cannot read s3:// (no S3 connector: "
                  "org.apache.hadoop.fs.s3a.S3AFileSystem is not on its classpath); add spark.jars.packages="
                  "org.apache.hadoop:hadoop-aws:") + r"\d+\.\d+\.\d+" + re.escape(
            " (this Spark's Hadoop version) to spark-defaults.conf, or the cluster's own S3 connector, or use "
            "--engine duckdb; nothing was read"), line), line


@pytest.mark.slow  # two real runs
def test_a_damaged_object_is_named_and_its_run_left_out(aws, tmp_path):
    lake = aws.lake()
    runs = [finish(start(lake, tmp_path, child_env(aws), "--chunk-size", str(size))) for size in (100, 140)]
    with aws.fs().open_output_stream(f"{lake.removeprefix('s3://')}/hits/run_id={runs[0]}/{PARTITION_FILE}") as out:
        out.write(b"PAR1 not parquet at all")  # overwritten in place, as a broken upload tool might
    file = f"{lake}/hits/run_id={runs[0]}/{PARTITION_FILE}"
    result = invoke("lake", "runs", lake, "--format", "json")
    assert result.exit_code == 0, result.output
    warning, *rest = result.output.splitlines()
    assert warning.startswith(f"warning: run {runs[0]} left out: {file} is not a readable Parquet file (")
    assert "Traceback" not in result.output
    assert [r["run_id"] for r in json.loads("\n".join(rest))] == [runs[1]]
    report = invoke("lake", "report", lake, runs[1])
    assert report.exit_code == 1 and report.output.startswith(f"error: lake {lake}: run {runs[0]} cannot be read: "
                                                              f"{file} is not a readable Parquet file (")


def test_orphans_are_removed_only_past_the_grace_period_and_committed_runs_never(aws):
    import pyarrow as pa
    import pyarrow.parquet as pq

    lake = aws.lake()
    root, fs = lake.removeprefix("s3://"), aws.fs()
    rows = pa.table({"run_id": ["r"]})
    for table, run_id in [("hits", "dead"), ("chunks", "dead"), ("hits", "done"), ("runs", "done")]:
        pq.write_table(rows, f"{root}/{table}/run_id={run_id}/{PARTITION_FILE}", filesystem=fs)
    location = lake_location(lake, {"orphan_grace_s": 600})
    newest = max(i.mtime.timestamp() for i in location.files("hits") + location.files("chunks"))
    assert collect_orphans(location, now=newest + 599) == []  # a writer that may still be writing
    removed = collect_orphans(location, now=newest + 601)
    assert sorted(removed) == [f"{root}/chunks/run_id=dead/{PARTITION_FILE}", f"{root}/hits/run_id=dead/{PARTITION_FILE}"]
    assert aws.keys(lake) == [f"hits/run_id=done/{PARTITION_FILE}", f"runs/run_id=done/{PARTITION_FILE}"]
    assert collect_orphans(location, now=newest + 10**6) == []  # a committed run is never an orphan

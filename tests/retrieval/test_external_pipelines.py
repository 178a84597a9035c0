"""External retrievers measured like built-in pipelines: a real subprocess, a real HTTP server on
loopback, a stored TREC run file, a Python callable and an entry-point plugin."""

import importlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

import assay
from assay.cli import cli
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from assay.runs.runner import RunOptions, run

# A toy retriever shared by every transport: documents ranked by how many question words they contain.
RANKER = '''
import json, pathlib, re, sys
DOCS = {p.relative_to(sys.argv[1]).as_posix(): p.read_text() for p in pathlib.Path(sys.argv[1]).rglob("*") if p.is_file()}
def rank(question, limit):
    words = set(re.findall(r"[a-z]+", question.lower())) - {"the", "a", "is", "what", "how", "do", "i", "to"}
    scored = [(sum(w in text.lower() for w in words), doc) for doc, text in DOCS.items()]
    scored = sorted([s for s in scored if s[0] > 0], key=lambda s: (-s[0], s[1]))[:limit]
    return [{"doc_id": doc, "score": float(score)} for score, doc in scored]
'''


@pytest.fixture
def ranker_script(tmp_path, mini_corpus):
    script = tmp_path / "ranker.py"
    script.write_text(RANKER + '''
for line in sys.stdin:
    q = json.loads(line)
    print(json.dumps({"results": rank(q["query"], q["limit"])}), flush=True)
''')
    return f"{sys.executable} {script} {mini_corpus}"


def _stages(wh, run_id):
    return dict(wh.con.execute("SELECT stage, COUNT(*) FROM hits WHERE run_id = ? GROUP BY stage",
                               [run_id]).fetchall())


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_command_pipeline_through_the_cli(tmp_path, mini_corpus, mini_judgments, ranker_script):
    wh = tmp_path / "w.duckdb"
    out = CliRunner().invoke(cli, ["run", "--pipeline", "command", "--command", ranker_script, "--corpus",
                                   str(mini_corpus), "--judgments", str(mini_judgments), "--warehouse", str(wh)],
                             catch_exceptions=False)
    assert out.exit_code == 0, out.output
    run_id = out.stdout.strip()
    report = json.loads(CliRunner().invoke(cli, ["report", run_id, "--format", "json", "--warehouse", str(wh)]).stdout)
    assert report["run"]["config"]["retrieval"]["external"]["kind"] == "command"
    assert [s["stage"] for s in report["run"]["stages"]] == ["external", "final"]
    row = next(r for r in report["metrics"] if (r["metric"], r["level"], r["slice"]) == ("Success@10", "doc", "all"))
    assert row["n"] == 5 and row["value"] > 0


def test_command_pipeline_failure_is_clear(tmp_path, mini_corpus, mini_judgments):
    out = CliRunner().invoke(cli, ["run", "--pipeline", "command", "--command", f"{sys.executable} -c 'import sys; sys.exit(3)'",
                                   "--corpus", str(mini_corpus), "--judgments", str(mini_judgments),
                                   "--warehouse", str(tmp_path / "w.duckdb")])
    assert out.exit_code == 5 and "exited with code 3" in out.stderr
    # no run id printed, and nothing stored: the command failed before the warehouse was opened
    assert out.stdout == "" and not (tmp_path / "w.duckdb").exists()


class _Handler(BaseHTTPRequestHandler):
    namespace: dict = {}

    def do_POST(self):
        q = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps(self.namespace["rank"](q["query"], q["limit"])).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_http_pipeline_against_a_loopback_server(warehouse, mini_corpus, mini_judgments):
    ns = {"sys": sys}
    sys_argv = sys.argv
    sys.argv = ["ranker", str(mini_corpus)]
    try:
        exec(RANKER, ns)
    finally:
        sys.argv = sys_argv
    _Handler.namespace = ns
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/search"
        rec = run(warehouse, mini_corpus, mini_judgments, RunOptions("http", url=url))
    finally:
        server.shutdown()
    assert rec.config["retrieval"]["external"]["url"] == url
    assert set(_stages(warehouse, rec.run_id)) == {"external", "final"}
    # the doc-level ranking is exactly what the server returned
    first = warehouse.con.execute("SELECT doc_id FROM hits WHERE run_id = ? AND query_id = 'page-size' AND "
                                  "stage = 'final' ORDER BY rank", [rec.run_id]).fetchall()
    assert [d for d, in first] == [r["doc_id"] for r in ns["rank"]("what is the page size", 100)]


def test_trec_run_file_as_a_pipeline(warehouse, mini_corpus, mini_judgments, tmp_path):
    run_file = tmp_path / "my.run"
    run_file.write_text("page-size Q0 ops/faq.html 1 2.0 mine\npage-size Q0 storage/design.md 2 1.0 mine\n"
                        "wal-purpose Q0 storage/design.md 1 5.0 mine\n")
    rec = run(warehouse, mini_corpus, mini_judgments, RunOptions("trec-run", run_file=str(run_file)))
    rr = per_query(warehouse, rec.run_id, parse_measure("RR@10"))
    assert rr[("page-size", "doc")] == 0.5 and rr[("wal-purpose", "doc")] == 1.0 and rr[("cache-size", "doc")] == 0.0
    # whole-document results count at chunk level through the document's full span
    assert rr[("wal-purpose", "chunk")] == 1.0


def test_python_api_with_spans(tmp_path, mini_corpus, mini_judgments):
    design = (mini_corpus / "storage" / "design.md").read_text()
    start = design.index("WAL mode allows")

    def retriever(question, limit):
        if "write-ahead" in question:
            return [{"doc_id": "storage/design.md", "start": start, "end": start + 40, "score": 1.0}]
        return ["ops/backup.rst", ("storage/cache.txt", 0.5)]

    result = assay.evaluate(retriever, mini_judgments, mini_corpus, tmp_path / "w.duckdb")
    metrics = {(r["metric"], r["level"], r["slice"]): r["value"] for r in result["report"]["metrics"]}
    # hits at rank 1: wal-purpose (the span), restore and backup-readers (backup.rst, whole document)
    assert metrics[("Success@1", "chunk", "all")] == pytest.approx(3 / 5)
    assert result["report"]["run"]["config"]["retrieval"]["external"]["kind"] == "callable"
    from assay.store.warehouse import Warehouse

    with Warehouse.open(tmp_path / "w.duckdb", read_only=True) as wh:
        spans = wh.con.execute("SELECT c.start_char, c.end_char FROM hits h JOIN runs r USING (run_id) JOIN chunks c "
                               "ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id WHERE h.query_id = 'wal-purpose' "
                               "AND h.stage = 'final'").fetchall()
    assert spans == [(start, start + 40)]


PLUGIN = '''
class Fixed:
    def __init__(self, docs):
        self.docs = docs
    def config(self):
        return {"name": "fixed-plugin"}
    def search(self, query, limit, query_id=None):
        from assay.retrieval.external import parse_results
        return parse_results(["storage/design.md"], self.docs, "fixed-plugin")[:limit]
    def close(self):
        pass

def make(docs, **options):
    return Fixed(docs)
'''


def test_plugin_appears_as_a_pipeline(warehouse, mini_corpus, mini_judgments, tmp_path):
    site = tmp_path / "site"
    dist = site / "assay_pipe_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: assay-pipe-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[assay.retrievers]\nmy-retriever = assay_pipe_plugin_mod:make\n")
    (site / "assay_pipe_plugin_mod.py").write_text(PLUGIN)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        rec = run(warehouse, mini_corpus, mini_judgments, RunOptions("my-retriever"))
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("assay_pipe_plugin_mod", None)
        importlib.invalidate_caches()
    assert rec.config["pipeline"] == "my-retriever" and rec.config["retrieval"]["external"] == {"name": "fixed-plugin"}
    assert all(n == 1 for _, _, n in rec.query_rows)


def test_a_command_pipeline_never_sees_assay_credentials(tmp_path, monkeypatch, mini_corpus, mini_judgments):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-never-inherited-1")
    monkeypatch.setenv("HF_TOKEN", "hf-cli-never-inherited-2")
    monkeypatch.setenv("DATABASE_URL", "postgres://app:pw-never-inherited@db/prod")
    monkeypatch.setenv("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/never-inherited")
    monkeypatch.setenv("ASSAY_TEST_PASSED_A", "a")
    monkeypatch.setenv("ASSAY_TEST_PASSED_B", "b")
    names = tmp_path / "names.json"
    script = tmp_path / "names.py"
    script.write_text("import json, os, sys\njson.dump(sorted(os.environ), open(sys.argv[1], 'w'))\n"
                      "sys.stderr.write('key: ' + os.environ.get('OPENAI_API_KEY', 'absent'))\nsys.exit(3)\n")
    # names a pipeline passes come from --pass-env, or else from pass_env in assay.toml
    config = tmp_path / "assay.toml"
    config.write_text('[pipelines.mine]\nextends = "command"\npass_env = ["ASSAY_TEST_PASSED_B"]\n')
    for flags, passed in ((["--pipeline", "command", "--pass-env", "ASSAY_TEST_PASSED_A"], "ASSAY_TEST_PASSED_A"),
                          (["--pipeline", "mine", "--config", str(config)], "ASSAY_TEST_PASSED_B")):
        out = CliRunner().invoke(cli, ["run", *flags, "--command", f"{sys.executable} {script} {names}",
                                       "--corpus", str(mini_corpus), "--judgments", str(mini_judgments),
                                       "--warehouse", str(tmp_path / "w.duckdb")])
        assert out.exit_code == 5 and "exited with code 3" in out.stderr and "stderr ends: key: absent" in out.stderr
        seen = json.loads(names.read_text())
        assert "PATH" in seen and passed in seen
        for name in ("OPENAI_API_KEY", "HF_TOKEN", "DATABASE_URL", "SLACK_WEBHOOK_URL"):
            assert name not in seen, name
        assert ({"ASSAY_TEST_PASSED_A", "ASSAY_TEST_PASSED_B"} - {passed}).isdisjoint(seen)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_credentials_in_a_url_are_stored_and_shown_nowhere(tmp_path, monkeypatch, mini_corpus, mini_judgments):
    """A key in the URL's query or userinfo is sent (it is how the service authenticates) but never stored in
    runs.config, nor shown by runs, report or export; a server quoting the URL back has it redacted too."""
    from retrieval.answer.chat_server import ChatServer, raw, status

    from assay.store.warehouse import Warehouse

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    key, password = "sk-in-the-url-0123456789", "pw-in-the-url-4567"
    wh, out = tmp_path / "w.duckdb", tmp_path / "export"
    replies = [raw('["storage/design.md"]')] * 6 + [status(404, f'{{"error": "no route /search?api_key={key}"}}')]
    with ChatServer(replies, path=None) as server:
        url = server.url.replace("://", f"://svc:{password}@") + f"/search?api_key={key}&v=2"
        ran = CliRunner().invoke(cli, ["run", "--pipeline", "http", "--url", url, "--corpus", str(mini_corpus),
                                       "--judgments", str(mini_judgments), "--warehouse", str(wh)])
        failed = CliRunner().invoke(cli, ["run", "--pipeline", "http", "--url", url, "--corpus", str(mini_corpus),
                                          "--judgments", str(mini_judgments), "--warehouse", str(wh)])
        sent = [r["path"] for r in server.requests]
    assert ran.exit_code == 0, ran.output
    assert sent[0] == f"/search?api_key={key}&v=2"  # the key did go out
    assert failed.exit_code == 5 and "no route /search?api_key=***" in failed.stderr
    shown = f"http://***@127.0.0.1:{server.url.rsplit(':', 1)[1]}/search?api_key=***&v=***"
    assert f"HTTP retriever {shown} (" in failed.stderr
    run_id = ran.stdout.strip()
    with Warehouse.open(wh, read_only=True) as w:
        config = json.loads(w.con.execute("SELECT config FROM runs WHERE run_id = ?", [run_id]).fetchone()[0])
    assert config["settings"]["url"] == shown and config["retrieval"]["external"]["url"] == shown
    outputs = [ran.output, failed.output, json.dumps(config)]
    for args in (["report", run_id], ["report", run_id, "--format", "json"], ["runs", "--format", "json"]):
        done = CliRunner().invoke(cli, [*args, "--warehouse", str(wh)])
        assert done.exit_code == 0, done.output
        outputs.append(done.output)
    # a run stored before URLs were redacted: report and export show it redacted all the same
    with Warehouse.open(wh) as w:
        old = json.dumps({**config, "settings": {**config["settings"], "url": url}})
        w.con.execute("UPDATE runs SET config = ? WHERE run_id = ?", [old, run_id])
    for fmt in ("json", "csv"):
        done = CliRunner().invoke(cli, ["export", run_id, "--format", fmt, "--out", str(out / fmt), "--warehouse",
                                        str(wh)])
        assert done.exit_code == 0, done.output
        outputs += [p.read_text(encoding="utf-8") for p in (out / fmt).rglob("*") if p.is_file()]
    report = CliRunner().invoke(cli, ["report", run_id, "--format", "json", "--warehouse", str(wh)])
    assert json.loads(report.stdout)["run"]["config"]["settings"]["url"] == shown
    outputs.append(report.output)
    leaks = [o for o in outputs if key in o or password in o]
    assert leaks == []

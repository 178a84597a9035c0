"""The demo's HTML reports, built once per test session through the CLI, with the JSON each one shows.

Not a conftest.py: tests/ has no packages, so a second conftest module would shadow tests/conftest.py
for the `from conftest import ...` lines of the tests collected after it. Test modules import the
fixture: ``from demo_reports import reports``.

One warehouse holds the demo golden set run with BM25 as `assay demo` runs it (candidate depth
``assay.runs.demo.DEPTH``) and a two-point chunk-size sweep at that depth (400 and 800 characters, BM25), so a
BM25 history of three runs and a comparison of two chunk sizes. A second
warehouse holds a hostile corpus run hybrid (the offline MiniLM model in models/) with the extractive
answer stage: markup in a document's text, its file name, a question, a quote and a note, through every
stage and the answer. A third holds a BEIR collection imported with question ids a golden set file would
refuse (spaces, '|', quotes, '%', '#', markup, non-Latin script, one too long for the id column).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.runs.demo import DEPTH

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "judgments" / "demo"

SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=1">'
HOSTILE_DOC = "plugins/x<img src=x onerror=window.__pwned=1>.md"
HOSTILE_DOCS = {
    "plugins/widget.md": (
        "# The legacy widget\n\n"
        f"The legacy widget embeds {SCRIPT} in every page it renders.\n"
        f"Its fallback image is written as {IMG} and must never load.\n\n"
        "Render untrusted plugins with the safe renderer, which prints markup as text.\n"),
    HOSTILE_DOC: (
        "# Safe renderer\n\n"
        "The safe renderer escapes every angle bracket, so a plugin's markup is shown and never run.\n"),
}
HOSTILE_JUDGMENTS = [
    {"query_id": "xss-img", "query": f"How is the fallback image {IMG} written?",
     "gold": [{"doc": "plugins/widget.md", "quote": f"written as {IMG} and must never load"}]},
    {"query_id": "xss-renderer", "query": "What does the safe renderer do with a plugin's markup?",
     "gold": [{"doc": HOSTILE_DOC, "quote": "escapes every angle bracket"}]},
    {"query_id": "xss-script", "query": f"Which page script does the widget embed? {SCRIPT}",
     "gold": [{"doc": "plugins/widget.md", "quote": f"embeds {SCRIPT} in every page"}], "notes": SCRIPT},
]


# Question ids a golden set file refuses but an imported collection (BEIR, TREC) may hold: the anchors and links
# of the page must carry them all. One is longer than the id column's 20rem, to be cut with an ellipsis.
ODD_QUESTIONS = {
    "how deep | tulips": ("how deep are tulips planted", "tulips"),
    'the "rose" question': ("when do roses need pruning", "roses"),
    "garlic — ünïcødé 日本": ("which way up do garlic cloves go", "garlic"),
    "100% basil #frost <b>": ("what kills basil", "basil"),
    "it's a-very-long-question-identifier-that-nobody-would-want-to-read-over-four-lines-of-a-table":
        ("when are tulips planted", "tulips"),
}
ODD_DOCS = {"tulips": "Tulips are planted ten centimetres deep in autumn.",
            "roses": "Roses need pruning in early spring before the buds open.",
            "garlic": "Garlic cloves go in the ground pointy end up.",
            "basil": "Basil dies at the first frost; bring it indoors before then."}


def _odd_collection(root: Path) -> Path:
    """A BEIR directory whose question ids hold spaces, '|', quotes, '%', '#', markup and non-Latin script."""
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n"
                                               for k, v in ODD_DOCS.items()))
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": q}) + "\n"
                                                for k, (q, _) in ODD_QUESTIONS.items()))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{k}\t{doc}\t1\n" for k, (_, doc) in ODD_QUESTIONS.items()))
    return root


@dataclass
class Reports:
    """HTML files by kind (run, runs, sweep, history, hostile, odd) and what `--format json` says of the same."""

    html: dict[str, Path] = field(default_factory=dict)
    json: dict[str, dict] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)  # bm25, bm25-400, hostile -> run id
    questions: list[dict] = field(default_factory=list)  # the demo judgments, one dict per question
    hostile_questions: list[dict] = field(default_factory=lambda: list(HOSTILE_JUDGMENTS))
    corpus: Path = DEMO / "corpus"
    hostile_corpus: Path | None = None


def assay(*args) -> str:
    """Run one assay command in-process; its stdout. Fails the session with stderr on a non-zero exit."""
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, f"assay {' '.join(map(str, args))} exited {result.exit_code}:\n{result.stderr}"
    return result.stdout


def _hostile_corpus(root: Path) -> tuple[Path, Path]:
    corpus = root / "corpus"
    for name, text in HOSTILE_DOCS.items():
        path = corpus / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    judgments = root / "judgments.jsonl"
    common = {"category": "normal", "form": "match", "hard_class": "normal"}
    judgments.write_text("".join(json.dumps({**common, **j}) + "\n" for j in HOSTILE_JUDGMENTS))
    return corpus, judgments


@pytest.fixture(scope="session")
def reports(tmp_path_factory) -> Reports:
    return build_reports(tmp_path_factory.mktemp("reports"))


def build_reports(out: Path) -> Reports:
    """Both warehouses, every report as HTML and JSON, under ``out``."""
    wh = out / "demo.duckdb"
    demo = ["--corpus", DEMO / "corpus", "--judgments", DEMO / "judgments.jsonl", "--depth", DEPTH, "--warehouse", wh]
    r = Reports(questions=[json.loads(line) for line in (DEMO / "judgments.jsonl").read_text().splitlines()
                           if line.strip()])
    r.runs["bm25"] = assay("run", *demo).strip()
    sweep = json.loads(assay("sweep", "--size", "400", "--size", "800", "--format", "json", *demo))
    r.runs["bm25-400"] = next(p["run_id"] for p in sweep["points"] if p["size"] == 400)

    jobs = {
        "run": ["report", r.runs["bm25"], "--warehouse", wh],
        "runs": ["report", r.runs["bm25"], r.runs["bm25-400"], "--warehouse", wh],
        "sweep": ["report", "--sweep", "latest", "--warehouse", wh],
        # the sweep's points are left out of a pipeline's history unless asked: asked, so the page has three
        "history": ["history", "--pipeline", "bm25", "--metric", "nDCG@10", "--include", "sweep", "--warehouse", wh],
    }

    hostile_wh = out / "hostile.duckdb"
    r.hostile_corpus, hostile_judgments = _hostile_corpus(out / "hostile")
    r.runs["hostile"] = assay("run", "--pipeline", "hybrid", "--corpus", r.hostile_corpus,
                              "--judgments", hostile_judgments, "--generator", "extractive",
                              "--warehouse", hostile_wh).strip()
    jobs["hostile"] = ["report", r.runs["hostile"], "--warehouse", hostile_wh]

    odd_wh = out / "odd.duckdb"
    assay("import", "beir", _odd_collection(out / "odd"), "--warehouse", odd_wh)
    r.runs["odd"] = assay("run", "--corpus", "@odd", "--judgments", "@odd/test", "--warehouse", odd_wh).strip()
    jobs["odd"] = ["report", r.runs["odd"], "--warehouse", odd_wh]

    for kind, args in jobs.items():
        r.json[kind] = json.loads(assay(*args, "--format", "json"))
        r.html[kind] = out / f"{kind}.html"
        assay(*args, "--format", "html", "-o", r.html[kind])
    return r

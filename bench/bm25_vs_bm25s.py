"""assay's BM25 (tantivy) against bm25s, side by side: query time, end to end, nDCG@10 on SciFact and Vaswani.

    .venv/bin/pip install -r bench/requirements.txt
    .venv/bin/python bench/bm25_vs_bm25s.py [--repeats 3] [--passes 5] [--variants] [--src DIR] [--out FILE]

Prints one JSON object. Every figure is taken ``--repeats`` times; peers run
interleaved, and the load average is read before and after each repeat, so read
the ratios and their spread rather than the seconds.

- query: SciFact's 300 test questions at depth 100, in this process. Each repeat
  builds a fresh index for each side, times the first pass over the questions
  (what a run does) and then ``--passes`` more (the best and the median of
  those). assay's figure is ``BM25Index.search``: the analyzer, tantivy, and the
  ranking a run stores, as columns (each hit's position in the index's chunk
  table and its score: a ``Ranking``); "assay_hits" adds reading every hit of it
  as a ``Hit`` (chunk id, document id, score), what code that iterates the
  hits gets. bm25s's is tokenize + retrieve (arrays of corpus positions and
  scores); "bm25s_ids" adds turning those arrays into ranked (document id,
  score) lists, which any use of them for evaluation needs. Times are CPU
  (process_time) and wall.
- end_to_end: fresh processes. assay: ``assay import beir`` into a new
  warehouse, ``assay run --chunker document`` (BM25, depth 100) and ``assay
  report latest``; then ``run_again``, the same run once more (its token tables
  stored), reported apart and not in the total. ``--src DIR`` adds the same for
  the assay of another source tree, interleaved (before/after a change). bm25s: this file with ``--peer-script``: read the BEIR files,
  tokenize, index, retrieve the top 100 and score with pytrec_eval (nDCG@10,
  R@100, MAP, MRR). "bm25s_pieces" is the same script doing also the one piece
  of assay's work it otherwise leaves out, the token-budget measures' input:
  every document's word pieces with their offsets, from the budget's tokenizer
  (tokenizers' encode_batch); "ratio_*_same_work" compares assay with that.
  CPU is the children's user + system time.
- quality: nDCG@10 (and MAP) of each side's ranking at document level, both
  scored by pytrec_eval from the ranks as returned (each system's own tie order
  kept); the assay run of the last end-to-end repeat also gives assay's own SQL
  figure for SciFact, as a cross-check. bm25s runs as its MTEB baseline does:
  method "lucene", k1=1.5, b=0.75, its 33 English stop words, PyStemmer's
  Snowball English, tokens of two or more word characters. assay: tantivy
  k1=1.2, b=0.75 (fixed in tantivy), simple tokenizer (runs of letters and
  digits, one character and up; tokens over 40 characters dropped), lower case,
  Lucene's 33 English stop words, Snowball English.
- variants (``--variants``): nDCG@10 of analyzer and query variants on both
  collections, each side, to show what each setting is worth.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLLECTIONS = ROOT.parent / "shared" / "collections"
SCIFACT, VASWANI = COLLECTIONS / "scifact", COLLECTIONS / "vaswani"
PY = sys.executable
ASSAY = [PY, "-m", "assay"]
BM25S = {"method": "lucene", "k1": 1.5, "b": 0.75}


def load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def spread(values: list[float], digits: int = 3) -> dict:
    return {"min": round(min(values), digits), "median": round(statistics.median(values), digits),
            "max": round(max(values), digits)}


# ---------------------------------------------------------------- the collections, read once as a run sees them
def collection(name: str):
    """(chunks, [(query_id, question)], qrels) as assay imports and chunks them (whole documents)."""
    from assay.inputs.chunking import make_chunker
    from assay.store.imports import import_beir, import_trec
    from assay.store.collections import stored_corpus, stored_judgments
    from assay.store.warehouse import Warehouse

    with tempfile.TemporaryDirectory() as tmp, Warehouse.open(Path(tmp) / "w.duckdb") as wh:
        if name == "scifact":
            import_beir(wh, SCIFACT, "test", "scifact")
            judgments = "@scifact/test"
        else:
            import_trec(wh, VASWANI / "doc-text.trec", VASWANI / "query-text.trec", VASWANI / "qrels", "vaswani")
            judgments = "@vaswani"
        corpus = stored_corpus(wh, "@" + name)
        chunker = make_chunker("document")
        chunks = [c for d in corpus.documents for c in chunker.chunk(d.doc_id, d.text)]
        questions = [(j.query_id, j.query) for j in stored_judgments(wh, judgments).judgments]
    return chunks, questions, qrels(name)


def qrels(name: str) -> dict:
    out: dict = {}
    if name == "scifact":
        with open(SCIFACT / "qrels" / "test.tsv", encoding="utf-8") as f:
            next(f)
            for line in f:
                q, d, g = line.split()
                out.setdefault(q, {})[d] = int(g)
    else:
        with open(VASWANI / "qrels", encoding="utf-8") as f:
            for line in f:
                q, _, d, g = line.split()
                out.setdefault(q, {})[d] = int(g)
    return out


def evaluate(qrel: dict, ranked: dict) -> dict:
    """nDCG@10 and MAP of {query: [doc, ...]} rankings as given (scores from ranks, so no tie rule intervenes)."""
    import pytrec_eval

    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranked.items()}
    per = pytrec_eval.RelevanceEvaluator(qrel, {"ndcg_cut_10", "map"}).evaluate(run)
    n = len(qrel)  # a judged question without results counts as 0
    return {"nDCG@10": round(sum(v["ndcg_cut_10"] for v in per.values()) / n, 4),
            "MAP": round(sum(v["map"] for v in per.values()) / n, 4)}


# ---------------------------------------------------------------- the two retrievers, in this process
def assay_index(chunks, options=None):
    from assay.retrieval.bm25 import AnalyzerOptions, BM25Index

    return BM25Index(chunks, options or AnalyzerOptions())


class Bm25s:
    def __init__(self, chunks, token_pattern: str = r"(?u)\b\w\w+\b", **params):
        import bm25s
        import Stemmer

        self.bm25s, self.stemmer, self.pattern = bm25s, Stemmer.Stemmer("english"), token_pattern
        self.docs = [c.doc_id for c in chunks]
        tokens = bm25s.tokenize([c.text for c in chunks], stopwords="en", stemmer=self.stemmer, show_progress=False,
                                token_pattern=token_pattern)
        self.retriever = bm25s.BM25(**(BM25S | params))
        self.retriever.index(tokens, show_progress=False)

    def retrieve(self, questions: list[str], k: int):
        tokens = self.bm25s.tokenize(questions, stopwords="en", stemmer=self.stemmer, show_progress=False,
                                     token_pattern=self.pattern)
        return self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)

    def ranked(self, questions: list[str], k: int) -> list[list[tuple[str, float]]]:
        results, scores = self.retrieve(questions, k)
        docs = self.docs
        return [list(zip(map(docs.__getitem__, r.tolist()), s.tolist())) for r, s in zip(results, scores)]


def timed(fn) -> tuple[float, float]:
    c, w = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c, time.perf_counter() - w


def query_speed(repeats: int, passes: int, depth: int = 100) -> dict:
    chunks, qs, _ = collection("scifact")
    questions = [q for _, q in qs]
    sides = {"assay": [], "assay_hits": [], "bm25s": [], "bm25s_ids": []}
    index_s = {"assay": [], "bm25s": []}
    loads = []
    for rep in range(repeats):
        loads.append(load())
        c0 = time.process_time()
        a = assay_index(chunks)
        index_s["assay"].append(time.process_time() - c0)
        c0 = time.process_time()
        b = Bm25s(chunks)
        index_s["bm25s"].append(time.process_time() - c0)
        runs = {"assay": lambda: [a.search(q, depth) for q in questions],
                "assay_hits": lambda: [list(a.search(q, depth)) for q in questions],
                "bm25s": lambda: b.retrieve(questions, depth),
                "bm25s_ids": lambda: b.ranked(questions, depth)}
        order = list(runs) if rep % 2 == 0 else list(reversed(runs))  # who goes first alternates
        first = {name: timed(runs[name]) for name in order}
        later: dict = {name: [] for name in runs}
        for _ in range(passes):
            for name in order:
                later[name].append(timed(runs[name]))
        for name in runs:
            cpu = [c for c, _ in later[name]]
            sides[name].append({"first_cpu_s": round(first[name][0], 4), "first_wall_s": round(first[name][1], 4),
                                "best_cpu_s": round(min(cpu), 4), "median_cpu_s": round(statistics.median(cpu), 4),
                                "median_wall_s": round(statistics.median(w for _, w in later[name]), 4)})
        a.close()
        loads.append(load())

    def ratios(peer: str, key: str, side: str = "assay") -> dict:
        return spread([x[key] / y[key] for x, y in zip(sides[side], sides[peer])], 2)

    return {"questions": len(questions), "depth": depth, "passes_after_first": passes,
            "index_cpu_s": {k: spread(v) for k, v in index_s.items()},
            "per_repeat": sides,
            "ratio_assay_to_bm25s": {k: ratios("bm25s", k) for k in ("first_cpu_s", "best_cpu_s", "median_cpu_s",
                                                                     "first_wall_s", "median_wall_s")},
            "ratio_assay_to_bm25s_ids": {k: ratios("bm25s_ids", k) for k in ("first_cpu_s", "best_cpu_s",
                                                                             "median_cpu_s")},
            "ratio_assay_hits_to_bm25s_ids": {k: ratios("bm25s_ids", k, "assay_hits")
                                              for k in ("first_cpu_s", "best_cpu_s", "median_cpu_s")},
            "load_avg_seen": {"min": min(x[0] for x in loads), "max": max(x[0] for x in loads)}}


# ---------------------------------------------------------------- end to end, fresh processes
def peer_script(pieces: bool = False) -> None:
    """The bm25s peer end to end: read SciFact's BEIR files, index, retrieve, score with pytrec_eval. ``pieces``:
    then also the work behind assay's token-budget measures that the script does not do, the way a user of
    bm25s would do it: every document's word pieces, with their character offsets, from the tokenizer that
    defines the budget (the tokenizers package reading the file assay ships; no assay code)."""
    import bm25s
    import pytrec_eval
    import Stemmer

    ids, texts = [], []
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ids.append(d["_id"])
            texts.append(d["title"] + "\n" + d["text"])
    qrel = qrels("scifact")
    queries = {}
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            if q["_id"] in qrel:
                queries[q["_id"]] = q["text"]
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(**BM25S)
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    qids = list(queries)
    tokens = bm25s.tokenize([queries[q] for q in qids], stopwords="en", stemmer=stemmer, show_progress=False)
    results, scores = retriever.retrieve(tokens, k=100, show_progress=False, n_threads=1)
    run = {q: {ids[i]: float(s) for i, s in zip(r.tolist(), sc.tolist())} for q, r, sc in zip(qids, results, scores)}
    per = pytrec_eval.RelevanceEvaluator(qrel, {"ndcg_cut_10", "recall_100", "map", "recip_rank"}).evaluate(run)
    means = {m: round(sum(v[m] for v in per.values()) / len(per), 4)
             for m in ("ndcg_cut_10", "recall_100", "map", "recip_rank")}
    if pieces:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(ROOT / "src" / "assay" / "data" / "minilm-wordpiece-tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        means["word_pieces"] = sum(len(e.offsets) for e in tok.encode_batch(texts, add_special_tokens=False))
    print(json.dumps({"questions": len(per), **means}))


def child(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """(CPU s, wall s, stdout) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - w
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, done.stdout


def assay_end_to_end(tmp: Path, src: Path | None = None) -> tuple[dict, dict]:
    """import + run + report in a new warehouse, then ``run_again``: a second run, its token tables stored (not
    in the total). ``src``: the assay source tree to run (its ``src`` first on PYTHONPATH), else this one."""
    env = os.environ | {"ASSAY_WAREHOUSE": str(tmp / "w.duckdb"), "ASSAY_QUIET": "1"}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])
    run = ["run", "--corpus", "@scifact", "--judgments", "@scifact/test", "--chunker", "document"]
    steps, cpu, wall = {}, 0.0, 0.0
    for step, args in (("import", ["import", "beir", str(SCIFACT)]), ("run", run),
                       ("report", ["report", "latest", "--format", "json"]), ("run_again", run)):
        c, w, out = child(ASSAY + args, env)
        steps[step] = {"cpu_s": round(c, 2), "wall_s": round(w, 2)}
        if step != "run_again":
            cpu, wall = cpu + c, wall + w
        if step == "report":
            report = json.loads(out)
    return {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "steps": steps}, report


def report_ndcg(report: dict) -> float | None:
    """nDCG@10 at document level over all questions, from `assay report --format json`."""
    for row in report["metrics"]:
        if (row["metric"], row["level"], row["slice"]) == ("nDCG@10", "doc", "all"):
            return round(row["value"], 4)
    return None


def end_to_end(repeats: int, src: Path | None = None) -> dict:
    per, loads, sql = [], [], None
    for rep in range(repeats):
        loads.append(load())
        with tempfile.TemporaryDirectory() as tmp:
            sides = {}
            order = ["assay", "bm25s", "bm25s_pieces"] + (["assay_src"] if src is not None else [])
            for side in (order if rep % 2 == 0 else order[::-1]):
                if side == "assay":
                    sides["assay"], report = assay_end_to_end(Path(tmp) / "assay")
                    sql = report_ndcg(report)
                elif side == "assay_src":
                    sides["assay_src"], _ = assay_end_to_end(Path(tmp) / "src", src)
                else:
                    flags = ["--peer-script"] + (["--peer-pieces"] if side == "bm25s_pieces" else [])
                    c, w, out = child([PY, __file__, *flags], os.environ.copy())
                    sides[side] = {"cpu_s": round(c, 2), "wall_s": round(w, 2), **json.loads(out)}
        sides["ratio_cpu"] = round(sides["assay"]["cpu_s"] / sides["bm25s"]["cpu_s"], 2)
        sides["ratio_wall"] = round(sides["assay"]["wall_s"] / sides["bm25s"]["wall_s"], 2)
        sides["ratio_cpu_same_work"] = round(sides["assay"]["cpu_s"] / sides["bm25s_pieces"]["cpu_s"], 2)
        sides["ratio_wall_same_work"] = round(sides["assay"]["wall_s"] / sides["bm25s_pieces"]["wall_s"], 2)
        if src is not None:
            sides["ratio_cpu_src"] = round(sides["assay_src"]["cpu_s"] / sides["bm25s"]["cpu_s"], 2)
        per.append(sides)
        loads.append(load())
    sides = [s for s in ("assay", "assay_src", "bm25s", "bm25s_pieces") if s in per[0]]
    return {"per_repeat": per, "ratio_cpu": spread([p["ratio_cpu"] for p in per], 2),
            "ratio_wall": spread([p["ratio_wall"] for p in per], 2),
            "ratio_cpu_same_work": spread([p["ratio_cpu_same_work"] for p in per], 2),
            "ratio_wall_same_work": spread([p["ratio_wall_same_work"] for p in per], 2),
            **({"ratio_cpu_src": spread([p["ratio_cpu_src"] for p in per], 2)} if src is not None else {}),
            "cpu_s": {side: spread([p[side]["cpu_s"] for p in per], 2) for side in sides},
            "steps_cpu_s": {side: {step: spread([p[side]["steps"][step]["cpu_s"] for p in per], 2)
                                   for step in per[0][side]["steps"]} for side in sides if side.startswith("assay")},
            "assay_sql_nDCG@10_doc": sql,
            "load_avg_seen": {"min": min(x[0] for x in loads), "max": max(x[0] for x in loads)}}


# ---------------------------------------------------------------- quality, and what each setting is worth
def quality(variants: bool) -> dict:
    out = {}
    for name in ("scifact", "vaswani"):
        chunks, qs, qrel = collection(name)
        questions = [q for _, q in qs]
        figures = {}
        index = assay_index(chunks)
        figures["assay"] = evaluate(qrel, {qid: [h.doc_id for h in index.search(q, 100)] for qid, q in qs})
        index.close()
        peer = Bm25s(chunks)
        figures["bm25s"] = evaluate(qrel, {qid: [d for d, _ in r] for (qid, _), r in
                                           zip(qs, peer.ranked(questions, 100))})
        figures["difference_nDCG@10"] = round(figures["assay"]["nDCG@10"] - figures["bm25s"]["nDCG@10"], 4)
        if variants:
            figures["variants"] = variant_figures(chunks, qs, qrel)
        out[name] = figures
    return out


def variant_figures(chunks, qs, qrel) -> dict:
    """The settings that differ between the two, one at a time from each side's default."""
    import tantivy

    from assay.retrieval import bm25

    questions = [q for _, q in qs]
    out = {}
    for label, params in (("bm25s k1=1.2 (tantivy's k1)", {"k1": 1.2}),
                          ("bm25s keeping one-character tokens", {"token_pattern": r"(?u)\b\w+\b"})):
        peer = Bm25s(chunks, **params)
        out[label] = evaluate(qrel, {qid: [d for d, _ in r] for (qid, _), r in zip(qs, peer.ranked(questions, 100))})

    def simple():
        return tantivy.Tokenizer.simple()

    def two_or_more():  # the simple tokenizer's runs of letters and digits, two characters and up
        return tantivy.Tokenizer.regex(r"[\p{Alphabetic}\p{N}]{2,}")

    def analyzer(tokenizer, stopwords=True):
        builder = tantivy.TextAnalyzerBuilder(tokenizer()).filter(tantivy.Filter.remove_long(40))
        builder = builder.filter(tantivy.Filter.lowercase())
        if stopwords:
            builder = builder.filter(tantivy.Filter.stopword("english"))
        return builder.filter(tantivy.Filter.stemmer("english")).build()

    for label, tokenizer, stopwords, distinct in (
            ("assay dropping one-character tokens", two_or_more, True, False),
            ("assay without stop words", simple, False, False),
            ("assay with each question term once", simple, True, True)):
        built = analyzer(tokenizer, stopwords)
        original = bm25.build_analyzer
        bm25.build_analyzer = lambda options: built  # the variant's analyzer, for this index only
        try:
            index = assay_index(chunks)
        finally:
            bm25.build_analyzer = original
        if distinct:
            analyze = built.analyze
            index.analyzer = type("Distinct", (), {"analyze": staticmethod(lambda t: list(dict.fromkeys(analyze(t))))})
        out[label] = evaluate(qrel, {qid: [h.doc_id for h in index.search(q, 100)] for qid, q in qs})
        index.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--passes", type=int, default=5, help="query passes after the first, per repeat")
    parser.add_argument("--variants", action="store_true", help="also nDCG@10 of analyzer variants")
    parser.add_argument("--skip-end-to-end", action="store_true")
    parser.add_argument("--peer-script", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--peer-pieces", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--src", type=Path, help="also end to end with the assay of this source tree (its src/ on "
                                                  "PYTHONPATH; e.g. an export of an older commit), interleaved")
    parser.add_argument("--skip-query", action="store_true")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.peer_script:
        return peer_script(args.peer_pieces)
    import bm25s

    out = {"bm25s_version": bm25s.__version__, "load_avg_start": load()}
    if not args.skip_query:
        out["query"] = query_speed(args.repeats, args.passes)
    if not args.skip_end_to_end:
        out["end_to_end"] = end_to_end(args.repeats, args.src)
    if not args.skip_quality:
        out["quality"] = quality(args.variants)
    out["load_avg_end"] = load()
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()

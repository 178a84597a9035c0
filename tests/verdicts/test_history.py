"""Run history on real demo runs: compare, gate (+ JUnit), regress, history, rescore."""

import dataclasses
import json
import re
import xml.etree.ElementTree as ET
from datetime import timedelta

import pytest
from click.testing import CliRunner
from scipy.stats import norm

from assay.cli import cli
from verdicts.reference_score import graded_z
from assay.verdicts.comparison import NotComparable, compare, config_diff
from assay.measures.compute import per_query
from assay.verdicts.inference import infer
from assay.measures.registry import parse_measure
from assay.verdicts.regression import history, regress
from assay.runs.rescore import rescore
from assay.runs.runner import RunOptions, execute_run, new_run_id, run
from assay.store.warehouse import Warehouse
from assay.runs.sinks import store_run
from conftest import DEMO

CORPUS, JUDGMENTS = DEMO / "corpus", DEMO / "judgments.jsonl"


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    path = tmp_path_factory.mktemp("hist") / "w.duckdb"
    with Warehouse.open(path) as wh:
        a = run(wh, CORPUS, JUDGMENTS, RunOptions(chunk_size=800))
        b = run(wh, CORPUS, JUDGMENTS, RunOptions(chunk_size=300))
    return path, a, b


@pytest.fixture
def demo_wh(demo_runs):
    """The demo warehouse, open in this process; closed before a test's CLI calls open it again."""
    path, a, b = demo_runs
    wh = Warehouse.open(path)
    yield wh, a, b
    wh.close()


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_compare_two_chunk_sizes(demo_wh):
    wh, a, b = demo_wh
    result = compare(wh, a.run_id, b.run_id)
    assert [d["key"] for d in result["config_diff"]] == ["chunker.size", "settings.chunk_size"]
    rows = {(r["metric"], r["level"], r["slice"]): r for r in result["rows"]}
    row = rows[("nDCG@10", "chunk", "all")]
    va = per_query(wh, a.run_id, parse_measure("nDCG@10"))
    vb = per_query(wh, b.run_id, parse_measure("nDCG@10"))
    qs = [q for (q, lvl) in va if lvl == "chunk"]
    assert row["delta"] == pytest.approx(sum(vb[(q, "chunk")] - va[(q, "chunk")] for q in qs) / len(qs))
    assert row["ci_low"] <= row["delta"] <= row["ci_high"] and row["n"] == 56
    assert row["test"] == "score" and "patterns" not in row and row["p_value"] <= row["p_holm"] <= 1
    assert (row["ci_low"] <= 0 <= row["ci_high"]) == (row["p_value"] >= 0.05)
    before, after = [va[(q, "chunk")] for q in sorted(qs)], [vb[(q, "chunk")] for q in sorted(qs)]
    same = infer(before, after)  # nothing drawn at random: the same figures from the same values
    assert (row["ci_low"], row["ci_high"], row["p_value"]) == (same.low, same.high, same.p_value)
    assert rows[("Success@3", "doc", "all")]["test"] == "tango-score"
    assert ("Success@3", "doc", "form=gap") in rows and ("nDCG@10", "chunk", "hard_class=prose-free") in rows
    # flips agree with the per-question Success@3 values
    s3a = per_query(wh, a.run_id, parse_measure("Success@3"))
    s3b = per_query(wh, b.run_id, parse_measure("Success@3"))
    won = {q for (q, lvl), v in s3b.items() if lvl == "doc" and v == 1 and s3a[(q, lvl)] == 0}
    lost = {q for (q, lvl), v in s3b.items() if lvl == "doc" and v == 0 and s3a[(q, lvl)] == 1}
    assert {f["query_id"] for f in result["flips"]["won"]} == won
    assert {f["query_id"] for f in result["flips"]["lost"]} == lost
    wh.close()
    out = invoke("compare", a.run_id, b.run_id, "--warehouse", wh.path)
    assert "chunker.size: 800 -> 300" in out.stdout and "p (Holm) corrects p over the 23 tests" in out.stdout


def test_config_diff_shows_whole_missing_sections():
    assert config_diff({"a": 1, "x": {"y": 2}}, {"a": 1, "x": {"y": 3}, "z": {"k": 1}}) == [
        ("x.y", 2, 3), ("z", "<absent>", {"k": 1})]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_not_comparable_says_so(demo_wh, mini_corpus, mini_judgments):
    wh, a, _ = demo_wh
    other = run(wh, mini_corpus, mini_judgments, RunOptions())
    with pytest.raises(NotComparable, match="not comparable: judgments differ .* corpora differ"):
        compare(wh, a.run_id, other.run_id)
    wh.close()
    out = invoke("compare", a.run_id, other.run_id, "--warehouse", wh.path)
    assert out.exit_code == 1 and "Configuration difference" in out.stderr


def test_gate_fails_with_exit_6_and_junit(demo_wh, tmp_path):
    wh, a, _ = demo_wh
    wh.close()
    junit = tmp_path / "gate.xml"
    out = invoke("gate", a.run_id, "--rule", "Success@10:doc>=0.5", "--rule", "Success@1:doc>=0.95",
                 "--rule", "nDCG@10[form=gap]>=0.3", "--rule", "Abstain[category=normal]>=0.1",
                 "--junit", junit, "--warehouse", wh.path)
    assert out.exit_code == 6
    said, blank, *lines = out.stdout.splitlines()
    # the verdict in words first: the two failing rules (Abstain's empty slice by its reason)
    assert said.startswith("The run fails 2 of 4 gate rules: Success@1:doc>=0.95 reads ") and blank == ""
    assert "; Abstain[category=normal]>=0.1 (no questions in slice 'category=normal'" in said
    # three of the four rules are measured (Abstain has no question in its slice): a family of three
    assert lines[1].endswith(", Holm over 3 rules at alpha 0.05")
    assert lines[2].split() == ["status", "rule", "value", "n", "bound", "p", "p", "(Holm)", "reason"]
    assert set(lines[3]) == {"-"}
    assert lines[4].startswith("PASS") and "Success@10:doc>=0.5" in lines[4]
    assert lines[5].startswith("FAIL") and "is not >= 0.95" in lines[5]
    end = lines[2].index("value") + len("value")  # the values line up under their header, whatever the rules
    assert all(re.fullmatch(r".* \d\.\d{3}", line[:end]) for line in lines[4:6]), lines
    # the slice exists, but Abstain has no question in it (only unanswerable ones count): never passes vacuously
    assert "no questions in slice 'category=normal'" in out.stdout
    assert lines[-1] == "2 passed, 2 failed; exit code 6"
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "4" and suite.get("failures") == "2"
    names = [c.get("name") for c in suite.findall("testcase")]
    assert names[0] == "Success@10:doc>=0.5" and len(suite.findall("testcase/failure")) == 2
    ok = invoke("gate", a.run_id, "--rule", "Success@10:doc>=0.5", "--warehouse", wh.path)
    assert ok.exit_code == 0 and ok.stdout.splitlines()[-1] == "1 passed, 0 failed"


def test_gate_marks_fragile_passes(demo_wh):
    wh, a, _ = demo_wh
    value = sum(v for (q, lvl), v in per_query(wh, a.run_id, parse_measure("Success@1")).items() if lvl == "doc") / 56
    wh.close()
    out = invoke("gate", a.run_id, "--rule", f"Success@1:doc>={value - 0.01:.3f}", "--warehouse", wh.path)
    assert out.exit_code == 0 and "PASS (fragile)" in out.stdout


def test_gate_rules_from_assay_toml(demo_wh, tmp_path):
    wh, a, _ = demo_wh
    wh.close()
    cfg = tmp_path / "assay.toml"
    cfg.write_text('[gate]\nrules = ["Success@10:doc>=0.99"]\n')
    out = invoke("gate", a.run_id, "--config", cfg, "--warehouse", wh.path)
    assert out.exit_code == 6 and "Success@10:doc>=0.99" in out.stdout
    bad = invoke("gate", a.run_id, "--rule", "Success@3=>0.7", "--warehouse", wh.path)
    assert bad.exit_code == 2 and "cannot read gate rule 'Success@3=>0.7' (--rule)" in bad.stderr


def _injected(wh, base_record, slice_qids, seconds):
    """A copy of a run whose final ranking is reversed for some questions: a regression in one slice."""
    hits = [h for h in base_record.hits if h[1] == "final"]
    by_q = {}
    for h in hits:
        by_q.setdefault(h[0], []).append(h)
    new_hits = []
    for q, hs in by_q.items():
        hs = sorted(hs, key=lambda h: h[2])
        if q in slice_qids:
            hs = list(reversed(hs))
        new_hits += [(q, "bm25", i, h[3], h[4], h[5]) for i, h in enumerate(hs, 1)]
        new_hits += [(q, "final", i, h[3], h[4], h[5]) for i, h in enumerate(hs, 1)]
    started = base_record.started_at + timedelta(seconds=seconds)
    record = dataclasses.replace(base_record, run_id=new_run_id(started), started_at=started, hits=new_hits)
    store_run(wh, record)
    return record


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_regression_in_one_slice_is_caught(tmp_path):
    wh = Warehouse.open(tmp_path / "w.duckdb")
    if True:
        base = execute_run(CORPUS, JUDGMENTS, RunOptions())
        store_run(wh, base)
        prose_free = {j.query_id for j in base.judgments.judgments if j.hard_class == "prose-free"}
        bad = _injected(wh, base, prose_free, 60)
        # threshold mode: the slice's fall beyond the allowance fails, whatever its significance
        result = regress(wh, bad.run_id, "latest", [(parse_measure("nDCG@10"), "chunk", 0.15)], mode="threshold")
        assert result["baseline"] == base.run_id
        checks = {c["slice"]: c for c in result["checks"]}
        assert not checks["all"]["regressed"] and checks["all"]["change"] > -0.15  # overall barely moves
        assert checks["hard_class=prose-free"]["regressed"] and checks["hard_class=prose-free"]["change"] < -0.5
        assert result["regressed"]
        # significance mode: 6 questions can give at best p = Phi(Z(-0.15)) = 0.0087 (every one lost by 1), above
        # 0.05 / 11 (Holm over 11 checks); p from the per-question changes by the score statistic's definition
        sig = regress(wh, bad.run_id, "latest", [(parse_measure("nDCG@10"), "chunk", 0.15)])
        prose = {c["slice"]: c for c in sig["checks"]}["hard_class=prose-free"]
        va, vb = (per_query(wh, r.run_id, parse_measure("nDCG@10")) for r in (base, bad))
        d = [vb[(q, "chunk")] - va[(q, "chunk")] for q in sorted(prose_free)]
        best = norm.cdf(graded_z([-1.0] * 6, -0.15))
        assert best == pytest.approx(0.0087, abs=1e-4) and best > 0.05 / 11
        assert prose["n"] == len(d) == 6 and prose["method"] == "score" and not prose["regressed"]
        assert prose["p_value"] == pytest.approx(norm.cdf(graded_z(d, -0.15)), rel=1e-9)
        assert sig["family_size"] == 11 and not sig["regressed"]
        same = _injected(wh, base, set(), 120)  # identical rankings: nothing regresses
        best = regress(wh, same.run_id, "best", [(parse_measure("nDCG@10"), "chunk", 0.15)])
        assert best["baseline"] == base.run_id  # the broken run is never the best
        wh.close()
        out = invoke("regress", bad.run_id, "--max-drop", "nDCG@10=0.15", "--mode", "threshold", "--warehouse",
                     wh.path)
        assert out.exit_code == 7
        assert re.search(r"^REGRESSED +nDCG@10:chunk +hard_class=prose-free +0\.\d{3} ", out.stdout, re.M), out.stdout
        fine = invoke("regress", same.run_id, "--baseline", base.run_id, "--max-drop", "nDCG@10=0.15",
                      "--warehouse", wh.path)
        assert fine.exit_code == 0 and "no significant regression" in fine.stdout


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_history_points_to_the_lasting_drop(tmp_path):
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        base = execute_run(CORPUS, JUDGMENTS, RunOptions())
        store_run(wh, base)
        gap = {j.query_id for j in base.judgments.judgments if j.form == "gap"}
        good2 = _injected(wh, base, set(), 60)
        drop1 = _injected(wh, base, gap, 120)
        drop2 = _injected(wh, base, gap, 180)
        h = history(wh, "bm25", "nDCG@10", None)
        assert [p["run_id"] for p in h["points"]] == [base.run_id, good2.run_id, drop1.run_id, drop2.run_id]
        assert h["lasting_drop"]["run_id"] == drop1.run_id
        _injected(wh, base, set(), 240)  # recovered: the drop was not lasting
        assert history(wh, "bm25", "nDCG@10", None)["lasting_drop"] is None
    out = invoke("history", "--pipeline", "bm25", "--metric", "nDCG@10", "--warehouse", tmp_path / "w.duckdb")
    points = [line for line in out.stdout.splitlines() if re.match(r"\d{8}T\d{6}-", line)]
    assert "no lasting drop" in out.stdout and len(points) == 5


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_rescore_changes_exactly_the_affected_questions(demo_wh, tmp_path):
    wh, a, _ = demo_wh
    lines = JUDGMENTS.read_text().splitlines()
    fixed = []
    changed = None
    for line in lines:
        obj = json.loads(line)
        if changed is None and obj["category"] == "normal" and len(obj["gold"]) == 1 and "quote" in obj["gold"][0]:
            obj["gold"] = [{"doc": "glossary.md"}]  # a judgment "fix": the answer is the whole glossary
            changed = obj["query_id"]
        fixed.append(json.dumps(obj))
    path = tmp_path / "fixed.jsonl"
    path.write_text("\n".join(fixed) + "\n")
    result = rescore(wh, a.run_id, path)
    assert result["source_run_id"] == a.run_id and result["questions"] == 71
    kind, source = wh.con.execute("SELECT kind, source_run_id FROM runs WHERE run_id = ?",
                                  [result["run_id"]]).fetchall()[0]
    assert (kind, source) == ("rescore", a.run_id)
    for name in ("nDCG@10", "Success@3", "AP"):
        before = per_query(wh, a.run_id, parse_measure(name))
        after = per_query(wh, result["run_id"], parse_measure(name))
        differing = {q for q in before if before[q] != after[q]}
        assert {q for q, _ in differing} <= {changed}
    assert per_query(wh, a.run_id, parse_measure("nDCG@10"))[(changed, "doc")] != \
        per_query(wh, result["run_id"], parse_measure("nDCG@10"))[(changed, "doc")]


def test_rescore_refuses_new_questions(demo_wh, tmp_path):
    wh, a, _ = demo_wh
    path = tmp_path / "more.jsonl"
    path.write_text(JUDGMENTS.read_text() + json.dumps(
        {"query_id": "zz-new", "query": "q", "category": "no_answer", "form": "gap", "gold": []}) + "\n")
    wh.close()
    out = invoke("rescore", a.run_id, "--judgments", path, "--warehouse", wh.path)
    assert out.exit_code == 1 and "were never asked in run" in out.stderr and "zz-new" in out.stderr


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_small_drop_on_the_demo_is_a_candidate_but_not_lasting(tmp_path):
    """Two questions' rankings reversed in two runs: nDCG@10 falls beyond a tolerance of 0.005, but two questions
    of 56 cannot be told from noise; p is that of the exact sign-flip enumeration of the per-question changes."""
    import itertools

    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        base = execute_run(CORPUS, JUDGMENTS, RunOptions())
        store_run(wh, base)
        good = [_injected(wh, base, set(), 60 * i) for i in (1, 2)]
        two = set(sorted(j.query_id for j in base.judgments.judgments if j.form == "gap")[:2])
        drops = [_injected(wh, base, two, 60 * i) for i in (3, 4)]
        h = history(wh, "bm25", "nDCG@10", None, tolerance=0.005)
        t = h["drop_test"]
        assert t["candidate"]["run_id"] == drops[0].run_id and h["lasting_drop"] is None
        assert t["baseline_runs"] == [base.run_id] + [g.run_id for g in good] and t["test"].startswith("paired")
        before = per_query(wh, base.run_id, parse_measure("nDCG@10"))
        after = per_query(wh, drops[0].run_id, parse_measure("nDCG@10"))
        diffs = [after[k] - before[k] for k in sorted(before) if k[1] == "chunk"]
        assert t["delta"] == pytest.approx(sum(diffs) / len(diffs))
        moved = [d for d in diffs if d]
        assert 0 < len(moved) <= 2 and all(d < 0 for d in moved)
        flips = [sum(s * d for s, d in zip(signs, moved)) for signs in itertools.product((1, -1), repeat=len(moved))]
        exact = sum(f <= sum(moved) + 1e-12 for f in flips) / len(flips)
        assert exact >= 0.25 and t["p_value"] == pytest.approx(exact, abs=0.012) and not t["significant"]
        # the real drop of test_history_points_to_the_lasting_drop is significant on the same baseline
        gap = {j.query_id for j in base.judgments.judgments if j.form == "gap"}
        _injected(wh, base, gap, 300)
        _injected(wh, base, gap, 360)
        real = history(wh, "bm25", "nDCG@10", None, tolerance=0.005)
        assert real["lasting_drop"] is not None and real["drop_test"]["p_value"] < 0.05


def test_history_reads_each_points_interval_from_the_memo_its_report_stored(demo_runs, tmp_path):
    """A run stores its report's intervals as it is written (assay.measures.memo); history's interval of the same
    values, seed and resamples is that stored one, not a bootstrap again: the same floats, and with the memo
    emptied, computed to the same floats. Changed on disk, it is what history shows."""
    import shutil

    source, a, b = demo_runs
    path = tmp_path / "w.duckdb"
    shutil.copy(source, path)
    with Warehouse.open(path) as wh:
        before = history(wh, "bm25", "nDCG@10", "chunk")["points"]
        bounds = [(p["ci_low"], p["ci_high"]) for p in before]
        with wh.transaction():
            held = wh.con.execute("SELECT COUNT(*) FROM interval_memo").fetchone()[0]
            wh.con.execute("DELETE FROM interval_memo")
        recomputed = [(p["ci_low"], p["ci_high"]) for p in history(wh, "bm25", "nDCG@10", "chunk")["points"]]
    assert held > 0 and recomputed == bounds and len(bounds) >= 2  # (other tests of this module add runs)
    shutil.copy(source, path)
    with Warehouse.open(path) as wh:
        with wh.transaction():
            wh.con.execute("UPDATE interval_memo SET ci_low = 0.125")
        after = history(wh, "bm25", "nDCG@10", "chunk")["points"]
    assert [p["ci_low"] for p in after] == [0.125] * len(before)
    assert [p["value"] for p in after] == [p["value"] for p in before]

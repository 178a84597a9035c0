"""`assay judgments check`: the no_answer lints against the pipeline the set will evaluate, through the CLI."""

import json

import pytest
from click.testing import CliRunner

from assay.cli import cli

DOCS = {
    "a.md": "The backup command copies the main file.\n",
    "b.txt": "The page cache keeps pages in memory.\n",
    "c.txt": "Restore by copying the backup into place.\n",
}
QUESTIONS = [
    {"query_id": "a-copy", "query": "which command copies the main file", "category": "normal", "form": "match",
     "gold": [{"doc": "a.md", "quote": "copies the main file"}]},
    {"query_id": "n-all", "query": "backup memory", "category": "no_answer", "form": "gap", "gold": []},
    {"query_id": "n-empty", "query": "the and of it", "category": "no_answer", "form": "gap", "gold": []},
    {"query_id": "n-none", "query": "tulips planted in spring", "category": "no_answer", "form": "gap", "gold": []},
    {"query_id": "n-some", "query": "tulips backup schedule", "category": "no_answer", "form": "gap", "gold": []},
]
SUMMARY = ("pipeline {name} is lexical: 2 of 4 no_answer questions (50%) share a content word with the corpus: "
           "a lexical retriever returns results for them, so abstention must come from a calibrated threshold "
           "(assay calibrate), not from empty results")


@pytest.fixture
def golden(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    return write(tmp_path / "judgments.jsonl", QUESTIONS), root


def write(path, questions):
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return path


def check(judgments, corpus, *extra):
    return CliRunner().invoke(cli, ["judgments", "check", str(judgments), "--corpus", str(corpus), *map(str, extra)],
                              catch_exceptions=False)


def lint_lines(stdout):
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("lints:"))
    end = lines.index("term competition: documents holding at least half of a question's terms, "
                      "median 0 of 3, max 3 (most contested first)")
    return lines[start:end]


def test_a_lexical_pipeline_flags_every_no_answer_question_that_shares_any_word(golden):
    judgments, corpus = golden
    result = check(judgments, corpus)
    assert result.exit_code == 0
    assert lint_lines(result.stdout) == [
        "lints: 3",
        f"  {judgments}:3 [no-answer-empty] n-empty: the question has no content words at all; "
        "BM25 returns nothing for it trivially",
        f"  {judgments}:2 [no-answer-lexical-match] n-all: shares 2 of 2 content words with the corpus "
        "(backup, memory); 3 of 3 documents contain at least one, so BM25 returns results instead of nothing",
        f"  {judgments}:5 [no-answer-lexical-match] n-some: shares 1 of 3 content words with the corpus "
        "(backup); 2 of 3 documents contain at least one, so BM25 returns results instead of nothing",
        "",
        SUMMARY.format(name="bm25"),
        "",
    ]
    assert check(judgments, corpus, "--strict").exit_code == 1


@pytest.mark.parametrize("pipeline", ["hybrid", "hybrid-rerank"])
def test_every_pipeline_with_a_bm25_stage_is_lexical(golden, pipeline):
    judgments, corpus = golden
    assert SUMMARY.format(name=pipeline) in check(judgments, corpus, "--pipeline", pipeline).stdout.splitlines()


def test_a_dense_pipeline_says_the_lint_does_not_apply(golden):
    judgments, corpus = golden
    result = check(judgments, corpus, "--pipeline", "dense")
    assert result.exit_code == 0
    assert lint_lines(result.stdout) == [
        "lints: 0 (none)",
        "",
        "no_answer lexical lint: does not apply to pipeline dense, which has no BM25 stage (dense retrieval always "
        "returns results); abstention on its 4 no_answer questions must come from a calibrated threshold "
        "(assay calibrate)",
        "",
    ]
    assert check(judgments, corpus, "--pipeline", "dense", "--strict").exit_code == 0


def test_an_assay_toml_pipeline_is_resolved_with_its_analyzer(golden, tmp_path):
    judgments, corpus = golden
    config = tmp_path / "assay.toml"
    config.write_text("[pipelines.exact]\nlexical = true\nstemming = false\n\n"
                      "[pipelines.vectors]\nextends = \"dense\"\n", encoding="utf-8")
    exact = check(judgments, corpus, "--pipeline", "exact", "--config", config).stdout.splitlines()
    # without stemming "memory" is matched as written, and the summary names the user's pipeline
    assert any("[no-answer-lexical-match] n-all: shares 2 of 2 content words with the corpus (backup, memory)"
               in line for line in exact)
    assert SUMMARY.format(name="exact") in exact
    vectors = check(judgments, corpus, "--pipeline", "vectors", "--config", config).stdout
    assert "does not apply to pipeline vectors" in vectors and "no-answer-lexical-match" not in vectors


def test_the_share_rounds_half_up(golden, tmp_path):
    judgments, corpus = golden
    # 7 of 8: n-all and n-some, and five more that share a word; n-none does not
    more = [{"query_id": f"n-more-{i}", "query": f"backup rotation {i}", "category": "no_answer", "form": "gap",
             "gold": []} for i in range(5)]
    eight = write(tmp_path / "eight.jsonl", sorted([q for q in QUESTIONS if q["query_id"] != "n-empty"] + more,
                                                  key=lambda q: q["query_id"]))
    assert ("pipeline bm25 is lexical: 7 of 8 no_answer questions (88%) share a content word with the corpus: "
            "a lexical retriever returns results for them, so abstention must come from a calibrated threshold "
            "(assay calibrate), not from empty results") in check(eight, corpus).stdout.splitlines()


def test_the_lint_flags_exactly_the_no_answer_questions_bm25_answers(golden):
    """The independent reference: a real BM25 run over the same corpus and questions."""
    from assay.runs.runner import RunOptions, execute_run

    judgments, corpus = golden
    record = execute_run(corpus, judgments, RunOptions("bm25"))
    answered = {q for q, _, n in record.query_rows if n > 0}
    no_answer = {q["query_id"] for q in QUESTIONS if q["category"] == "no_answer"}
    flagged = {line.split("] ")[1].split(":")[0] for line in check(judgments, corpus).stdout.splitlines()
               if "[no-answer-lexical-match]" in line}
    assert flagged == answered & no_answer == {"n-all", "n-some"}


def test_lints_name_the_words_as_the_question_writes_them(tmp_path):
    """The analyzer matches stems ("doe", "queri"); the lint shows "Does", "Queries", as typed."""
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "engine.md").write_text("The engine does run queries fast.\n", encoding="utf-8")
    judgments = write(tmp_path / "judgments.jsonl", [
        {"query_id": "gap", "query": "Which queries does the engine run", "category": "normal", "form": "gap",
         "gold": [{"doc": "engine.md", "quote": "does run queries fast"}]},
        {"query_id": "none", "query": "Does it run Queries?", "category": "no_answer", "form": "gap", "gold": []},
    ])
    lines = check(judgments, root).stdout.splitlines()
    assert f"  {judgments}:1 [gap-overlap] gap: 3/5 of the question's terms occur in its quote (does, queries, run); " \
           "a gap question should reword the answer" in lines
    assert f"  {judgments}:2 [no-answer-lexical-match] none: shares 3 of 3 content words with the corpus (Does, " \
           "Queries, run); 1 of 1 documents contain at least one, so BM25 returns results instead of nothing" in lines


# -- unlabeled questions ----------------------------------------------------------------------

LABELS = ("labels: {n} of {total} questions are unlabeled (no category or no form). Labels show where retrieval "
          "fails: assay report and assay compare break every measure down by category and by form, a gate rule can "
          "hold one slice (Success@3:doc[form=gap]>=0.5), and category no_answer marks the questions Abstain "
          "scores. Until labelled they are in {slices}.")
NO_CATEGORY = "no category (normal, ambiguous, adversarial or no_answer)"
NO_FORM = "no form (match or gap)"


def test_unlabeled_questions_are_named_with_what_labels_buy(golden, tmp_path):
    _, corpus = golden
    answer = [{"doc": "a.md", "quote": "copies the main file"}]
    judgments = write(tmp_path / "hand.jsonl", [
        QUESTIONS[0],
        {"query_id": "u-both", "query": "which command copies the main file", "gold": answer},
        {"query_id": "u-form", "query": "what copies the main file", "category": "normal", "gold": answer},
        {"query_id": "u-said", "query": "copy the main file how", "category": "unlabeled", "form": "match",
         "gold": answer},
    ])
    result = check(judgments, corpus)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    start = lines.index("lints: 3")
    assert lines[start:start + 7] == [
        "lints: 3",
        f"  {judgments}:2 [unlabeled] u-both: {NO_CATEGORY} and {NO_FORM}; until it has them it is in the "
        "unlabeled slice",
        f"  {judgments}:3 [unlabeled] u-form: {NO_FORM}; until it has one it is in the unlabeled slice",
        f"  {judgments}:4 [unlabeled] u-said: {NO_CATEGORY}; until it has one it is in the unlabeled slice",
        "",
        LABELS.format(n=3, total=4, slices="the slices category=unlabeled and form=unlabeled"),
        "",
    ]
    assert check(judgments, corpus, "--strict").exit_code == 1  # --strict fails on any lint, this one too


def test_a_set_nobody_labelled_lists_five_and_counts_the_rest(golden, tmp_path):
    _, corpus = golden
    judgments = write(tmp_path / "hand.jsonl", [
        {"query_id": f"u{i}", "query": "which command copies the main file", "form": "match",
         "gold": [{"doc": "a.md"}]} for i in range(8)])
    lines = check(judgments, corpus).stdout.splitlines()
    start = lines.index("lints: 8")
    shown = [f"  {judgments}:{i + 1} [unlabeled] u{i}: {NO_CATEGORY}; until it has one it is in the unlabeled slice"
             for i in range(8)]
    assert lines[start:start + 9] == ["lints: 8", *shown[:5], "  ... 3 more unlabeled (--verbose lists every one)",
                                      "", LABELS.format(n=8, total=8, slices="the slice category=unlabeled")]
    verbose = check(judgments, corpus, "--verbose").stdout.splitlines()
    assert verbose[start:start + 11] == ["lints: 8", *shown, "", LABELS.format(n=8, total=8,
                                                                               slices="the slice category=unlabeled")]


def test_label_lints_in_the_library(tmp_path):
    from assay.inputs.judgments import load_judgments
    from assay.golden.lint import Lint, label_lints, labels_summary

    labelled = load_judgments(write(tmp_path / "a.jsonl", QUESTIONS))
    assert label_lints(labelled) == [] and labels_summary(labelled) is None
    hand = load_judgments(write(tmp_path / "b.jsonl", [{"query_id": "u", "query": "q", "gold": [{"doc": "a.md"}]}]))
    assert label_lints(hand) == [Lint("unlabeled", 1, "u", f"{NO_CATEGORY} and {NO_FORM}; until it has them it is "
                                      "in the unlabeled slice")]
    assert labels_summary(hand) == LABELS.format(n=1, total=1, slices="the slices category=unlabeled and "
                                                                       "form=unlabeled")

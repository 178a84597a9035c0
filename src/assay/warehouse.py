"""The DuckDB warehouse: connection, numbered migrations, and the writes that record runs.

A run is written in one transaction: a failure or interrupt anywhere before the
commit leaves the warehouse exactly as it was.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from assay.errors import RunNotFound, WarehouseError
from assay.hashing import canonical_json
from assay.sqlfiles import load_sql, migrations

DEFAULT_WAREHOUSE = Path("warehouse") / "assay.duckdb"
ENV_VAR = "ASSAY_WAREHOUSE"
BUDGET_MIGRATION = 10  # the migration that added token tables; older runs are tokenized when it applies


def resolve_path(path: str | os.PathLike | None) -> Path:
    """--warehouse PATH, else $ASSAY_WAREHOUSE, else warehouse/assay.duckdb."""
    if path:
        return Path(path)
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    return DEFAULT_WAREHOUSE


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Warehouse:
    def __init__(self, path: Path, con, read_only: bool):
        self.path, self.con, self.read_only = path, con, read_only

    @classmethod
    def open(cls, path=None, read_only: bool = False) -> "Warehouse":
        import duckdb

        path = resolve_path(path)
        if read_only and not path.exists():
            raise WarehouseError(f"no warehouse at {path}; `assay run` or `assay ingest` creates one")
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            con = duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            raise WarehouseError(f"cannot open warehouse {path}: {exc}") from None
        wh = cls(path, con, read_only)
        if read_only and wh._pending():
            # An old warehouse opens in a new version: upgrade it once, then read as asked.
            con.close()
            cls.open(path, read_only=False).close()
            con = duckdb.connect(str(path), read_only=True)
            wh = cls(path, con, read_only)
        wh._migrate()
        return wh

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- schema --------------------------------------------------------------------------
    def schema_version(self) -> int:
        exists = self.con.execute(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
        ).fetchall()[0][0]
        if not exists:
            return 0
        return self.con.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchall()[0][0]

    def _pending(self) -> bool:
        return self.schema_version() < migrations()[-1][0]

    def _migrate(self) -> None:
        current, wanted = self.schema_version(), migrations()
        latest = wanted[-1][0]
        if current > latest:
            raise WarehouseError(
                f"warehouse {self.path} has schema version {current}, newer than this assay knows ({latest}); upgrade assay"
            )
        pending = [m for m in wanted if m[0] > current]
        if not pending:
            return
        if self.read_only:
            raise WarehouseError(
                f"warehouse {self.path} has schema version {current}, this assay needs {latest}; "
                "run any writing command (e.g. `assay ingest`) once to upgrade it"
            )
        with self.transaction():
            self.con.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
            )
            for version, name, sql in pending:
                self.con.execute(sql)
                self.con.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)", [version, name, _now()]
                )
                if version == BUDGET_MIGRATION:  # runs recorded before budgets get their token counts
                    from assay.budget import backfill

                    backfill(self)

    @contextmanager
    def transaction(self):
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    # -- reads ---------------------------------------------------------------------------
    def query(self, name: str, **params):
        """Run the named SQL file with bound parameters; returns (column names, rows)."""
        cur = self.con.execute(load_sql(name), params)
        return [d[0] for d in cur.description], cur.fetchall()

    def resolve_run_id(self, run_ref: str | None) -> str:
        if run_ref in (None, "", "latest"):
            row = self.con.execute(
                "SELECT run_id FROM complete_runs ORDER BY started_at DESC, run_id DESC LIMIT 1"
            ).fetchall()
            if not row:
                raise RunNotFound(f"warehouse {self.path} has no runs yet; start one with `assay run`")
            return row[0][0]
        row = self.con.execute("SELECT run_id FROM complete_runs WHERE run_id = ?", [run_ref]).fetchall()
        if not row:
            matches = self.con.execute(
                "SELECT run_id FROM complete_runs WHERE run_id LIKE ? ORDER BY run_id", [run_ref + "%"]
            ).fetchall()
            if len(matches) == 1:
                return matches[0][0]
            hint = "; it matches several runs, give more of it" if matches else "; `assay runs` lists them"
            raise RunNotFound(f"no run {run_ref!r} in {self.path}{hint}")
        return row[0][0]

    # -- writes --------------------------------------------------------------------------
    def _insert(self, table: str, columns: list[str], rows: list[tuple]) -> None:
        if not rows:
            return
        import pyarrow as pa

        data = pa.table({c: [r[i] for r in rows] for i, c in enumerate(columns)})
        self.con.register("_assay_rows", data)
        try:
            cols = ", ".join(columns)
            self.con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _assay_rows")
        finally:
            try:
                self.con.unregister("_assay_rows")
            except Exception:  # an aborted transaction refuses even this; the rollback drops the view
                pass

    def _exists(self, table: str, where: str, params: list) -> bool:
        return self.con.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", params).fetchall()[0][0] > 0

    def write_corpus(self, corpus) -> bool:
        """Store a corpus unless its hash is already there. Returns whether rows were written."""
        if self._exists("corpora", "corpus_hash = ?", [corpus.corpus_hash]):
            return False
        self._insert(
            "corpora", ["corpus_hash", "root", "n_documents", "total_bytes", "ingested_at"],
            [(corpus.corpus_hash, str(corpus.root), len(corpus.documents),
              sum(d.byte_size for d in corpus.documents), _now())],
        )
        self._insert(
            "documents", ["corpus_hash", "doc_id", "text", "byte_size", "sha256"],
            [(corpus.corpus_hash, d.doc_id, d.text, d.byte_size, d.sha256) for d in corpus.documents],
        )
        return True

    def write_chunks(self, chunk_set: str, corpus_hash: str, chunker_config: dict, chunks) -> None:
        from assay.hashing import sha256_text

        if self._exists("chunk_sets", "chunk_set = ?", [chunk_set]):
            return
        self._insert(
            "chunk_sets", ["chunk_set", "corpus_hash", "chunker", "n_chunks", "created_at"],
            [(chunk_set, corpus_hash, canonical_json(chunker_config), len(chunks), _now())],
        )
        self._insert(
            "chunks", ["chunk_set", "chunk_id", "doc_id", "ordinal", "start_char", "end_char", "text", "text_sha256"],
            [(chunk_set, c.chunk_id, c.doc_id, c.ordinal, c.start, c.end, c.text, sha256_text(c.text)) for c in chunks],
        )

    def write_judgments(self, judgments, corpus_hash: str, gold) -> None:
        h = judgments.sha256
        if not self._exists("judgment_sets", "judgments_hash = ?", [h]):
            self._insert(
                "judgment_sets", ["judgments_hash", "source_path", "n_queries", "loaded_at"],
                [(h, str(judgments.path), len(judgments.judgments), _now())],
            )
            self._insert(
                "queries",
                ["judgments_hash", "query_id", "query_text", "category", "form", "hard_class", "unanswerable", "notes", "line"],
                [(h, j.query_id, j.query, j.category, j.form, j.hard_class, j.unanswerable, j.notes, j.line)
                 for j in judgments.judgments],
            )
            self._insert(
                "judgment_gold", ["judgments_hash", "query_id", "gold_idx", "doc_id", "quote", "grade"],
                [(h, j.query_id, i, g.doc, g.quote, g.grade) for j in judgments.judgments for i, g in enumerate(j.gold)],
            )
        if not self._exists("gold_spans", "judgments_hash = ? AND corpus_hash = ?", [h, corpus_hash]):
            self._insert(
                "gold_spans",
                ["judgments_hash", "corpus_hash", "query_id", "gold_idx", "doc_id", "quote", "grade", "start_char", "end_char"],
                [(h, corpus_hash, g.query_id, g.gold_idx, g.doc_id, g.quote, g.grade, g.start, g.end) for g in gold],
            )

    # what a derived run (a rescore, a revalidation) copies from its source, per table
    DERIVED = {"run_queries": "query_id, latency_ms, n_results", "hits": "query_id, stage, rank, chunk_id, doc_id, score",
               "stage_latency": "query_id, stage, latency_ms", "run_stages": "stage, position",
               "answer_raw": "query_id, attempt, mode, raw", "answer_context": "query_id, position, chunk_id"}

    def derive_run(self, source: str, kind: str, config: dict, judgments_hash: str | None = None,
                   tables=tuple(DERIVED), keep: list[str] | None = None) -> str:
        """A new run (``kind``, linked by ``source_run_id``) that reuses ``source``'s stored retrieval.

        Copies the source's rows of ``tables`` (only the questions in ``keep`` when given). Runs inside
        the caller's transaction; returns the new run id.
        """
        import secrets

        from assay.hashing import config_hash

        now = _now()
        run_id = f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
        self.con.execute(
            "INSERT INTO runs (run_id, started_at, finished_at, status, pipeline, config, config_hash, corpus_hash, "
            "judgments_hash, chunk_set, assay_version, versions, git_commit, seed, tie_break, stats, kind, "
            "source_run_id, gate_eligible, tokenizer_id) SELECT ?, ?, ?, status, pipeline, ?, ?, corpus_hash, "
            "COALESCE(?, judgments_hash), chunk_set, assay_version, versions, git_commit, seed, tie_break, stats, "
            "?, run_id, gate_eligible, tokenizer_id FROM runs WHERE run_id = ?",
            [run_id, now, now, canonical_json(config), config_hash(config), judgments_hash, kind, source])
        if keep is not None:
            import pyarrow as pa

            self.con.register("_assay_keep", pa.table({"query_id": keep}))
        try:
            for table in tables:
                cols = self.DERIVED[table]
                only = (" AND query_id IN (SELECT query_id FROM _assay_keep)"
                        if keep is not None and cols.startswith("query_id") else "")
                self.con.execute(f"INSERT INTO {table} (run_id, {cols}) SELECT ?, {cols} FROM {table} "
                                 f"WHERE run_id = ?{only}", [run_id, source])
        finally:
            if keep is not None:
                self.con.unregister("_assay_keep")
        return run_id

    def write_run(self, record) -> None:
        """Everything a run produced, in one transaction."""
        with self.transaction():
            self.write_run_rows(record)

    def write_run_rows(self, record) -> None:
        """Everything a run produced, inside the caller's transaction (a sweep writes all its runs in one)."""
        self.write_corpus(record.corpus)
        self.write_chunks(record.chunk_set, record.corpus.corpus_hash, record.config["chunker"], record.chunks)
        self.write_judgments(record.judgments, record.corpus.corpus_hash, record.gold)
        from assay.budget import write_tokens

        tokenizer_id = write_tokens(self, record.corpus.corpus_hash, record.chunk_set)
        self._insert(
            "runs",
            ["run_id", "started_at", "finished_at", "status", "pipeline", "config", "config_hash", "corpus_hash",
             "judgments_hash", "chunk_set", "assay_version", "versions", "git_commit", "seed", "tie_break",
             "stats", "gate_eligible", "tokenizer_id", "sweep_id"],
            [(record.run_id, record.started_at, record.finished_at, record.status, record.config["pipeline"],
              canonical_json(record.config), record.config_hash, record.corpus.corpus_hash,
              record.judgments.sha256, record.chunk_set, record.versions["assay"],
              canonical_json(record.versions), record.git_commit, record.config["seed"],
              record.config["tie_break"], canonical_json(record.stats), record.gate_eligible, tokenizer_id,
              record.sweep_id)],
        )
        self._insert("run_queries", ["run_id", "query_id", "latency_ms", "n_results"],
                     [(record.run_id, *row) for row in record.query_rows])
        self._insert("hits", ["run_id", "query_id", "stage", "rank", "chunk_id", "doc_id", "score"],
                     [(record.run_id, *row) for row in record.hits])
        self._insert("run_stages", ["run_id", "stage", "position"],
                     [(record.run_id, stage, i) for i, stage in enumerate(record.stages, 1)])
        self._insert("stage_latency", ["run_id", "query_id", "stage", "latency_ms"],
                     [(record.run_id, *row) for row in record.stage_latency])
        if record.answers or record.model_requests:
            from assay.answer.stage import (ANSWER_COLUMNS, CITATION_COLUMNS, CLAIM_COLUMNS, CONTEXT_COLUMNS,
                                            RAW_COLUMNS)

            for table, cols, rows in (("answers", ANSWER_COLUMNS, record.answers),
                                      ("claims", CLAIM_COLUMNS, record.claims),
                                      ("citations", CITATION_COLUMNS, record.citations),
                                      ("answer_raw", RAW_COLUMNS, record.answer_raw),
                                      ("answer_context", CONTEXT_COLUMNS, record.answer_context)):
                self._insert(table, ["run_id"] + cols, [(record.run_id, *r) for r in rows])
            self._insert("model_requests", ["run_id", "seq", "query_id", "started_at", "latency_ms", "status",
                                            "error", "rate_limited", "retry", "waited_s"],
                         [(record.run_id, *r) for r in record.model_requests])
            self._insert("claim_judgments", ["run_id", "query_id", "claim_idx", "judge_model", "verdict", "raw",
                                             "error"], [(record.run_id, *r) for r in record.claim_judgments])

"""The corpus a golden set was last run against, and what changed in it since.

A run (and `assay judgments check`) compares the corpus it reads with the corpus of the latest
stored run of the same judgments file (the same judgments hash: every stored run resolved each of
its gold entries against its corpus, so that corpus is the last one the set is known to hold for).
When they differ it prints one ``note:`` line naming the documents added, removed and changed (by
doc id, a few of each, then a count) and the `assay judgments rebase` command that carries the set
over. No table records checks: the runs table already holds every corpus hash, and the documents
table each document's SHA-256. Editing the judgments file (accepting a rebase, say) changes its
hash, so the next run starts a new reference.
"""

from __future__ import annotations

from dataclasses import dataclass

SHOWN = 5  # documents named per kind of change; the rest are counted


@dataclass(frozen=True)
class Changes:
    added: list[str]
    removed: list[str]
    changed: list[str]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def describe(self, shown: int = SHOWN) -> str:
        parts = []
        for ids, what in ((self.changed, "changed"), (self.removed, "removed"), (self.added, "added")):
            if ids:
                named = ", ".join(ids[:shown]) + (f", +{len(ids) - shown} more" if len(ids) > shown else "")
                noun = "document" if len(ids) == 1 else "documents"
                parts.append(f"{len(ids)} {noun} {what} ({named})")
        return "; ".join(parts) if parts else "no document changed"


def compare(old: dict[str, str], new: dict[str, str]) -> Changes:
    """Documents added, removed and changed between two {doc_id: sha256} maps, each list sorted."""
    return Changes(added=sorted(set(new) - set(old)), removed=sorted(set(old) - set(new)),
                   changed=sorted(d for d in set(old) & set(new) if old[d] != new[d]))


@dataclass(frozen=True)
class Drift:
    run_id: str
    corpus_hash: str  # of the corpus the set last ran against
    root: str | None  # where that corpus was read from
    changes: Changes


def drift(warehouse, judgments, corpus) -> Drift | None:
    """How ``corpus`` differs from the one the latest stored run of ``judgments`` read, or None when it is the
    same corpus or no run of this judgments file is stored."""
    from assay.core.sqlfiles import load_sql

    rows = warehouse.con.execute(load_sql("judgments/last_run"), {"judgments_hash": judgments.sha256}).fetchall()
    if not rows or rows[0][1] == corpus.corpus_hash:
        return None
    run_id, corpus_hash, root = rows[0]
    before = dict(warehouse.con.execute(load_sql("judgments/corpus_documents"),
                                        {"corpus_hash": corpus_hash}).fetchall())
    return Drift(run_id, corpus_hash, root, compare(before, {d.doc_id: d.sha256 for d in corpus.documents}))


def drift_note(warehouse, judgments, corpus) -> str | None:
    """The ``note:`` line for a changed corpus (see the module docstring), or None."""
    from assay.store.collections import is_ref

    found = drift(warehouse, judgments, corpus)
    if found is None:
        return None
    old = found.corpus_hash[:12]
    note = (f"note: the corpus changed since {judgments.path} last ran (run {found.run_id}, corpus {old}; now "
            f"{corpus.corpus_hash[:12]}): {found.changes.describe()}")
    if is_ref(str(judgments.path)):
        return note
    return (note + f". If quotes no longer resolve: assay judgments rebase {judgments.path} --from {old} "
                   f"--to {corpus.root}")


def warn_of_drift(warehouse, judgments, corpus, say) -> None:
    """``say`` the drift note, if any. Advisory: a warehouse that cannot be read (locked, damaged, too new)
    leaves it out rather than stopping the command."""
    from assay.core.errors import AssayError

    if warehouse is None:
        return
    try:
        note = drift_note(warehouse, judgments, corpus)
    except AssayError:
        return
    if note:
        say(note)

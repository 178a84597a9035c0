"""Re-run every `<!-- checked -->` transcript of README.md and docs/*.md and write what the commands print now
into the page, as tests/project/test_docs.py runs them (bash, a fresh empty directory, `cd`, `cat` and `echo $?` read
rather than run). Review the diff before committing: it is the change a user will see.

    .venv/bin/python tools/update_transcripts.py [PAGE ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_block(lines: list[str]) -> list[str]:
    """The block's lines with each command's output replaced by what it prints now."""
    env = {k: v for k, v in os.environ.items() if k not in ("ASSAY_WAREHOUSE", "ASSAY_QUIET", "COLUMNS")}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", PYTHONUNBUFFERED="1")
    steps: list[tuple[str, list[str]]] = []
    for text in lines:
        if text.startswith("$ "):
            steps.append((text[2:], []))
        else:
            steps[-1][1].append(text)
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd, last = Path(tmp), None
        for command, shown in steps:
            out.append(f"$ {command}")
            if command.startswith("cd "):
                cwd = cwd / command[3:].strip()
                out.extend(shown)
            elif command.startswith("cat "):
                (cwd / command[4:].strip()).write_text("\n".join(shown) + "\n", encoding="utf-8")
                out.extend(shown)
            elif command == "echo $?":
                out.append(str(last.returncode))
            else:
                last = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, timeout=600)
                got = last.stdout.rstrip("\n")
                out.extend(got.split("\n") if got else [])
    return out


def update(path: Path) -> int:
    lines = path.read_text(encoding="utf-8").split("\n")
    changed, i = 0, 0
    while i < len(lines):
        if lines[i].startswith("<!-- checked"):
            start = i + 1
            while lines[start].startswith("<!--"):
                start += 1
            end = lines.index("```", start + 1)
            new = run_block(lines[start + 1:end])
            if new != lines[start + 1:end]:
                changed += 1
                lines[start + 1:end] = new
            i = start + 1 + len(new)
        i += 1
    if changed:
        path.write_text("\n".join(lines), encoding="utf-8")
    return changed


def main() -> None:
    pages = [Path(p) for p in sys.argv[1:]] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        n = update(page)
        if n:
            print(f"{page.relative_to(ROOT) if page.is_absolute() else page}: {n} transcript(s) rewritten")


if __name__ == "__main__":
    main()

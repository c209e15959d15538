"""Put the latest benchmark table into the documentation's benchmark page
(docs/benchmarks/index.md) and benchmarks/README.md (between the bench:start/end markers).

    python benchmarks/update_readme.py [benchmarks/results/latest.json]

The table is rendered from the results file, never typed by hand, so both pages stay true. Both
show the chart from benchmarks/results as results/<chart> (the site's hook puts that folder
beside its benchmark page). The README's headline figures are written by hand from these runs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from skillpilot.bench import render_markdown

REPO = Path(__file__).resolve().parents[1]
START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def main() -> None:
    results = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "benchmarks" / "results" / "latest.json"
    document = json.loads(results.read_text(encoding="utf-8"))
    machine = document.get("machine", {})
    chart = results.with_suffix(".png").name
    folder = results.parent.resolve().relative_to(REPO / "benchmarks").as_posix()
    header = (
        f"Run of {document['date'][:10]} on {machine.get('cpus', '?')} cores "
        f"({machine.get('machine', '')}, {machine.get('memory_gb', '?')} GB); chart: "
        f"![benchmark]({folder}/{chart})\n\n"
    )
    for readme in (REPO / "docs" / "benchmarks" / "index.md", REPO / "benchmarks" / "README.md"):
        text = readme.read_text(encoding="utf-8")
        blocks = re.findall(re.escape(START) + ".*?" + re.escape(END), text, flags=re.S)
        if len(blocks) != 1:
            raise SystemExit(f"{readme}: expected one {START} ... {END} block")
        table = f"{START}\n{header}{render_markdown(document)}\n{END}"
        readme.write_text(text.replace(blocks[0], table), encoding="utf-8")


if __name__ == "__main__":
    main()

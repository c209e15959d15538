"""How SkillPilot grows with the catalog: index, first route, warm routes and memory at N skills.

    python benchmarks/scale.py [--sizes 294,10000,50000] [--variant forks|realistic]
                               [--json benchmarks/results/scale.json]

The catalogs are built at run time (nothing generated is committed) as one JSON tool catalog
from real texts: the 294 development skills of the shared bench corpus and MetaTool's tool
descriptions (``plugin_info.json``, ``plugin_des.json``, ``big_tool_des.json``), real texts
first. One recipe, two variants:

- ``forks`` (the default, issue 22.8): each base text has about ten forks (the same text under
  a numbered name, every other fork with two words swapped for words of another description),
  the shape of a marketplace full of re-published skills; when the real texts run out, new base
  texts join the first half of one real description to the second half of another;
- ``realistic``: two forks per base text, so most skills are distinct texts.

At 294 the catalog is the development corpus itself (its SKILL.md folders).

Each measurement runs in its own process, as a user would meet it:

- cold index: ``skillpilot index`` of the catalog into a fresh home (both default encoders);
- unchanged re-index: the same command again (nothing changed: no model may load);
- first route: ``skillpilot route`` in a fresh process (interpreter start included);
- warm route p50 / p99 over the 160 development queries (after one warm-up pass), the same
  for the keyword-only router (``router.enableSemantic: false``) on the same index;
- RSS after load (current resident set after the first route) and the peak.

Timings on a shared machine are noisy: run it on a quiet one for the README table, and read
the fitted exponents (time ~ N^b) as the trend, not the third digit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from corpus import BENCH

from skillpilot.bench.report import machine

HERE = Path(__file__).resolve().parent
SKILLS = BENCH / "skills"
METATOOL = BENCH / "metatool" / "dataset"
QUERIES = BENCH / "queries" / "real-dev.jsonl"
FORKS = {"forks": 10, "realistic": 2}
SEED = 19


def real_texts() -> list[tuple[str, str]]:
    """(name, description) of every real text: the bench skills, then MetaTool's tools."""
    from skillpilot.skills import load_skills

    texts = [(s.name, s.description) for s in load_skills([SKILLS]).skills]
    for item in json.loads((METATOOL / "plugin_info.json").read_text(encoding="utf-8")):
        texts.append((item["name_for_model"], item["description_for_model"]))
    for name in ("plugin_des.json", "big_tool_des.json"):
        texts.extend(json.loads((METATOOL / name).read_text(encoding="utf-8")).items())
    seen: set[str] = set()
    unique = []
    for name, description in texts:
        if description and description not in seen:
            seen.add(description)
            unique.append((name, description))
    return unique


def catalog(size: int, forks: int, seed: int = SEED) -> list[dict[str, str]]:
    """``size`` tools: base texts (real first, then halves of two joined), each forked ``forks`` times."""
    rng = random.Random(seed)
    real = real_texts()
    vocabulary = sorted({w for _, d in real for w in d.split() if w.isalpha() and len(w) > 3})
    bases = list(real)
    while len(bases) * forks < size:
        (name_a, text_a), (_, text_b) = rng.sample(real, 2)
        words_a, words_b = text_a.split(), text_b.split()
        joined = " ".join(words_a[: max(1, len(words_a) // 2)] + words_b[len(words_b) // 2 :])
        bases.append((f"{name_a}-mix{len(bases)}", joined))
    tools: list[dict[str, str]] = []
    names: set[str] = set()
    for copy in range(forks):
        for number, (name, description) in enumerate(bases):
            if len(tools) == size:
                return tools
            words = description.split()
            if copy % 2 and len(words) > 4:
                for _ in range(2):
                    words[rng.randrange(len(words))] = rng.choice(vocabulary)
            label = name if copy == 0 else f"{name}-fork{copy}"
            if label in names:  # a catalog skips a repeated name: number the later ones
                label = f"{label}-{number}"
            names.add(label)
            tools.append({"name": label, "description": " ".join(words)})
    return tools


def _run(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 3):  # 3: the route passed through, a normal answer
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def worker(home: str, keyword_only: bool) -> dict[str, Any]:
    """In a fresh process: first route, warm p50 / p99 over the dev queries, RSS."""
    from skillpilot import SkillPilot

    queries = [json.loads(line)["query"] for line in QUERIES.read_text(encoding="utf-8").splitlines()]
    started = time.perf_counter()
    overrides: dict[str, Any] = {"log_enabled": False, "feedback_enabled": False}
    if keyword_only:
        overrides["enable_semantic"] = False
    pilot = SkillPilot(home=home, **overrides)
    pilot.route(queries[0])
    first = time.perf_counter() - started
    rss = rss_mib()
    for query in queries:
        pilot.route(query)
    samples = []
    for query in queries:
        began = time.perf_counter()
        pilot.route(query)
        samples.append((time.perf_counter() - began) * 1000)
    return {
        "first_route_in_process_s": round(first, 2),
        "p50_ms": round(float(np.percentile(samples, 50)), 2),
        "p99_ms": round(float(np.percentile(samples, 99)), 2),
        "rss_after_load_mib": rss,
        "rss_peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "conflict_groups": len(pilot.conflict_groups()),
    }


def rss_mib() -> float:
    """This process's resident set now, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def measure(size: int, variant: str, work: Path) -> dict[str, Any]:
    home = work / f"home-{size}"
    env = {
        **os.environ,
        "SKILLPILOT_HOME": str(home),
        "SKILLPILOT_LOG_ENABLED": "false",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    env.pop("SKILLPILOT_STORE", None)
    if size == 294:
        target = SKILLS
    else:
        target = work / f"catalog-{variant}-{size}.json"
        target.write_text(json.dumps(catalog(size, FORKS[variant]), ensure_ascii=False), encoding="utf-8")
    cli = [sys.executable, "-m", "skillpilot"]
    cold, _ = _run([*cli, "index", str(target), "--json"], env)
    again, _ = _run([*cli, "index", str(target), "--json"], env)
    first, _ = _run([*cli, "route", "turn this PDF into a spreadsheet", "--json"], env)
    row: dict[str, Any] = {
        "skills": size,
        "variant": variant if size != 294 else "bench corpus",
        "cold_index_s": round(cold, 1),
        "unchanged_reindex_s": round(again, 2),
        "first_route_fresh_process_s": round(first, 2),
    }
    for keyword_only in (False, True):
        _, out = _run(
            [sys.executable, __file__, "--worker", str(home)] + (["--keyword-only"] if keyword_only else []), env
        )
        found = json.loads(out)
        if keyword_only:
            row["keyword_p50_ms"] = found["p50_ms"]
        else:
            row.update(found)
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def fit(rows: list[dict[str, Any]], metric: str) -> float | None:
    """The exponent b of metric ~ a * N^b (least squares on logs)."""
    points = [(r["skills"], r[metric]) for r in rows if r.get(metric)]
    if len(points) < 2:
        return None
    sizes, values = np.log([p[0] for p in points]), np.log([p[1] for p in points])
    return round(float(np.polyfit(sizes, values, 1)[0]), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="294,10000,50000")
    parser.add_argument("--variant", choices=sorted(FORKS), default="forks")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--worker")
    parser.add_argument("--keyword-only", action="store_true")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.keyword_only)))
        return
    with tempfile.TemporaryDirectory(prefix="skillpilot-scale-") as scratch:
        rows = [measure(int(n), args.variant, Path(scratch)) for n in args.sizes.split(",")]
    metrics = (
        "cold_index_s",
        "first_route_fresh_process_s",
        "p50_ms",
        "p99_ms",
        "keyword_p50_ms",
        "rss_after_load_mib",
    )
    report = {
        "machine": machine(),
        "rows": rows,
        "growth_exponent": {m: fit(rows, m) for m in metrics},
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

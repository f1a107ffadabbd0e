"""Reference verification on HALLMARK: detection, false positives, calibration, cost.

Runs ``doiget verify``'s real code (readers, matcher, rate gate, answer cache) against an
offline replay of Crossref, DBLP and arXiv built from real records (``hallmark_replay``
says exactly which), served through the test suite's replay TLS server and the
DOIGET_HOST_MAP seam.

    python benchmarks/reference_check.py                       # the shared dev split
    DOIGET_BENCHMARK_DATA=DIR python benchmarks/reference_check.py   # DIR/hallmark/...
    python benchmarks/reference_check.py path/to/split.jsonl --pool path/to/pool.jsonl
    python benchmarks/reference_check.py --shards 6 --rows /tmp/rows.jsonl
    python benchmarks/reference_check.py --write-calibration   # refit on fold A

The split is shared out over ``--shards`` processes, each a separate doiget client
with its own data directory, answer cache and rate budget (DBLP one request a second,
arXiv one every three, as for any user), and their rows are merged in input order.

An entry is flagged when its verdict is ``miscited`` or ``not_found``; ``uncertain``
counts as not flagged. The split is measured whole and in two folds (A: entries at
even positions, B: odd). Confidence is scored against correctness (verified on a
valid entry, flagged on a hallucinated one) for the expected calibration error (ECE,
10 bins). The shipped confidence table is fitted on fold A only, so its ECE on fold B
is an honest held-out figure; the ECE of fold A is measured with a table refitted on
fold B the same way.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from smoke import FIXTURES, parse_args

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hallmark_replay import PoolReplay, load_pool, replay_records, title_key  # noqa: E402

from doiget.net.network import Network  # noqa: E402
from doiget.runtime import load_runtime  # noqa: E402
from doiget.verify.calibration import evidence  # noqa: E402
from doiget.verify.contracts import Row  # noqa: E402
from doiget.verify.lookup import AnswerStore  # noqa: E402
from doiget.verify.readers import read_bibtex  # noqa: E402
from doiget.verify.service import Verifier  # noqa: E402

from replay import ReplayUpstream  # noqa: E402

# The shared benchmark data beside the checkout, or where DOIGET_BENCHMARK_DATA says.
DEFAULT_DIR = (
    Path(os.environ.get("DOIGET_BENCHMARK_DATA", ROOT.parent / "shared" / "fixtures" / "benchmark"))
    / "hallmark"
)
CALIBRATION = ROOT / "src" / "doiget" / "verify" / "data" / "calibration.json"
FOLDS = {"A": 0, "B": 1}


def _bibtex(entry: dict[str, Any]) -> str:
    lines = [f"@{entry['bibtex_type']}{{{entry['bibtex_key']},"]
    for name, value in entry["fields"].items():
        lines.append(f"  {name} = {{{value}}},")
    return "\n".join(lines) + "\n}\n"


def _ece(points: list[tuple[float, bool]], bins: int = 10) -> float:
    total = len(points)
    error = 0.0
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        inside = [(c, ok) for c, ok in points if low < c <= high or (index == 0 and c == 0)]
        if inside:
            confidence = sum(c for c, _ in inside) / len(inside)
            accuracy = sum(ok for _, ok in inside) / len(inside)
            error += len(inside) / total * abs(confidence - accuracy)
    return error


def _right(entry: dict[str, Any], row: Row) -> bool:
    if entry["label"] == "VALID":
        return row.verdict == "verified"
    return row.verdict in ("miscited", "not_found")


def fit(pairs: list[tuple[dict[str, Any], Row]]) -> dict[str, float]:
    """Per kind of evidence, (right + 1) / (verdicts + 2) over ``pairs`` (the rule of
    succession: never 0 or 1, near the observed share once a kind is seen often)."""
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for entry, row in pairs:
        tally = counts[evidence(row)]
        tally[0] += _right(entry, row)
        tally[1] += 1
    return {kind: round((right + 1) / (n + 2), 3) for kind, (right, n) in sorted(counts.items())}


# -- one shard: a separate client against its own replay server -----------------------


async def _verify(entries: list[dict[str, Any]], env: dict[str, str]) -> list[Row]:
    runtime = load_runtime(env)
    network = Network(runtime.settings)
    store = AnswerStore(runtime.settings.data_dir / "verify-answers")
    verifier = Verifier(network, store, mailto="bench@example.org")
    cited = [read_bibtex(_bibtex(entry))[0] for entry in entries]
    try:
        return (await verifier.verify_many(cited)).results
    finally:
        await network.aclose()


def run_shard(args: argparse.Namespace) -> None:
    """Verify entries ``index % shards == shard`` and write their rows to ``--out``."""
    shard, shards = (int(part) for part in args.shard.split("/"))
    entries = _entries(args.split)
    records = replay_records(entries, load_pool(args.pool))
    mine = [(i, e) for i, e in enumerate(entries) if i % shards == shard]
    with tempfile.TemporaryDirectory() as tmp, ReplayUpstream().start(Path(tmp)) as upstream:
        PoolReplay(records).route(upstream)
        env = {**upstream.isolated_env(Path(tmp)), "DOIGET_EMAIL": "bench@example.org"}
        started = time.monotonic()
        rows = anyio.run(_verify, [e for _, e in mine], env)
        seconds = time.monotonic() - started
        requests = collections.Counter(r.host for r in upstream.requests)
    with args.out.open("w", encoding="utf-8") as out:
        for (index, _), row in zip(mine, rows, strict=True):
            out.write(json.dumps({"index": index, "row": row.model_dump(mode="json")}) + "\n")
        out.write(json.dumps({"seconds": seconds, "requests": dict(requests)}) + "\n")


def run_all(args: argparse.Namespace, count: int) -> tuple[list[Row], dict[str, Any]]:
    """Every entry's row, in input order, from ``--shards`` processes run at once."""
    rows: list[Row | None] = [None] * count
    cost: dict[str, Any] = {"seconds": [], "requests": collections.Counter()}
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"shard-{i}.jsonl" for i in range(args.shards)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    str(args.split),
                    "--pool",
                    str(args.pool),
                    "--shard",
                    f"{i}/{args.shards}",
                    "--out",
                    str(out),
                ],
                env=env,
            )
            for i, out in enumerate(outs)
        ]
        for proc in procs:
            if proc.wait() != 0:
                raise SystemExit(f"a shard failed (exit {proc.returncode})")
        for out in outs:
            *lines, summary = out.read_text(encoding="utf-8").splitlines()
            for line in lines:
                item = json.loads(line)
                rows[item["index"]] = Row.model_validate(item["row"])
            tail = json.loads(summary)
            cost["seconds"].append(tail["seconds"])
            cost["requests"].update(tail["requests"])
    return [row for row in rows if row is not None], cost


# -- the report --------------------------------------------------------------------------


def report(pairs: list[tuple[dict[str, Any], Row]], known_titles: set[str]) -> dict[str, Any]:
    """Detection, false positives, F1, per type and tier, uncertain share and ECE."""
    tp = fp = fn = tn = uncertain = 0
    by_type: dict[str, list[bool]] = collections.defaultdict(list)
    by_tier: dict[str, list[bool]] = collections.defaultdict(list)
    fp_known = known = 0
    for entry, row in pairs:
        flagged = row.verdict in ("miscited", "not_found")
        uncertain += row.verdict == "uncertain"
        if entry["label"] == "VALID":
            fp += flagged
            tn += not flagged
            if title_key(entry["fields"]["title"]) in known_titles:
                known += 1
                fp_known += flagged
        else:
            tp += flagged
            fn += not flagged
            by_type[entry["hallucination_type"]].append(flagged)
            by_tier[str(entry.get("difficulty_tier"))].append(flagged)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "entries": len(pairs),
        "valid": fp + tn,
        "hallucinated": tp + fn,
        "detection_rate": recall,
        "false_positive_rate": fp / (fp + tn) if fp + tn else 0.0,
        "false_positive_rate_pool_works": fp_known / known if known else 0.0,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "precision": precision,
        "uncertain_share": uncertain / len(pairs),
        "ece_shipped_table": _ece([(row.confidence, _right(e, row)) for e, row in pairs]),
        "per_type": {k: (sum(v) / len(v), len(v)) for k, v in sorted(by_type.items())},
        "per_tier": {k: (sum(v) / len(v), len(v)) for k, v in sorted(by_tier.items())},
    }


def _cross_ece(test: list[tuple[dict[str, Any], Row]], table: dict[str, float]) -> float:
    return _ece([(table.get(evidence(row), 0.5), _right(e, row)) for e, row in test])


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _print(results: dict[str, dict[str, Any]], cost: dict[str, Any]) -> None:
    names = list(results)
    print("\n| measure | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    shown = (
        "entries", "valid", "hallucinated", "detection_rate", "false_positive_rate",
        "false_positive_rate_pool_works", "f1", "precision", "uncertain_share",
        "ece_shipped_table", "ece_cross_fold",
    )  # fmt: skip
    for name in shown:
        cells = []
        for fold in names:
            value = results[fold].get(name)
            cells.append(
                "-" if value is None else f"{value:.3f}" if isinstance(value, float) else f"{value}"
            )
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n| type / tier | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    for group in ("per_type", "per_tier"):
        for key in results[names[0]][group]:
            shares = [results[fold][group].get(key) for fold in names]
            cells = [f"{share[0]:.3f} ({share[1]})" if share else "-" for share in shares]
            label = key if group == "per_type" else f"tier {key}"
            print(f"| {label} | " + " | ".join(cells) + " |")
    entries = results[names[0]]["entries"]
    total = sum(cost["requests"].values())
    print(f"\nrequests per reference: {total / entries:.2f} ({dict(cost['requests'])})")
    print(f"wall seconds: {cost['wall']:.0f} ({cost['wall'] / entries:.3f} per reference, "
          f"{len(cost['seconds'])} clients; one client: "
          f"{sum(cost['seconds']) / entries:.2f} s per reference)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", nargs="?", type=Path, default=DEFAULT_DIR / "dev_public.jsonl")
    parser.add_argument("--pool", type=Path, default=DEFAULT_DIR / "real_records_pool.jsonl")
    parser.add_argument("--shards", type=int, default=6, help="client processes run at once")
    parser.add_argument("--rows", type=Path, help="write every row (JSON Lines) here")
    parser.add_argument("--from-rows", type=Path, help="report on rows written by --rows")
    parser.add_argument("--write-calibration", action="store_true",
                        help="refit the shipped confidence table on fold A")  # fmt: skip
    parser.add_argument("--shard", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parse_args(
        parser,
        split=FIXTURES / "hallmark_tiny" / "dev_public.jsonl",
        pool=FIXTURES / "hallmark_tiny" / "real_records_pool.jsonl",
        shards=2,
    )
    if args.shard:
        run_shard(args)
        return
    entries = _entries(args.split)
    pool = load_pool(args.pool)
    started = time.monotonic()
    if args.from_rows:
        saved = _entries(args.from_rows)
        rows = [Row.model_validate(item["row"]) for item in saved]
        cost = {"seconds": [0.0], "requests": collections.Counter(), "wall": 0.0}
    else:
        rows, cost = run_all(args, len(entries))
        cost["wall"] = time.monotonic() - started
    if args.rows:
        with args.rows.open("w", encoding="utf-8") as handle:
            for entry, row in zip(entries, rows, strict=True):
                shown = {
                    "key": entry["bibtex_key"],
                    "label": entry["label"],
                    "type": entry.get("hallucination_type"),
                    "fields": entry["fields"],
                }
                handle.write(json.dumps(shown | {"row": row.model_dump(mode="json")}) + "\n")
    pairs = list(zip(entries, rows, strict=True))
    folds = {name: pairs[start::2] for name, start in FOLDS.items()}
    tables = {name: fit(part) for name, part in folds.items()}
    if args.write_calibration:
        data = json.loads(CALIBRATION.read_text(encoding="utf-8"))
        data["fitted_on"] = f"{args.split.name}, fold A (entries at even positions)"
        data["confidence"] = tables["A"]
        CALIBRATION.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    known = {title_key(record.title) for record in pool}
    results = {"all": report(pairs, known)}
    for name, part in folds.items():
        results[f"fold {name}"] = report(part, known)
        other = "B" if name == "A" else "A"
        results[f"fold {name}"]["ece_cross_fold"] = _cross_ece(part, tables[other])
    print(json.dumps({"tables": tables, **results}, indent=2, default=list))
    _print(results, cost)


if __name__ == "__main__":
    main()

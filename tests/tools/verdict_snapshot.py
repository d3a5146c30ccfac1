"""A refactoring's before/after check: run a set of targets with their shipped expectations and keep, for each, the
exit status, every clause's verdict and every test's outcome and verdicts; then compare two snapshots.

    python tests/tools/verdict_snapshot.py take OUT.json [--set quick|full] [--only NAME ...]
    python tests/tools/verdict_snapshot.py diff BEFORE.json AFTER.json

`take` runs `kafka-conformance run` once per row of the set (in this checkout: PYTHONPATH is set to it), each into
a folder of its own beside OUT.json, and writes OUT.json. `diff` prints each row whose exit status, clause verdicts
or test outcomes differ and exits 1 if any does (0: the same). A run's durations, times and seeds are left out:
they differ between any two runs. Verdicts that depend on a wall clock (an expectation with a `chance` key) can
differ between two runs of the same code; the diff names them so they can be read, not hidden.

This is not a test (it takes minutes to hours, and needs the targets' extras, Go, Node and Java); a refactoring's
closing note gives the commands and the diff.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PROFILES = ("kafka-0.10.0", "kafka-0.10", "kafka-2.8", "kafka-3.9", "kafka-4.0", "kafka-4.1")
_CLIENTS = ("kafka-python", "aiokafka", "confluent-kafka", "java", "franz-go", "sarama", "kafka-go", "kafkajs")
_CODECS = ("kafka-python", "aiokafka", "aiokafka-pure", "java", "franz-go")

# (name, target, profile or None): the quick set needs no Go, Node, Java or broker package.
QUICK = [(f"model@{p}", "model", p) for p in _PROFILES] + [("reference", "reference", None)]
FULL = (
    QUICK
    + [(t, t, None) for t in ("tansu", "noida", "rdkafka-mock", "kfake", "kafka")]
    + [(f"client:{c}@{p}", f"client:{c}", p) for c in _CLIENTS for p in ("kafka-2.8", "kafka-4.0")]
    + [(f"codec:{c}@{p}", f"codec:{c}", p) for c in _CODECS for p in ("kafka-2.8", "kafka-4.0")]
)
SETS = {"quick": QUICK, "full": FULL}


def _summary(verdicts: dict) -> dict:
    return {
        "exit_status": verdicts.get("exit_status"),
        "clauses": verdicts.get("clauses", {}),
        "tests": {
            t["nodeid"]: {"outcome": t["outcome"], "verdicts": t.get("verdicts", {})} for t in verdicts.get("tests", [])
        },
    }


def take(out: Path, rows: list[tuple[str, str, str | None]]) -> int:
    env = dict(os.environ, PYTHONPATH=str(ROOT), KTS_QUIET="1")
    snapshot: dict[str, dict] = {}
    for name, target, profile in rows:
        folder = out.parent / (out.stem + "-runs") / name.replace(":", "_").replace("@", "_")
        argv = [sys.executable, "-m", "conformance", "run", "--target", target, "--quiet", "--out", str(folder)]
        if profile:
            argv += ["--profile", profile]
        began = time.monotonic()
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        path = folder / "verdicts.json"
        if path.is_file():
            snapshot[name] = _summary(json.loads(path.read_text()))
        else:
            snapshot[name] = {"exit_status": proc.returncode, "error": (proc.stderr or proc.stdout).strip()[-500:]}
        print(f"{name}: exit {proc.returncode}, {time.monotonic() - began:.0f} s", flush=True)
    out.write_text(json.dumps(snapshot, indent=1, sort_keys=True))
    return 0


def diff(before: dict, after: dict) -> int:
    differences = 0
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        if b is None or a is None:
            print(f"{name}: only {'after' if b is None else 'before'}")
            differences += 1
            continue
        lines = []
        if b.get("exit_status") != a.get("exit_status"):
            lines.append(f"  exit {b.get('exit_status')} -> {a.get('exit_status')} {a.get('error', '')}")
        for clause in sorted(set(b.get("clauses", {})) | set(a.get("clauses", {}))):
            was, now = b.get("clauses", {}).get(clause), a.get("clauses", {}).get(clause)
            if was != now:
                lines.append(f"  {clause}: {was} -> {now}")
        for test in sorted(set(b.get("tests", {})) | set(a.get("tests", {}))):
            was, now = b.get("tests", {}).get(test), a.get("tests", {}).get(test)
            if was != now:
                lines.append(f"  {test}: {was} -> {now}")
        if lines:
            differences += 1
            print(name)
            print("\n".join(lines))
    print(f"{differences} of {len(set(before) | set(after))} runs differ")
    return 1 if differences else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    taking = sub.add_parser("take")
    taking.add_argument("out", type=Path)
    taking.add_argument("--set", choices=sorted(SETS), default="quick")
    taking.add_argument("--only", nargs="*", help="row names of the set (default all)")
    comparing = sub.add_parser("diff")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "take":
        rows = [r for r in SETS[args.set] if not args.only or r[0] in args.only]
        return take(args.out.resolve(), rows)
    return diff(json.loads(args.before.read_text()), json.loads(args.after.read_text()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

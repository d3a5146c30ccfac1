"""`kafka-conformance compare`: a target's clause verdicts against the in-process model's, profile by profile.

The reference broker serves the model over the Kafka protocol, so the suites over the wire must give exactly
the verdicts they give in process: any difference is a bug of the wire path (the adapter, the client, the
server) or of the harness, never a finding about Kafka. The same command compares a served mutant with the
in-process mutant (`--target reference:mutant:ID --with mutant:ID`).

Both runs use the same derandomized Hypothesis profile. Each run's pytest output goes to a log file in
`--out`; the command prints one line per profile and every clause whose verdicts differ, and exits 1 on a
difference, or on a verdict outside `--require` (default PASS and N/A: a known-good target has nothing else).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from conformance.commands.usage import add_quiet
from conformance.judging.results import ResultsError, read_results
from conformance.judging.verdicts import Verdict
from conformance.plugin.launcher import SuitesRun, pytest_command, suites_dir
from conformance.plugin.run_options import add_command_options
from conformance.targets.kinds.implementation import Kind
from conformance.targets.registry import (
    TargetError,
    check_target,
    fixed_profile,
    obtain_target,
    parse_target,
    targets_help,
)
from conformance.targets.target import MODEL, ServedBy
from models.profiles import PROFILES

DEFAULT_PROFILES = ("kafka-4.0", "kafka-3.9", "kafka-2.8")
DEFAULT_REQUIRE = (Verdict.PASS, Verdict.NOT_APPLICABLE)
USAGE_ERROR = 4  # pytest's exit code for a usage error (pytest.ExitCode.USAGE_ERROR): here, a target not had


class CompareError(Exception):
    """Bad input to `compare` (a usage error: the message names the problem and the fix)."""


@dataclass(frozen=True)
class RunVerdicts:
    """One run's clause verdicts, as its verdicts.json gives them."""

    target: str
    profile: str
    clauses: dict[str, str]
    exit_status: int
    log: Path
    failed_tests: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    """The target's run and the baseline's under one profile."""

    profile: str
    target: RunVerdicts
    baseline: RunVerdicts

    def differences(self) -> list[tuple[str, str, str]]:
        """(clause, target verdict, baseline verdict) wherever they differ (a clause one run lacks reads "-")."""
        clauses = sorted(set(self.target.clauses) | set(self.baseline.clauses))
        return [
            (c, self.target.clauses.get(c, "-"), self.baseline.clauses.get(c, "-"))
            for c in clauses
            if self.target.clauses.get(c) != self.baseline.clauses.get(c)
        ]

    def outside(self, allowed: tuple[str, ...]) -> list[tuple[str, str]]:
        """(clause, verdict) of the target's clauses whose verdict is not allowed."""
        return [(c, v) for c, v in sorted(self.target.clauses.items()) if v not in allowed]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_quiet(parser)
    parser.add_argument(
        "--target",
        default="reference",
        help="the target to compare (default reference): "
        + targets_help(lambda spec: spec.kind is Kind.BROKER and spec.served_by is not ServedBy.IN_PROCESS),
    )
    parser.add_argument(
        "--with",
        dest="baseline",
        default=None,
        help="the in-process baseline (default: model; for reference:mutant:ID, mutant:ID)",
    )
    parser.add_argument(
        "--profiles",
        default=None,
        help=f"comma-separated behaviour profiles (default {','.join(DEFAULT_PROFILES)}; for kafka:<version>, "
        "the line's own)",
    )
    parser.add_argument(
        "--hypothesis-profile",
        default="ci",
        choices=["fast", "ci", "broker", "dev", "thorough"],
        help="the Hypothesis budget of both runs (default ci: derandomized, 100 examples)",
    )
    parser.add_argument(
        "--require",
        default=",".join(v.value for v in DEFAULT_REQUIRE),
        help="the only clause verdicts the target may have (default PASS,N/A); 'any' checks agreement only",
    )
    add_command_options(parser, SuitesRun, ("clauses", "suites"))  # as in `run` (conformance.plugin.launcher)
    parser.add_argument("--out", default="reports/out/compare", help="where each run's verdicts and log go")


def baseline_of(target: str) -> str:
    """The in-process twin of a broker target: the mutant a reference broker serves (`mutant:<id>`), else the
    model."""
    parsed = parse_target(target)
    return parsed.served if parsed.kind is Kind.BROKER else MODEL


def default_profiles(target: str) -> str:
    """The profiles compared when --profiles is not given: the one a target fixes (a Kafka line behaves as one
    profile), else DEFAULT_PROFILES."""
    try:
        return fixed_profile(target) or ",".join(DEFAULT_PROFILES)
    except TargetError as exc:
        raise CompareError(str(exc)) from None


def parse_inputs(args: argparse.Namespace) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    if args.profiles is None:
        args.profiles = default_profiles(args.target)
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    if not profiles:
        raise CompareError("--profiles is empty: name at least one, e.g. --profiles kafka-4.0")
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown:
        raise CompareError(f"unknown profile(s) {', '.join(unknown)}: choose from {', '.join(PROFILES)}")
    words = {v.value for v in Verdict}
    if args.require.strip().lower() == "any":
        allowed: tuple[str, ...] = tuple(sorted(words))
    else:
        allowed = tuple(w.strip() for w in args.require.split(",") if w.strip())
        bad = [w for w in allowed if w not in words]
        if bad:
            choices = ", ".join(sorted(words))
            raise CompareError(f"--require: unknown verdict(s) {', '.join(bad)}: choose from {choices}")
    return profiles, allowed, args.clauses or ()


# Bad input this command raises as its own exception: the CLI prints it as one line, exit 2.
USAGE_ERRORS: tuple[type[Exception], ...] = (CompareError,)


def run(args: argparse.Namespace, out: TextIO) -> int:
    profiles, allowed, clauses = parse_inputs(args)
    try:
        baseline = args.baseline or baseline_of(args.target)
        for profile in profiles:
            check_target(args.target, profile)
            check_target(baseline, profile)
        suites = suites_dir(args.suites)
        for name in (args.target, baseline):  # a download or a build, before any run (docs/setup-failures.md)
            obtain_target(name, profiles[0])
    except TargetError as exc:
        raise CompareError(str(exc)) from None
    root = Path(args.out)
    failed = False
    for profile in profiles:
        runs = {
            name: SuitesRun(
                target=name,
                profile=profile,
                hypothesis_profile=args.hypothesis_profile,
                suites=suites,
                clauses=clauses,
                verdicts_json=root / f"{_slug(name)}-{profile}" / "verdicts.json",
                log_dir=root / f"{_slug(name)}-{profile}" / "logs",
            )
            for name in (args.target, baseline)
        }
        # The two runs at once: the in-process one is CPU-bound in its own process, the served one mostly waits
        # on its server process.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            futures = {name: pool.submit(_execute, r) for name, r in runs.items()}
            results = {name: f.result() for name, f in futures.items()}
        comparison = Comparison(profile, results[args.target], results[baseline])
        failed |= _report(comparison, allowed, out)
    return 1 if failed else 0


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in ".-" else "-" for c in name)


def _execute(run: SuitesRun) -> RunVerdicts:
    assert run.verdicts_json is not None
    folder = run.verdicts_json.parent
    folder.mkdir(parents=True, exist_ok=True)
    run.verdicts_json.unlink(missing_ok=True)
    log = folder / "pytest.log"
    with log.open("w") as stream:
        finished = subprocess.run(pytest_command(run), stdout=stream, stderr=subprocess.STDOUT, check=False)
    if finished.returncode == USAGE_ERROR:  # the target could not be had or started: no verdict to compare
        said = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("ERROR: ")]
        raise CompareError(f"the run of {run.target} under {run.profile}: {said[-1][7:] if said else 'a usage error'}"
                           f" (see {log})")  # fmt: skip
    if not run.verdicts_json.exists():
        raise CompareError(
            f"the run of {run.target} under {run.profile} wrote no verdicts (pytest exit {finished.returncode}): "
            f"see {log}"
        )
    try:
        results = read_results(run.verdicts_json)
    except ResultsError as exc:
        raise CompareError(f"the run of {run.target} under {run.profile}: {exc}; see {log}") from None
    failed = tuple(t.nodeid for t in results.tests if t.outcome == "failed")
    clauses = {cid: v.value for cid, v in results.clauses.items()}
    return RunVerdicts(run.target, run.profile, clauses, results.exit_status, log, failed)


def _report(comparison: Comparison, allowed: tuple[str, ...], out: TextIO) -> bool:
    """Print the profile's lines; whether it failed."""
    target, baseline = comparison.target, comparison.baseline
    counts = Counter(target.clauses.values())
    spread = ", ".join(f"{v} {n}" for v, n in sorted(counts.items()))
    differences = comparison.differences()
    outside = comparison.outside(allowed)
    same = "the same verdicts" if not differences else f"{len(differences)} clause(s) differ"
    out.write(
        f"{comparison.profile}: {target.target} vs {baseline.target}: {len(target.clauses)} clauses, {same} "
        f"({target.target}: {spread})\n"
    )
    for clause, mine, theirs in differences:
        out.write(f"  DIFFERS {clause}: {target.target} {mine}, {baseline.target} {theirs}\n")
    for clause, verdict in outside:
        out.write(f"  NOT ALLOWED {clause}: {verdict} (allowed: {', '.join(allowed)})\n")
    for run in (target, baseline):
        if differences and run.failed_tests:
            out.write(f"  failed on {run.target}: {', '.join(run.failed_tests)}\n")
    if differences or outside:
        out.write(f"  logs: {target.log} and {baseline.log}\n")
    return bool(differences or outside)

"""`kafka-conformance audit`: audit mode on the command line (conformance.oracles.audit_job).

    kafka-conformance audit --target tansu                       # a generated workload on a managed Tansu
    kafka-conformance audit --target mutant:lookup-last-match    # ... on a seeded mutant
    kafka-conformance audit --target broker --bootstrap-servers HOST:PORT --topic orders --partition 3

Without --topic the audit writes its own workload (conformance.oracles.audit_job.populate) into new topics
and deletes them afterwards; with --topic it only reads the user's topic and asks ListOffsets.
Writes into --out: audit.md, audit.json, records-<topic>.parquet, rows/audit-*.parquet (campaign rows,
so the matrix can show audits) and allure-results/. Exit 0 when every answer agrees with the records
(or disagrees only where the expectations file says so: an entry covers a disagreement on its clause and
observable, with its matchers; entries scoped to one suite test do not apply to the audit), 1 on a
disagreement no entry covers, 2 on bad input (a malformed expectations file included).
"""

from __future__ import annotations

import argparse
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from conformance.campaign.tasks import CampaignError
from conformance.commands.usage import add_master, add_quiet, output_directory
from conformance.judging.verdicts import FAILS_RUN
from conformance.plugin.launcher import SuitesRun
from conformance.plugin.run_options import SettingsError, add_command_options, resolve_namespace
from conformance.targets.kinds.implementation import Kind
from conformance.targets.registry import (
    TargetError,
    check_target,
    default_profile,
    open_target,
    parse_target,
    said_version,
    targets_help,
)
from conformance.targets.target import ServedBy
from conformance.wire.client_config import (
    SecurityConfigError,
    config_bootstrap,
    resolve_security,
)
from conformance.wire.security import PLAINTEXT, SecuritySettings
from models.constants import ErrorCode

if TYPE_CHECKING:
    from conformance.judging.expectations import Expectation
    from conformance.oracles.audit_job import AuditResult

EXIT_OK, EXIT_DISAGREED = 0, 1


# The options this command shares with `run`: declared once, in conformance.plugin.launcher.SuitesRun.
SHARED = ("profile", "bootstrap_servers", "security", "wire_timeout", "expectations", "no_expectations")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_quiet(parser)
    parser.add_argument(
        "--target",
        required=True,
        help=f"the broker to audit: {targets_help(lambda spec: spec.kind is Kind.BROKER)}",
    )
    # As in `run` (conformance.plugin.launcher.SuitesRun); --timeout is --wire-timeout's older name here.
    add_command_options(
        parser,
        SuitesRun,
        SHARED,
        aliases={"wire_timeout": ("--timeout",)},
    )
    parser.add_argument("--topic", default=None, help="audit this existing topic instead of a generated workload")
    parser.add_argument("--partition", type=int, default=0, help="the partition of --topic (default 0)")
    parser.add_argument("--seed", type=int, default=1, help="the generated workload's seed (default 1)")
    parser.add_argument("--batches", type=int, default=60, help="batches in the generated workload (default 60)")
    parser.add_argument(
        "--max-targets", type=int, default=600, help="timestamps asked through ListOffsets per topic (default 600)"
    )
    add_master(parser)
    parser.add_argument("--out", default=None, help="output directory (default reports/out/audit-<target>)")


def load_entries(path: str | None) -> tuple[Expectation, ...]:
    """The entries of an expectations file (none without one); a file that cannot be read or is malformed is
    a CampaignError (one line, exit 2) naming the file and the fix."""
    if not path:
        return ()
    from conformance.judging.expectations import ExpectationsError, load_expectations

    try:
        return load_expectations(path)
    except (OSError, ExpectationsError) as exc:
        raise CampaignError(f"--expectations: {exc}") from None


def check_topic(
    bootstrap: str, topic: str, partition: int, *, timeout: float, security: SecuritySettings = PLAINTEXT
) -> None:
    """--topic on the user's cluster, checked before Spark starts (which takes many seconds): the cluster answers,
    and the topic and its partition exist; otherwise a CampaignError naming the fix."""
    from conformance.targets.routes.wire_adapter.kafka_wire import check_reachable
    from conformance.wire.client import ApiError, WireClient, error_name
    from conformance.wire.connection import WireError

    try:
        check_reachable(bootstrap, timeout=timeout, security=security)
        client = WireClient(bootstrap, timeout=timeout, security=security)
        try:
            described = client.metadata([topic]).topics.get(topic)
        finally:
            client.close()
    except (TargetError, WireError, ApiError) as exc:
        raise CampaignError(str(exc)) from None
    code = described.error_code if described is not None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        raise CampaignError(
            f"--topic {topic!r}: no such topic on {bootstrap} (Metadata answered UNKNOWN_TOPIC_OR_PARTITION): "
            "pass an existing topic, or leave out --topic to audit a generated workload"
        )
    if code:
        raise CampaignError(f"--topic {topic!r}: Metadata answered {error_name(code)} for it on {bootstrap}")
    assert described is not None
    if partition not in described.partitions:
        count = len(described.partitions)
        raise CampaignError(f"--partition {partition}: topic {topic!r} has partitions 0..{count - 1}: pass one of them")


# Bad input this command raises as its own exception: the CLI prints it as one line, exit 2.
USAGE_ERRORS: tuple[type[Exception], ...] = (CampaignError,)


def run(args: argparse.Namespace, out_stream: TextIO) -> int:
    from conformance.campaign.engine import SparkUnavailable, spark_session, write_rows
    from conformance.oracles.audit_job import (
        AuditError,
        AuditTask,
        Workload,
        audit_generated,
        audit_partition,
        audit_rows,
        build,
        write_report,
    )

    try:
        resolve_namespace(args, SuitesRun, SHARED)
        security = resolve_security(lambda dest: getattr(args, dest, None))
        parsed = parse_target(args.target)
        if args.bootstrap_servers is None and parsed.served_by is ServedBy.CLUSTER:
            args.bootstrap_servers = config_bootstrap(lambda dest: getattr(args, dest, None))
        if args.profile is None:
            args.profile = default_profile(parsed)
        target = check_target(parsed, args.profile, bootstrap=args.bootstrap_servers, security=security)
    except (TargetError, SecurityConfigError, SettingsError) as exc:
        raise CampaignError(str(exc)) from None
    if args.topic is not None and target.served_by is not ServedBy.CLUSTER:
        raise CampaignError("--topic reads a topic on your cluster: use it with --target broker --bootstrap-servers")
    if args.batches < 1 or args.max_targets < 2 or args.partition < 0:
        raise CampaignError("--batches must be >= 1, --max-targets >= 2 and --partition >= 0")
    if not args.wire_timeout > 0:
        raise CampaignError(f"--wire-timeout {args.wire_timeout:g}: give a positive number of seconds, e.g. 10")
    # The one rule of `run`, `pytest suites` and the campaign (conformance.plugin.launcher.choose_expectations).
    from conformance.plugin.launcher import LauncherError, choose_expectations, suites_dir

    try:
        suites: Path | None = suites_dir(None)
    except LauncherError:  # no suites installed: nothing ships
        suites = None
    choice = choose_expectations(
        args.target, args.expectations, none=args.no_expectations, suites=suites, parsed=target
    )
    entries = load_entries(str(choice.path) if choice.path is not None else None)
    if args.topic is not None:
        check_topic(args.bootstrap_servers, args.topic, args.partition, timeout=args.wire_timeout, security=security)
    out = output_directory(args.out or f"reports/out/audit-{args.target.replace(':', '-')}")
    campaign_id = f"audit-{uuid.uuid4().hex[:8]}"
    out_stream.write(f"{choice.describe()}\n")  # once the input is known good: a usage error stays one line
    began = time.monotonic()
    try:
        spark = spark_session(args.master, app="kafka-conformance audit")
    except SparkUnavailable as exc:
        raise CampaignError(str(exc)) from None
    spark.sparkContext.setLogLevel("ERROR")
    out_stream.write(f"spark session ({args.master}) started in {time.monotonic() - began:.1f} s\n")
    try:
        with open_target(
            target, args.profile, bootstrap=args.bootstrap_servers, log_dir=out / "logs", timeout=args.wire_timeout,
            security=security,
        ) as (factory, _logs):
            if args.topic is not None:
                import dataclasses

                factory = dataclasses.replace(factory, topic_prefix="")  # the user's topic, as named
            impl = build(factory)
            version = said_version(target, impl)
            try:
                if args.topic is not None:
                    results = [
                        audit_partition(
                            spark, impl, args.topic, out=out, partition=args.partition,
                            target_name=args.target, max_targets=args.max_targets, expectations=entries,
                        )
                    ]  # fmt: skip
                else:
                    workload = Workload(seed=args.seed, batches=args.batches)
                    results = audit_generated(
                        spark, impl, workload, out=out, target_name=args.target, max_targets=args.max_targets,
                        expectations=entries,
                    )  # fmt: skip
            finally:
                impl.close()
        write_report(results, out)
        task = AuditTask(args.target, impl.profile.name)
        rows = audit_rows(results, task, campaign_id=campaign_id, seed=args.seed, implementation_version=version)
        write_rows(out, task, rows)
    except (AuditError, TargetError) as exc:
        raise CampaignError(str(exc)) from None
    finally:
        spark.stop()
    _write_allure(out, campaign_id, out_stream)
    failing = 0
    for result in results:
        bad = [f"{c} on {', '.join(_uncovered(result, c))}" for c, v in result.verdicts().items() if v in FAILS_RUN]
        failing += len(bad)
        out_stream.write(
            f"{result.target} {result.topic}: {result.records} records, {sum(result.questions.values())} questions, "
            f"{len(result.disagreements)} disagreement(s)" + (f" ({'; '.join(bad)})" if bad else "") + "\n"
        )
        if result.records == 0:
            out_stream.write(
                f"  {result.topic} holds no records (only the empty-log answers were checked): is the topic name "
                "right? (a broker that creates topics on first use answers for a new, empty one)\n"
            )
    out_stream.write(f"audit report: {out / 'audit.md'} ({time.monotonic() - began:.0f} s)\n")
    return EXIT_DISAGREED if failing else EXIT_OK


def _uncovered(result: AuditResult, clause: str) -> list[str]:
    """The observables of `clause` on which the result disagrees and no entry covers the disagreement."""
    from conformance.oracles.audit_job import covering

    return list(dict.fromkeys(
        v.observable.id
        for d in result.disagreements if d.clause == clause
        for v in d.violations if covering(v, result.expectations) is None
    ))  # fmt: skip


def _write_allure(out: Path, campaign_id: str, log: TextIO) -> None:
    from reports.campaign_allure import write_campaign_results

    written = write_campaign_results(out / "rows", out / "allure-results", campaign_id=campaign_id, log=log)
    log.write(f"allure results: {written} in {out / 'allure-results'}\n")

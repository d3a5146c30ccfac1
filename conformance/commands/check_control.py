"""`kafka-conformance check-control URL`: does a control plane honour the contract the suite
relies on? schemathesis generates requests from the OpenAPI document shipped with the suite
(conformance/control/openapi.json, never one the user serves), valid and invalid ones, through its
phases (the document's examples, coverage of boundaries and invalid values, random fuzzing, and stateful
sequences along the document's links), sends them to URL and runs its standard checks on every answer:
not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
response_headers_conformance, negative_data_rejection, positive_data_acceptance, unsupported_method and
the rest. The output ends with one verdict line, PASS or FAIL (or ERROR when it could not check).

Why schemathesis' engine (`schemathesis.engine.from_schema(schema).execute()`) and not its pytest
integration: this is a command, not a test session; the engine is what `schemathesis run` drives, with
every phase above, and it reports as a stream of events: each finished scenario carries its requests,
responses and check results, so this module counts the requests and collects the failures, with a
curl reproduction, without parsing anyone's terminal output.

A user's state: leader moves and clock changes are the point of the checks and do happen. POST /reset
(a fresh cluster) and POST /retention (which, after a clock pushed far ahead, deletes every segment of
every topic with a finite retention.ms) are left out unless asked (--include-reset, --include-retention).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit, urlunsplit

from conformance.control.control_plane import OPENAPI_PATH, openapi_document

if TYPE_CHECKING:
    from schemathesis import Config
    from schemathesis.schemas import BaseSchema

__all__ = [
    "DISRUPTIVE_OPERATIONS",
    "INSTALL_HINT",
    "STATE_DEPENDENT_422",
    "ControlCheck",
    "Finding",
    "add_arguments",
    "check_control_plane",
    "load_schema",
    "run",
    "schemathesis_config",
    "verdict_line",
]

NAME = "check-control"
INSTALL_HINT = "pip install 'kafka-timestamp-conformance[control]'"
DEFAULT_MAX_EXAMPLES = 100
DEFAULT_TIMEOUT = 10.0

# operationId -> the flag that lets check-control call it: they wreck a user's state (see the module doc).
DISRUPTIVE_OPERATIONS = {"reset": "--include-reset", "runRetention": "--include-retention"}

# The contract answers 422 to a well-formed request the cluster cannot apply in its current state: a clock
# advance that would leave 0..2^53-1, a leader move to a broker id that does not exist. schemathesis'
# positive_data_acceptance expects schema-valid requests to succeed or be 404/409; it accepts 422 on these
# two operations only. Everywhere else a valid request answered 422 (or 400) still fails the check.
STATE_DEPENDENT_422 = ("advanceClock", "moveLeader")
_POSITIVE_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]

_EXIT_PASS, _EXIT_FAIL, _EXIT_ERROR = 0, 1, 2


def schemathesis_config(base_url: str, *, max_examples: int, timeout: float, seed: int) -> Config:
    """The schemathesis configuration of a control-plane check: every phase, positive and negative data,
    every check, one worker, no example database or request cache on disk (a run is replayed by its seed)."""
    from schemathesis import Config

    return Config.from_dict(
        {
            "base-url": base_url,
            "seed": seed,
            "workers": 1,
            "request-timeout": timeout,
            "cache": {"enabled": False},
            "generation": {"mode": "all", "max-examples": max_examples, "database": "none"},
            "operations": [
                {
                    "include-operation-id": list(STATE_DEPENDENT_422),
                    "checks": {"positive_data_acceptance": {"expected-statuses": [*_POSITIVE_STATUSES, "422"]}},
                }
            ],
        }
    )


def load_schema(
    base_url: str,
    *,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    timeout: float = DEFAULT_TIMEOUT,
    seed: int = 0,
    exclude: Iterable[str] = (),
    topic: str | None = None,
) -> BaseSchema:
    """The shipped OpenAPI document as a schemathesis schema aimed at `base_url`, without the operations
    whose ids are in `exclude`; `topic` replaces the document's example topic (one that exists on the
    cluster behind `base_url` lets the examples read and move a real leader)."""
    import schemathesis

    config = schemathesis_config(base_url, max_examples=max_examples, timeout=timeout, seed=seed)
    document = openapi_document()
    if topic is not None:
        document["components"]["parameters"]["topic"]["example"] = topic
    schema = schemathesis.openapi.from_dict(document, config=config)
    excluded = list(exclude)
    return schema.exclude(operation_id=excluded) if excluded else schema


@dataclass
class Finding:
    """One way the control plane broke the contract: a check that failed on an operation."""

    operation: str  # "PUT /brokers/{broker}/clock"
    check: str  # "not_a_server_error", or "error" for a request that got no answer
    title: str
    message: str
    reproduction: str  # a curl command
    response: str  # "500 text/html: ..." or ""
    requests: int = 1  # requests that showed it


@dataclass
class ControlCheck:
    """What a run of the checks saw."""

    url: str
    requests: int = 0
    broken_requests: set[str] = field(default_factory=set)  # case ids
    findings: dict[tuple[str, str, str], Finding] = field(default_factory=dict)
    left_out: tuple[str, ...] = ()  # operations not exercised, e.g. "POST /reset (--include-reset)"
    stopped: str = ""  # why the run ended early, if it did

    def add(self, case_id: str, finding: Finding) -> None:
        self.broken_requests.add(case_id)
        key = (finding.operation, finding.check, finding.title)
        if key in self.findings:
            self.findings[key].requests += 1
        else:
            self.findings[key] = finding

    @property
    def passed(self) -> bool:
        return self.requests > 0 and not self.findings and not self.stopped


def verdict_line(check: ControlCheck) -> str:
    """The one line that ends every check-control run."""
    if check.passed:
        return f"{NAME}: PASS: {check.requests} requests to {check.url}, 0 failures"
    if check.requests == 0:
        return f"{NAME}: FAIL: no request to {check.url} was checked ({check.stopped or 'nothing ran'})"
    broken = list(dict.fromkeys(f"{f.check} on {f.operation}" for f in check.findings.values()))
    what = ", ".join(broken[:4]) + (f", and {len(broken) - 4} more" if len(broken) > 4 else "")
    count = len(check.broken_requests)
    line = f"{NAME}: FAIL: {count} of {check.requests} requests broke the contract"
    if what:
        line += f" ({what})"
    if check.stopped:
        line += f"; stopped early: {check.stopped}"
    return line


def check_control_plane(schema: BaseSchema, url: str, *, progress: Callable[[str], None]) -> ControlCheck:
    """Run schemathesis' phases and checks over `schema` (aimed at `url`); `progress` gets a line per phase."""
    from schemathesis.engine import StopReason, events, from_schema
    from schemathesis.engine.run import INTERNAL_PHASES

    check = ControlCheck(url=url)
    before = 0
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            _record_scenario(check, event.recorder)
        elif isinstance(event, events.NonFatalError):
            # No answer at all (connection refused or reset, a read timeout: a hang) or a schema problem.
            first_line = (event.info.message or event.info.title).strip().splitlines()[0][:200]
            finding = Finding(event.label, "error", event.info.title, first_line, "", "")
            check.add(f"error:{event.label}:{event.info.title}", finding)
        elif isinstance(event, events.FatalError):
            check.stopped = f"schemathesis stopped: {event.exception}"
        elif isinstance(event, events.PhaseFinished) and event.phase.name not in INTERNAL_PHASES:
            sent = check.requests - before
            before = check.requests
            if event.phase.skip_reason is not None and not sent:
                progress(f"  {event.phase.name.value}: skipped ({event.phase.skip_reason.display})")
            else:
                broken = len(check.broken_requests)
                progress(f"  {event.phase.name.value}: {sent} requests, {broken} broke the contract so far")
        elif isinstance(event, events.EngineFinished):
            for failure in event.failures:
                finding = Finding(failure.operation or "-", "after-run", failure.title, failure.message, "", "")
                check.add(f"after-run:{failure.title}", finding)
            if event.stop_reason is StopReason.SERVER_UNAVAILABLE:
                check.stopped = f"{url} stopped answering"
            elif event.stop_reason is StopReason.INTERRUPTED:
                check.stopped = "interrupted"
    return check


def _record_scenario(check: ControlCheck, recorder: Any) -> None:
    check.requests += len(recorder.interactions)
    for case_id, nodes in recorder.checks.items():
        for node in nodes:
            info = node.failure_info
            if info is None:
                continue
            case = recorder.cases[case_id].value if case_id in recorder.cases else None
            operation = info.failure.operation or (case.operation.label if case is not None else recorder.label)
            interaction = recorder.interactions.get(case_id)
            response = _describe_response(interaction.response) if interaction is not None else ""
            message = "\n".join(line for line in info.failure.message.strip().splitlines() if line.strip())
            check.add(case_id, Finding(operation, node.name, info.failure.title, message, info.code_sample, response))


def _describe_response(response: Any) -> str:
    if response is None:
        return ""
    content_type = response.headers.get("content-type", ["-"])
    content_type = content_type[0] if isinstance(content_type, list) else content_type
    body = " ".join((response.content or b"")[:300].decode("utf-8", errors="replace").split())
    return f"{response.status_code} {content_type} {body[:160]}".rstrip()


def _print_findings(check: ControlCheck, out: TextIO) -> None:
    for finding in check.findings.values():
        times = f" ({finding.requests} requests)" if finding.requests > 1 else ""
        out.write(f"  FAIL {finding.operation}: {finding.check}: {finding.title}{times}\n")
        for line in finding.message.splitlines()[:3]:
            out.write(f"      {line.strip()[:160]}\n")
        if finding.response:
            out.write(f"      got: {finding.response}\n")
        # One curl per request, the last one broke the contract (a stateful failure needs the ones before).
        for step in (line.strip() for line in finding.reproduction.splitlines()):
            if step:
                out.write(f"      reproduce: {step}\n")


# --- the command ---------------------------------------------------------------------------------------


def _base_url(text: str) -> str:
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a control plane's base URL: pass http://HOST:PORT (e.g. http://127.0.0.1:8080)"
        )
    try:
        parts.port  # noqa: B018 (validates the port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} has no valid port: pass http://HOST:PORT") from None
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def _topic(text: str) -> str:
    if not re.fullmatch(r"[a-zA-Z0-9._-]{1,249}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a Kafka topic name ([a-zA-Z0-9._-], 1..249 characters)")
    return text


def _positive(kind: Callable[[str], Any], what: str) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or value <= 0:
            raise argparse.ArgumentTypeError(f"{what} must be a positive number, not {text!r}")
        return value

    return parse


def _add_positive(
    parser: argparse.ArgumentParser, flag: str, kind: Callable[[str], Any], default: Any, metavar: str, text: str
) -> None:
    """An option that takes a positive number of `kind`; anything else is argparse's usage error naming `flag`."""
    parser.add_argument(flag, type=_positive(kind, flag), default=default, metavar=metavar, help=text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Check a control plane against the OpenAPI document shipped with the suite "
        "(conformance/control/openapi.json) with schemathesis: valid and invalid requests to every "
        "operation, its standard checks on every answer, one verdict line at the end "
        "(exit 0 PASS, 1 FAIL, 2 could not check). The checks DO set and advance broker clocks and move "
        "partition leaders on the cluster behind URL: point it at a test build or a fake, not at a cluster "
        "whose data you need. POST /reset and POST /retention are left out unless asked."
    )
    parser.add_argument("url", type=_base_url, metavar="URL", help="the control plane's base URL, e.g. http://127.0.0.1:8080")
    examples = f"generated examples per operation in the fuzzing phase (default {DEFAULT_MAX_EXAMPLES})"
    _add_positive(parser, "--max-examples", int, DEFAULT_MAX_EXAMPLES, "N", examples)
    wait = f"seconds to wait for each answer; no answer by then is a failure (default {DEFAULT_TIMEOUT:g})"
    _add_positive(parser, "--timeout", float, DEFAULT_TIMEOUT, "S", wait)
    parser.add_argument(
        "--topic",
        type=_topic,
        default=None,
        help="a topic that exists behind URL, so that leader reads and moves can succeed "
        "(default: the document's example, kts-control)",
    )
    parser.add_argument("--seed", type=int, default=None, help="schemathesis' seed (default: random, printed)")
    parser.add_argument(
        "--include-reset", action="store_true", help="also call POST /reset (a fresh cluster: your topics are gone)"
    )
    parser.add_argument(
        "--include-retention",
        action="store_true",
        help="also call POST /retention (after the clock changes it may delete your topics' data)",
    )


# GET /capabilities answered with these by a server that has no such resource: a web server, not a control plane.
_NO_SUCH_RESOURCE = (404, 405, 410, 501)


def _cannot_check(url: str, timeout: float) -> str | None:
    """Why `url` cannot be checked, as the ERROR line's text: nothing answers there, or what answers is not a
    control plane (GET /capabilities, the one operation every control plane has, is not there, or answers with
    something that is not JSON). None when a control plane answers; whether its answers honour the contract
    (a 500, a body of the wrong shape) is for the checks to judge."""
    try:
        with urllib.request.urlopen(f"{url}/capabilities", timeout=timeout) as response:
            content_type = response.headers.get_content_type()
            body = response.read(64 * 1024)
    except urllib.error.HTTPError as error:
        if error.code in _NO_SUCH_RESOURCE:
            return _not_a_control_plane(url, f"GET /capabilities answered {error.code} {error.reason}")
        return None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return (
            f"cannot reach a control plane at {url} within {timeout:g} s ({str(reason) or type(error).__name__}): "
            "is it running? pass its base URL, e.g. http://127.0.0.1:8080"
        )
    try:
        json.loads(body)
    except ValueError:
        return _not_a_control_plane(url, f"GET /capabilities answered {content_type}, not JSON")
    return None


def _not_a_control_plane(url: str, what: str) -> str:
    return (
        f"{url} is not a control plane (no /capabilities: {what}): pass the base URL of your control plane, "
        "where GET /capabilities answers with its capabilities in JSON"
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    url: str = args.url
    try:
        import schemathesis  # noqa: F401 (an optional dependency: the `control` extra)
    except ImportError:
        out.write(f"{NAME}: ERROR: schemathesis is not installed: {INSTALL_HINT}\n")
        return _EXIT_ERROR
    started = time.monotonic()
    why_not = _cannot_check(url, args.timeout)
    if why_not is not None:
        out.write(f"{NAME}: ERROR: {why_not}\n")
        return _EXIT_ERROR
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    exclude = [op for op, flag in DISRUPTIVE_OPERATIONS.items() if not getattr(args, _dest(flag))]
    schema = load_schema(
        url, max_examples=args.max_examples, timeout=args.timeout, seed=seed, exclude=exclude, topic=args.topic
    )
    left_out = _left_out(exclude)
    out.write(
        f"{NAME}: {url} against {OPENAPI_PATH.name} shipped with the suite, seed {seed}"
        + (f"; left out: {', '.join(left_out)}" if left_out else "")
        + "\n"
    )
    out.flush()

    def progress(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    check = check_control_plane(schema, url, progress=progress)
    check.left_out = tuple(left_out)
    _print_findings(check, out)
    if check.findings:
        flags = "".join(f" {flag}" for op, flag in DISRUPTIVE_OPERATIONS.items() if op not in exclude)
        flags += f" --topic {args.topic}" if args.topic else ""
        out.write(
            f"  replay: kafka-conformance check-control {url} --seed {seed} --max-examples {args.max_examples}"
            f" --timeout {args.timeout:g}{flags}\n"
        )
    out.write(f"  {time.monotonic() - started:.1f} s\n")
    out.write(verdict_line(check) + "\n")
    return _EXIT_PASS if check.passed else _EXIT_FAIL


def _dest(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


def _left_out(excluded: Sequence[str]) -> list[str]:
    labels = []
    for path, item in openapi_document()["paths"].items():
        for method, spec in item.items():
            if isinstance(spec, dict) and spec.get("operationId") in excluded:
                labels.append(f"{method.upper()} {path} ({DISRUPTIVE_OPERATIONS[spec['operationId']]})")
    return labels

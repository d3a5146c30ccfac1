"""The target table and its parser (conformance.targets.registry): every name the table lists parses and reads back
as itself, a bad name is one line naming the choices, and a row registered at run time (a fake managed broker and
its opener, defined here) is seen by checking, opening, the help texts and the campaign without touching any other
module; so is a library registered at run time (one row of the library table: a client through the driver protocol),
in `run --help`, the campaign's groups and the matrix."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import cli
from conformance.campaign.aggregate import Cell, Matrix, implementation_matrix
from conformance.campaign.tasks import task_table
from conformance.commands.campaign import expand_targets
from conformance.errors import TargetError
from conformance.faults import MUTANTS
from conformance.judging.verdicts import Verdict
from conformance.targets.brokers.kafka import HISTORY_TARGETS, KAFKA_LINES
from conformance.targets.kinds import client_target
from conformance.targets.kinds.implementation import Kind, implementation_version, reference_version
from conformance.targets.kinds.library import CLIENT_ROLE, Library
from conformance.targets.libraries import LIBRARIES
from conformance.targets.libraries.model.model_broker import ModelFactory
from conformance.targets.registry import (
    MutantForm,
    TargetSpec,
    check_target,
    default_profile,
    expectations_file,
    known_targets,
    open_target,
    parse_target,
    register_library,
    register_target,
    resolve_target,
    said_version,
    spec_of,
    table,
    target_kind,
    target_version,
    targets_help,
)
from conformance.targets.target import Opened, Opening, ServedBy, Target, read_name

SUITES = Path(__file__).resolve().parents[1] / "suites"
BROKER_MUTANT = "lookup-last-match"
FIRST_MUTANT = sorted(MUTANTS)[0]


def _one_line(exc: pytest.ExceptionInfo[TargetError]) -> str:
    message = str(exc.value)
    assert "\n" not in message, message
    return message


# ------------------------------------------------------------------------------------ names and the parser


def test_every_name_of_the_table_parses_and_reads_back_as_itself() -> None:
    for spec in table():
        target = parse_target(spec.name)
        assert str(target) == spec.name
        assert (target.kind, target.implementation, target.served_by) == (spec.kind, spec.name, spec.served_by)
        assert target.mutant is None and target.version is None and target.path is None
        assert parse_target(str(target)) == target
        assert spec.name in known_targets()


def test_every_mutant_form_parses_and_reads_back_as_itself() -> None:
    broker = [m for m in sorted(MUTANTS) if MUTANTS[m].kind is Kind.BROKER][:3]
    served = [s.name for s in table() if MutantForm.SERVED in s.mutants and s.name != "reference"]
    names = [
        *(f"mutant:{m}" for m in MUTANTS),
        *(f"reference:mutant:{m}" for m in broker),
        *(f"{client}@reference:mutant:{m}" for client in served for m in broker),
    ]
    assert served == [s.name for s in table() if s.kind is Kind.CLIENT]
    for name in names:
        target = parse_target(name)
        assert target.mutant is not None
        assert str(target) == name and parse_target(str(target)) == target


def test_a_seeded_mutant_is_of_its_fault_kind_and_seeded_into_that_kind_s_reference() -> None:
    for mutant in MUTANTS.values():
        target = parse_target(f"mutant:{mutant.id}")
        assert target.kind is mutant.kind and target_kind(f"mutant:{mutant.id}") is mutant.kind
        assert target.seeded == mutant.id and target.served == "model"
        assert target.implementation in ("model", "codec:model", "client:model")
    served = parse_target(f"client:java@reference:mutant:{BROKER_MUTANT}")
    assert served.kind is Kind.CLIENT and served.seeded is None and served.served == f"mutant:{BROKER_MUTANT}"
    assert parse_target("client:java@reference") == parse_target("client:java")


def test_an_unknown_target_is_one_line_listing_the_table_not_every_mutant() -> None:
    with pytest.raises(TargetError) as caught:
        parse_target("kafak")
    message = _one_line(caught)
    assert message.startswith("unknown target 'kafak'")
    for spec in table():
        assert spec.name in message
    assert "mutant:<id>" in message and "`kafka-conformance mutants --list`" in message
    assert FIRST_MUTANT not in message


@pytest.mark.parametrize("name", ["mutant:nope", "reference:mutant:nope", "client:model@reference:mutant:nope"])
def test_an_unknown_mutant_names_the_command_that_lists_them(name: str) -> None:
    with pytest.raises(TargetError) as caught:
        check_target(name, "kafka-4.0")
    message = _one_line(caught)
    assert "unknown mutant 'nope'" in message and "`kafka-conformance mutants --list`" in message
    assert f"--target {name.removesuffix('nope')}" in message  # an example in the same form


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("codec:nope", "unknown codec library 'nope'"),
        ("client:nope", "unknown client library 'nope'"),
        ("reference:mutant:codec-builder-sets-lat-bit", "not a broker mutant"),
        ("tansu@reference:mutant:lookup-last-match", "tansu does not run against the reference broker"),
        ("client:model@tansu", "runs against the reference broker or Apache Kafka"),
        ("mutant:", "names no mutant"),
        ("tansu@kafka:4.0", "only a client runs against Apache Kafka"),
        ("client:kafka-python@kafka:0.10.1", "Apache Kafka 0.10.1 is not a supported target"),
    ],
)
def test_bad_names_are_one_line_errors(name: str, said: str) -> None:
    with pytest.raises(TargetError) as caught:
        parse_target(name)
    assert said in _one_line(caught)


@pytest.mark.parametrize(("name", "against", "profile"), [
    ("client:kafka-python@kafka:4.0", "kafka:4.0", "kafka-4.0"),
    ("client:java@kafka:3.9", "kafka:3.9", "kafka-3.9"),
    ("client:aiokafka@kafka", "kafka", "kafka-4.2"),
])  # fmt: skip
def test_a_client_runs_against_apache_kafka_under_the_lines_profile(name: str, against: str, profile: str) -> None:
    target = parse_target(name)
    assert (str(target), target.against, target.kind, default_profile(target)) == (name, against, Kind.CLIENT, profile)
    with pytest.raises(TargetError, match=f"pass --profile {profile} or none"):
        check_target(name, "kafka-2.8")


def test_versions_and_paths_parse_and_are_refused_where_no_implementation_takes_them() -> None:
    assert read_name("tansu==0.6.0") == read_name("tansu").__class__("tansu", version="0.6.0")
    assert read_name("noida=/src/noida").path == "/src/noida"
    versioned = read_name("client:kafka-python==2.0.2@reference:mutant:x")
    assert (versioned.implementation, versioned.version, versioned.mutant) == ("client:kafka-python", "2.0.2", "x")
    assert str(versioned) == "client:kafka-python==2.0.2@reference:mutant:x"
    for spec in table():
        if spec.versions:  # Apache Kafka: its lines (tests/test_kafka_target.py)
            assert parse_target(f"{spec.name}==1.0").version == "1.0"
        else:
            with pytest.raises(TargetError, match=f"^{spec.name} does not take a version yet"):
                parse_target(f"{spec.name}==1.0")
        if spec.paths:  # the libraries a driver builds (conformance/targets/routes/driver), and your own driver
            assert parse_target(f"{spec.name}=/somewhere").path == "/somewhere"
        else:
            with pytest.raises(TargetError, match=f"^{spec.name} does not take a local path yet"):
                parse_target(f"{spec.name}=/somewhere")
    with pytest.raises(TargetError, match="give a version"):
        read_name("tansu==")


def test_where_a_target_is_served_decides_the_addresses_it_takes() -> None:
    with pytest.raises(TargetError, match="needs a bootstrap address"):
        check_target("broker", "kafka-4.0")
    assert check_target("broker", "kafka-4.0", bootstrap="127.0.0.1:9092").served_by is ServedBy.CLUSTER
    for name in ("tansu", "reference", f"reference:mutant:{BROKER_MUTANT}"):
        with pytest.raises(TargetError, match="is started by the suite: drop --bootstrap-servers"):
            check_target(name, "kafka-4.0", bootstrap="127.0.0.1:9092")
    for name, why in (("model", "not reached over the wire"), ("tansu", "no control plane"),
                      ("reference", "brings its own control plane")):  # fmt: skip
        with pytest.raises(TargetError, match=f"--control-url is for --target broker; target '{name}' .*{why}"):
            check_target(name, "kafka-4.0", control_url="http://127.0.0.1:1")
    with pytest.raises(TargetError, match="open it with open_target"):
        resolve_target("reference", "kafka-4.0")


def test_the_shipped_expectations_files_are_the_table_s() -> None:
    named = {spec.expectations for spec in table() if isinstance(spec.expectations, str)}
    # A Kafka line names its file of Kafka's own bugs, and so does a release with a bug of its own (the history
    # campaign runs every such release).
    named |= {name for line in KAFKA_LINES if (name := expectations_file(parse_target(f"kafka:{line}")))}
    named |= {name for target in HISTORY_TARGETS if (name := expectations_file(parse_target(target)))}
    assert all((SUITES / "expectations" / name).is_file() for name in named)
    assert {p.name for p in (SUITES / "expectations").glob("*.toml")} == named


def _option_help(command: str, flag: str = "--target") -> str:
    parser = cli.build_parser(complete=True)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return str(next(a.help for a in sub.choices[command]._actions if flag in a.option_strings))


def test_the_help_texts_are_the_table_s() -> None:
    everything = _option_help("run")
    assert all(spec.name in everything for spec in table())
    assert "reference:mutant:<id>" in everything and "client:<library>@reference:mutant:<id>" in everything
    audit = _option_help("audit")
    assert all((spec.name in audit) is (spec.kind is Kind.BROKER) for spec in table() if ":" not in spec.name)
    assert "codec:model" not in audit
    assert _option_help("serve").startswith("what to serve (default model): model or mutant:<id>")
    campaign = _option_help("campaign", "--targets")
    assert "codec:java" in campaign and "served-mutants" in campaign
    assert "broker" not in campaign.split(";")[0].split(", ")  # a campaign starts its own targets


# ------------------------------------------------------------------------------------ versions


def test_a_row_says_the_version_it_runs_where_it_knows_it_without_building_one() -> None:
    """A managed Kafka line runs its pinned release; the reference implementations are this package; a user's
    cluster says nothing over the Kafka protocol; a library says its own version once built."""
    assert target_version("kafka:4.0") == "4.0.2" and target_version("kafka:3.9") == "3.9.1"
    assert target_version("model") == target_version("reference") == reference_version()
    assert target_version(f"mutant:{BROKER_MUTANT}") == reference_version()  # seeded into the model
    assert target_version("broker") is None
    assert target_version("client:kafka-python") is None and target_version("codec:java") is None


def test_what_a_built_implementation_says_wins_over_its_row() -> None:
    class Says:
        implementation_version = "3.0.11"

    assert implementation_version(Says()) == "3.0.11" and implementation_version(object()) is None
    assert said_version("client:kafka-python==3.0.11", Says()) == "3.0.11"
    assert said_version("kafka:4.0", object()) == "4.0.2"  # a broker over the wire says nothing itself
    assert said_version("broker", object()) is None


def test_the_reference_client_and_codec_say_the_reference_version() -> None:
    from conformance.targets.kinds.codec_target import CodecFactory
    from conformance.targets.libraries.model.model_client import ReferenceClient

    assert ReferenceClient.version == reference_version()
    built = CodecFactory("model").build()
    try:
        assert implementation_version(built) == reference_version()
    finally:
        built.close()


# ------------------------------------------------------------------------------------ a row registered at run time


@contextlib.contextmanager
def open_fake_broker(target: Target, opening: Opening) -> Iterator[Opened]:
    """A stand-in for a managed broker's opener: the model with one broker, so the test sees its factory."""
    yield ModelFactory(profile=opening.profile, brokers=1), [opening.log_dir / f"{target}.log"]


FAKE = TargetSpec(
    "fake-broker", Kind.BROKER, ServedBy.MANAGED, obtained="this test", opener=open_fake_broker,
    description="a fake managed broker", versions=True, paths=True,
)  # fmt: skip


@pytest.fixture
def fake_broker() -> Iterator[TargetSpec]:
    undo = register_target(FAKE)
    try:
        yield FAKE
    finally:
        undo()


def test_a_registered_row_is_checked_and_opened_through_its_opener(fake_broker: TargetSpec, tmp_path: Path) -> None:
    target = check_target("fake-broker", "kafka-4.0")
    assert (target.kind, target.served_by) == (Kind.BROKER, ServedBy.MANAGED)
    assert target_kind("fake-broker") is Kind.BROKER
    with pytest.raises(TargetError, match="is started by the suite: drop --bootstrap-servers"):
        check_target("fake-broker", "kafka-4.0", bootstrap="127.0.0.1:9092")
    with open_target("fake-broker", "kafka-3.9", log_dir=tmp_path) as (factory, logs):
        assert factory == ModelFactory(profile="kafka-3.9", brokers=1)
        assert logs == [tmp_path / "fake-broker.log"]
    with pytest.raises(ValueError, match="in the table already"):
        register_target(FAKE)


def test_a_registered_row_takes_a_version_or_a_path_when_it_says_so(fake_broker: TargetSpec) -> None:
    versioned = parse_target("fake-broker==1.2.3")
    assert (versioned.implementation, versioned.version) == ("fake-broker", "1.2.3")
    assert str(versioned) == "fake-broker==1.2.3"
    located = parse_target("fake-broker=/src/fake")
    assert (located.path, str(located)) == ("/src/fake", "fake-broker=/src/fake")


def test_a_registered_row_is_in_the_help_texts_and_the_campaign(fake_broker: TargetSpec) -> None:
    assert "fake-broker" in targets_help()
    for command, flag in (("run", "--target"), ("audit", "--target"), ("compare", "--target"),
                          ("campaign", "--targets")):  # fmt: skip
        assert "fake-broker" in _option_help(command, flag), command
    assert "fake-broker" not in _option_help("serve")  # the reference broker serves what runs in process
    with pytest.raises(TargetError) as caught:
        parse_target("nope")
    assert "fake-broker" in _one_line(caught)
    assert "fake-broker" in expand_targets(["brokers"]) and expand_targets(["fake-broker"]) == ["fake-broker"]
    tasks = task_table(["fake-broker"], ["list_offsets"], ["kafka-4.0"], 1, 10, suites=SUITES)
    assert [t.target for t in tasks] == ["fake-broker"]


def test_an_unregistered_row_is_gone() -> None:
    undo = register_target(FAKE)
    undo()
    with pytest.raises(TargetError, match="unknown target 'fake-broker'"):
        parse_target("fake-broker")
    assert "fake-broker" not in targets_help()


# ------------------------------------------------------------------------------------ a library registered at run time

# A client library of another language through the driver protocol: one row of the library table (and, for real, its
# driver program under conformance/targets/routes/driver/go/fakelib/, which this test never builds).
FAKE_LIBRARY = Library(
    "fakelib", "go", "example.com/fakelib", "the Go module proxy", "v0.1.0", frozenset({CLIENT_ROLE}),
    "conformance.targets.routes.driver.go_build:build_go_driver", "go/fakelib",
)  # fmt: skip


@pytest.fixture
def fake_library(monkeypatch: pytest.MonkeyPatch) -> Iterator[Library]:
    # Checking a client target builds its driver; this test builds none.
    monkeypatch.setattr(client_target, "driver_command", lambda library, **_: ["fakelib-driver"])
    undo = register_library(FAKE_LIBRARY)
    try:
        yield FAKE_LIBRARY
    finally:
        undo()


def test_a_library_registered_at_run_time_is_a_target_of_the_help_the_campaign_and_the_matrix(
    fake_library: Library,
) -> None:
    target = check_target("client:fakelib", "kafka-4.0")
    assert (target.kind, target.served_by, target.library) == (Kind.CLIENT, ServedBy.REFERENCE, "fakelib")
    row = spec_of(target)
    assert row.description == (
        "example.com/fakelib v0.1.0 (go) client through the driver protocol against the reference broker"
    )
    assert row.expectations == "client-fakelib.toml" and row.versions and row.paths
    assert parse_target("client:fakelib==v0.2.0").version == "v0.2.0"
    with pytest.raises(TargetError, match="unknown codec library 'fakelib'"):
        parse_target("codec:fakelib")  # it plays the client role only
    # run --help, and every command naming targets
    assert "client:fakelib" in _option_help("run") and "client:fakelib" in _option_help("campaign", "--targets")
    assert "client:fakelib" in _option_help("check-driver")
    # the campaign's groups and its tasks
    assert expand_targets(["clients"])[-1] == "client:fakelib"
    assert f"client:fakelib@reference:mutant:{BROKER_MUTANT}" in expand_targets(["clients@served-mutants"])
    tasks = task_table(["client:fakelib"], ["client_produce"], ["kafka-4.0"], 1, 10, suites=SUITES)
    assert [t.target for t in tasks] == ["client:fakelib"]
    # the matrix: a column among the clients
    column = ("client:fakelib", "kafka-4.0")
    cells = {("CON.v2-createtime-base-plus-delta", column): Cell(Verdict.PASS.value, 1, None, 10, "")}
    matrix = implementation_matrix(Matrix(sorted({c for c, _ in cells}), [column], cells, []))
    assert [(g.kind, g.columns) for g in matrix.groups] == [(Kind.CLIENT, (column,))]


def test_an_unregistered_library_is_gone(fake_library: Library) -> None:
    with pytest.raises(ValueError, match="in the library table already"):
        register_library(FAKE_LIBRARY)
    undo = register_library(
        Library("fakelib-two", "go", "example.com/two", "the Go module proxy", "v1", frozenset({CLIENT_ROLE}), None)
    )
    undo()
    with pytest.raises(TargetError, match="unknown client library 'fakelib-two'"):
        parse_target("client:fakelib-two")
    assert "fakelib-two" not in targets_help() and "fakelib-two" not in LIBRARIES

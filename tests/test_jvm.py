"""The JVM bridge (conformance/jvm): finding Java and kafka-clients.jar, one-line errors naming the fix, the
compact formats; and, with a real JVM (e2e), the bridge compiled and Kafka's record layer as a codec."""

from __future__ import annotations

import importlib.util
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.jvm import build as bridge_module
from conformance.jvm import locate, session
from conformance.jvm.locate import JvmUnavailable
from conformance.targets.kinds.codec_library import BatchRequest
from conformance.targets.libraries.java import compact
from models.constants import LONG_MAX, Codec, TimestampType
from models.records import Header, RecordSpec

FIX = (
    "pip install 'kafka-timestamp-conformance[java]' (or pip install shigawire-apache-flink-libraries==2.0.0.post1), "
    "or set KAFKA_CLIENTS_JAR=/path/to/kafka-clients-3.9.1.jar"
)


def _jar(path: Path, version: str | None = "3.9.1") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("org/apache/kafka/common/record/MemoryRecords.class", b"")
        if version is not None:
            archive.writestr("kafka/kafka-version.properties", f"commitId=abc\nversion={version}\n")
    return path


def _no_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        locate.importlib.util, "find_spec", lambda name, *a: None if name == "pyflink" else real(name, *a)
    )


def _fake_wheel(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    real = importlib.util.find_spec
    spec = SimpleNamespace(submodule_search_locations=[str(root)])
    monkeypatch.setattr(
        locate.importlib.util, "find_spec", lambda name, *a: spec if name == "pyflink" else real(name, *a)
    )


def test_the_wheels_jar_is_found_through_the_pyflink_namespace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jar = _jar(tmp_path / "pyflink" / "lib" / "kafka-clients.jar")
    _fake_wheel(monkeypatch, tmp_path / "pyflink")
    assert locate.kafka_clients_jar({}) == jar
    assert locate.jar_version(jar) == "3.9.1"


def test_kafka_clients_jar_overrides_the_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_wheel(monkeypatch, tmp_path / "pyflink")
    _jar(tmp_path / "pyflink" / "lib" / "kafka-clients.jar")
    mine = _jar(tmp_path / "elsewhere" / "kafka-clients-3.9.1.jar")
    assert locate.kafka_clients_jar({"KAFKA_CLIENTS_JAR": str(mine)}) == mine


def test_a_missing_jar_is_one_line_naming_both_fixes(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_wheel(monkeypatch)
    with pytest.raises(JvmUnavailable) as caught:
        locate.kafka_clients_jar({})
    assert str(caught.value) == f"kafka-clients.jar not found: {FIX}"


def test_a_wrong_override_or_version_is_one_line_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_wheel(monkeypatch)
    with pytest.raises(JvmUnavailable, match=r"^KAFKA_CLIENTS_JAR=/no/such\.jar is not a file: .*unset it"):
        locate.kafka_clients_jar({"KAFKA_CLIENTS_JAR": "/no/such.jar"})
    old = _jar(tmp_path / "kafka-clients-3.7.0.jar", "3.7.0")
    with pytest.raises(JvmUnavailable) as caught:
        locate.kafka_clients_jar({"KAFKA_CLIENTS_JAR": str(old)})
    assert "is version 3.7.0, the oracle needs kafka-clients 3.9.1" in str(caught.value)
    assert str(caught.value).endswith(FIX) and "\n" not in str(caught.value)
    not_kafka = _jar(tmp_path / "other.jar", None)
    with pytest.raises(JvmUnavailable, match="not a kafka-clients jar"):
        locate.kafka_clients_jar({"KAFKA_CLIENTS_JAR": str(not_kafka)})


def test_missing_java_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(JvmUnavailable) as caught:
        locate.java_tool("java", {"PATH": str(tmp_path)})
    assert str(caught.value).startswith("java not found: install Java 17 or newer") and "JAVA_HOME" in str(caught.value)
    with pytest.raises(JvmUnavailable, match="javac not found: install a JDK"):
        locate.java_tool("javac", {"PATH": str(tmp_path)})
    with pytest.raises(JvmUnavailable, match=r"^JAVA_HOME=.* has no bin/java: point JAVA_HOME at a JDK 17"):
        locate.java_tool("java", {"JAVA_HOME": str(tmp_path), "PATH": ""})
    fake = tmp_path / "jdk" / "bin" / "java"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert locate.java_tool("java", {"JAVA_HOME": str(tmp_path / "jdk")}) == fake


def test_java_versions_are_parsed_old_and_new() -> None:
    assert session._java_major('openjdk version "17.0.15" 2025-04-15') == 17
    assert session._java_major('java version "1.8.0_392"') == 8
    assert session._java_major('openjdk version "21" 2023-09-19') == 21
    assert session._java_major("no version here") is None


def test_the_cli_prints_a_missing_jar_as_one_line_and_exits_2(tmp_path: Path) -> None:
    # A fresh process: no Spark session of this test run can hide the check.
    env = {"KAFKA_CLIENTS_JAR": str(tmp_path / "missing.jar"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "differential", "--batches", "1", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [
        f"kafka-conformance: error: KAFKA_CLIENTS_JAR={tmp_path / 'missing.jar'} is not a file: point it at "
        "kafka-clients-3.9.1.jar, or unset it to use the wheel's jar (shigawire-apache-flink-libraries==2.0.0.post1)"
    ]


def test_the_bridge_sources_ship_with_the_package_and_key_the_cache(tmp_path: Path) -> None:
    names = {p.name for p in bridge_module.source_files()}
    assert {"RecordsBridge.java", "OracleUdf.java", "BuildUdf.java", "ReadUdf.java", "DownConvertUdf.java"} <= names
    jar_a = _jar(tmp_path / "a.jar")
    jar_b = _jar(tmp_path / "b.jar", "3.9.0")
    sources = bridge_module.source_files()
    assert bridge_module._digest(sources, [jar_a]) != bridge_module._digest(sources, [jar_b])
    assert bridge_module._digest(sources, [jar_a]) == bridge_module._digest(sources, [jar_a])


# --- the compact formats ----------------------------------------------------------------------------------


def _read_blob() -> bytes:
    record = struct.pack(">qq", 7, 42) + struct.pack(">i", 1) + b"k" + struct.pack(">i", -1)
    record += struct.pack(">i", 1) + struct.pack(">i", 1) + b"h" + struct.pack(">i", 0)
    batch = struct.pack(">bbbqqqqbi", 2, 1, 1, 7, 7, 42, 7, 1, 1) + record
    return struct.pack(">bi", 0, 1) + batch


def test_a_read_result_decodes_into_batches_carrying_their_type() -> None:
    (batch,) = compact.decode_read(_read_blob())
    assert (batch.magic, batch.codec, batch.timestamp_type, batch.max_timestamp) == (
        2,
        Codec.GZIP,
        TimestampType.LOG_APPEND_TIME,
        42,
    )
    (record,) = batch.records
    assert (record.offset, record.timestamp, record.timestamp_type) == (7, 42, TimestampType.LOG_APPEND_TIME)
    assert (record.key, record.value, record.headers) == (b"k", None, (Header("h", b""),))


def test_a_refusal_and_a_truncated_answer_are_told_apart() -> None:
    refused = struct.pack(">bi", 1, 5) + b"boom!"
    assert compact.decode_read(refused) == compact.Refused("boom!")
    assert compact.decode_records_result(refused) == compact.Refused("boom!")
    with pytest.raises(compact.CompactError, match="truncated"):
        compact.decode_read(_read_blob()[:-3])
    with pytest.raises(compact.CompactError, match="unexpected bytes"):
        compact.decode_read(_read_blob() + b"\x00")


def test_a_spec_carries_every_field_in_order() -> None:
    request = BatchRequest(
        magic=2,
        records=(RecordSpec(LONG_MAX, None, b"v", (Header("é", None),)),),
        codec=Codec.ZSTD,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=5,
        base_offset=9,
    )
    spec = compact.encode_spec(request)
    assert struct.unpack_from(">bbbqqi", spec) == (2, 4, 1, 5, 9, 1)
    tail = spec[struct.calcsize(">bbbqqi") :]
    timestamp_key_value = struct.pack(">qii", LONG_MAX, -1, 1) + b"v"
    headers = struct.pack(">ii", 1, 2) + "é".encode() + struct.pack(">i", -1)
    assert tail == timestamp_key_value + headers
    assert struct.unpack_from(">bbbq", compact.encode_spec(BatchRequest(magic=1, records=())))[3] == -1


# --- with a JVM -------------------------------------------------------------------------------------------


@pytest.mark.e2e
def test_kafkas_record_layer_as_a_codec_agrees_with_the_model_on_a_simple_batch() -> None:
    from conformance.targets.kinds.codec_library import CodecRefused
    from conformance.targets.libraries.java.java_records import JavaCodec
    from models.codec import decode_batches, encode_batches
    from models.records import all_records, build_batches

    codec = JavaCodec()
    assert codec.version == "3.9.1"
    records = (RecordSpec(10, b"a", b"x"), RecordSpec(5, None, b""), RecordSpec(20, b"c", None))
    for magic in (0, 1, 2):
        for ts_type, lat in ((TimestampType.CREATE_TIME, None), (TimestampType.LOG_APPEND_TIME, 99)):
            request = BatchRequest(magic, records, Codec.GZIP, ts_type, lat, base_offset=3)
            model = build_batches(records, magic=magic, base_offset=3, codec=Codec.GZIP, timestamp_type=ts_type,
                                  log_append_time=lat)  # fmt: skip
            built = codec.build(request)
            assert decode_batches(built) == model  # Kafka's builder writes what the model's builder writes
            read = codec.read(encode_batches(model))
            assert tuple(r for b in read for r in b.records) == all_records(model)
    with pytest.raises(CodecRefused, match="IllegalArgumentException: Invalid negative timestamp -2"):
        codec.build(BatchRequest(2, (RecordSpec(-2),)))
    zstd = codec.build(BatchRequest(2, records, Codec.ZSTD))
    with pytest.raises(CodecRefused, match="UnsupportedCompressionTypeException"):
        codec.convert(zstd, to_magic=1)
    v1 = codec.convert(codec.build(BatchRequest(2, records, Codec.LZ4, base_offset=0)), to_magic=1)
    assert [r.timestamp for b in codec.read(v1) for r in b.records] == [10, 5, 20]


@pytest.mark.e2e
def test_the_session_is_one_per_process_and_drives_kafka_through_py4j() -> None:
    from conformance import jvm

    spark = jvm.spark_session()
    assert jvm.spark_session() is spark
    kafka = jvm.jvm().org.apache.kafka.common
    assert kafka.utils.AppInfoParser.getVersion() == "3.9.1"
    assert str(jvm.kafka_clients_jar()) in spark.sparkContext.getConf().get("spark.jars")
    with pytest.raises(JvmUnavailable, match="already running in this process"):
        jvm.spark_session("local[3]")

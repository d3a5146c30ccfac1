package kts.kafkaclients;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

/**
 * The codec role: Apache Kafka's record layer, as the in-process adapter (conformance/targets/libraries/java/java_records.py
 * and the bridge it calls) uses it.
 *
 * - build: MemoryRecords.builder(buffer, magic, compression, timestampType, baseOffset, logAppendTime), then
 *   appendWithOffset(baseOffset + i, timestamp, key, value, headers) per record; a missing log_append_time is
 *   NO_TIMESTAMP (-1).
 * - read: MemoryRecords.readableRecords(...).batches(), each batch's own getters and its records, which carry
 *   their batch's timestamp type as a consumer's records do (CON-1).
 * - convert: MemoryRecords.downConvert(toMagic, firstOffset, time) (RecordsUtil.downConvert, the 0.10-3.9
 *   broker's fetch path, CNV-5).
 *
 * Any exception of Kafka's code (IllegalArgumentException for a timestamp below -1 or headers below v2,
 * CorruptRecordException on a bad read, UnsupportedCompressionTypeException) is a refusal, its kind the exception's
 * class name, as the bridge reports it.
 *
 * Two calls go through reflection, because kafka-clients changed them between the versions this driver builds
 * against and one source must compile against all of them: the builder takes a CompressionType up to 3.7 and a
 * Compression (KIP-390, org.apache.kafka.common.compress) from 3.8 on; MemoryRecords.downConvert is gone in 4.0
 * (the broker no longer down-converts), so `down-convert` is declared only where the method exists.
 */
final class CodecRole implements KafkaClientsDriver.Role {
    private static final Method BUILDER = builderMethod();
    private static final Method COMPRESSION_OF = compressionOf();
    private static final Method COMPRESSION_BUILD = COMPRESSION_OF == null ? null
            : method(COMPRESSION_OF.getReturnType(), "build");
    private static final Method DOWN_CONVERT = method(MemoryRecords.class, "downConvert", byte.class, long.class,
            Time.class);

    @Override
    public void describe(ObjectNode hello) {
        ArrayNode capabilities = hello.putArray("capabilities");
        capabilities.add("build");
        capabilities.add("read");
        capabilities.add("build-log-append-time");
        if (DOWN_CONVERT != null)
            capabilities.add("down-convert");
        capabilities.add("batch-max-timestamp");
        ArrayNode codecs = hello.putArray("codecs");
        for (CompressionType type : CompressionType.values())
            codecs.add(type.name);
        for (String field : new String[] {"build_magics", "read_magics"}) {
            ArrayNode magics = hello.putArray(field);
            magics.add(0);
            magics.add(1);
            magics.add(2);
        }
    }

    @Override
    public ObjectNode handle(String op, ObjectNode request) throws Exception {
        ObjectNode ok = KafkaClientsDriver.JSON.createObjectNode();
        switch (op) {
            case "build":
                Requests.need(request, "magic", "codec", "timestamp_type", "log_append_time", "base_offset",
                        "records");
                ok.put("data", Requests.base64(refusing(() -> build(request))));
                return ok;
            case "read":
                Requests.need(request, "data");
                byte[] data = Requests.bytes(request.get("data"));
                ok.set("batches", refusing(() -> read(data)));
                return ok;
            case "convert":
                Requests.need(request, "data", "to_magic", "first_offset");
                if (DOWN_CONVERT == null)
                    throw DriverError.unsupported("kafka-clients " + KafkaClientsDriver.libraryVersion()
                            + " has no MemoryRecords.downConvert (removed in 4.0)");
                byte[] records = Requests.bytes(request.get("data"));
                byte magic = (byte) Requests.integer(request, "to_magic");
                long firstOffset = Requests.integer(request, "first_offset");
                ok.put("data", Requests.base64(refusing(() -> convert(records, magic, firstOffset))));
                return ok;
            default:
                throw DriverError.badRequest("unknown op \"" + op + "\"");
        }
    }

    @Override
    public void close() {
    }

    interface Call<T> {
        T call() throws Exception;
    }

    /** The call's result, or Kafka's exception (the cause of a reflective call's) as a refusal. */
    private static <T> T refusing(Call<T> call) throws DriverError {
        try {
            return call.call();
        } catch (DriverError e) {
            throw e;
        } catch (Exception e) {
            Throwable thrown = e instanceof InvocationTargetException && e.getCause() != null ? e.getCause() : e;
            throw DriverError.refused(thrown.getClass().getName(), thrown.getMessage());
        }
    }

    private static byte[] build(ObjectNode request) throws Exception {
        byte magic = (byte) Requests.integer(request, "magic");
        CompressionType codec = null;
        String codecName = Requests.text(request, "codec");
        for (CompressionType type : CompressionType.values())
            if (type.name.equals(codecName))
                codec = type;
        if (codec == null)
            throw DriverError.unsupported("kafka-clients has no compression codec " + codecName);
        TimestampType timestampType = Requests.timestampType(Requests.text(request, "timestamp_type"));
        Long logAppendTime = Requests.optionalInteger(request, "log_append_time");
        long baseOffset = Requests.integer(request, "base_offset");
        // A broker-side builder (LogValidator's rebuild, RecordsUtil's conversion) passes its LogAppendTime here.
        MemoryRecordsBuilder builder = (MemoryRecordsBuilder) BUILDER.invoke(null, ByteBuffer.allocate(1024), magic,
                compression(codec), timestampType, baseOffset,
                logAppendTime == null ? RecordBatch.NO_TIMESTAMP : logAppendTime.longValue());
        long offset = baseOffset;
        for (JsonNode record : request.get("records")) {
            JsonNode headerList = record.path("headers");
            Header[] headers = new Header[headerList.size()];
            for (int h = 0; h < headers.length; h++) {
                JsonNode header = headerList.get(h);
                headers[h] = new RecordHeader(header.path("key").asText(), Requests.bytes(header.get("value")));
            }
            builder.appendWithOffset(offset++, Requests.integer(record, "timestamp"), Requests.bytes(record.get("key")),
                    Requests.bytes(record.get("value")), headers);
        }
        return Utils.toArray(builder.build().buffer());
    }

    private static ArrayNode read(byte[] data) {
        ArrayNode batches = KafkaClientsDriver.JSON.createArrayNode();
        for (MutableRecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(data)).batches()) {
            ObjectNode read = batches.addObject();
            read.put("magic", batch.magic());
            read.put("base_offset", batch.baseOffset());
            read.put("last_offset", batch.lastOffset());
            read.put("timestamp_type", Requests.timestampType(batch.timestampType()));
            read.put("max_timestamp", batch.maxTimestamp());
            ArrayNode records = read.putArray("records");
            for (Record record : batch)
                records.add(Requests.record(record.offset(), record.timestamp(), batch.timestampType(),
                        record.hasKey() ? Utils.toArray(record.key()) : null,
                        record.hasValue() ? Utils.toArray(record.value()) : null, record.headers()));
        }
        return batches;
    }

    private static byte[] convert(byte[] data, byte toMagic, long firstOffset) throws Exception {
        MemoryRecords stored = MemoryRecords.readableRecords(ByteBuffer.wrap(data));
        Object converted = DOWN_CONVERT.invoke(stored, toMagic, firstOffset, Time.SYSTEM);
        MemoryRecords records = (MemoryRecords) converted.getClass().getMethod("records").invoke(converted);
        return Utils.toArray(records.buffer());
    }

    // -- the calls that differ between versions (see the class comment)

    private static Object compression(CompressionType codec) throws Exception {
        if (COMPRESSION_OF == null)
            return codec;
        return COMPRESSION_BUILD.invoke(COMPRESSION_OF.invoke(null, codec));
    }

    /** MemoryRecords.builder(ByteBuffer, byte, Compression or CompressionType, TimestampType, long, long). */
    private static Method builderMethod() {
        for (Method candidate : MemoryRecords.class.getMethods()) {
            Class<?>[] types = candidate.getParameterTypes();
            if (candidate.getName().equals("builder") && types.length == 6 && types[0] == ByteBuffer.class
                    && types[1] == byte.class && types[3] == TimestampType.class && types[4] == long.class
                    && types[5] == long.class)
                return candidate;
        }
        throw new IllegalStateException("this kafka-clients has no MemoryRecords.builder(buffer, magic, compression, "
                + "timestampType, baseOffset, logAppendTime)");
    }

    /** Compression.of(CompressionType) where kafka-clients has it (3.8+), else null. */
    private static Method compressionOf() {
        try {
            Class<?> compression = Class.forName("org.apache.kafka.common.compress.Compression");
            return compression.getMethod("of", CompressionType.class);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    private static Method method(Class<?> owner, String name, Class<?>... types) {
        try {
            return owner.getMethod(name, types);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }
}

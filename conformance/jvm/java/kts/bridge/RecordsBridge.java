package kts.bridge;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

import org.apache.kafka.common.compress.Compression;
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
 * Apache Kafka's record layer (kafka-clients) behind a compact binary interface, so that one call from Python
 * (py4j) or one Spark UDF does what would otherwise be hundreds of py4j round trips. The formats are described
 * in conformance/targets/libraries/java/compact.py, which encodes the requests and decodes the results; everything is big-endian,
 * "bytes" is an int32 length (-1 = null) followed by the data, "text" is bytes holding UTF-8.
 *
 * No method throws: a refusal of Kafka's code (an exception) is returned as status 1 with the exception's class
 * and message, so that a Spark task never fails and no row is lost.
 */
public final class RecordsBridge {
    static final byte OK = 0;
    static final byte REFUSED = 1;

    private RecordsBridge() {
    }

    /** Build a batch from a spec with MemoryRecordsBuilder: status, then the bytes (or the refusal). */
    public static byte[] build(byte[] spec) {
        Out out = new Out();
        try {
            byte[] built = buildRecords(spec);
            out.i8(OK);
            out.bytes(built);
        } catch (Throwable e) {
            out.refusal(e);
        }
        return out.toByteArray();
    }

    /** Read a record set as a consumer does (MemoryRecords.readableRecords): status, then the batches. */
    public static byte[] read(byte[] records) {
        Out out = new Out();
        try {
            Out batches = new Out();
            int count = writeBatches(batches, records);
            out.i8(OK);
            out.i32(count);
            out.raw(batches.toByteArray());
        } catch (Throwable e) {
            out = new Out();
            out.refusal(e);
        }
        return out.toByteArray();
    }

    /** Down-convert a record set (MemoryRecords.downConvert, i.e. RecordsUtil.downConvert): status, then bytes. */
    public static byte[] downConvert(byte[] records, int toMagic, long firstOffset) {
        Out out = new Out();
        try {
            byte[] converted = convertRecords(records, toMagic, firstOffset);
            out.i8(OK);
            out.bytes(converted);
        } catch (Throwable e) {
            out = new Out();
            out.refusal(e);
        }
        return out.toByteArray();
    }

    /**
     * Everything the differential oracle asks of Kafka for one case, in one call. Request: bytes spec, bytes
     * modelRecords (the model's stored batch, nullable), int32 conversions, then per conversion int8 toMagic,
     * int64 firstOffset, bytes modelConverted (the model's conversion of modelRecords, nullable). Response: a
     * sequence of nullable bytes, each a result of build/read/downConvert: build(spec); read(built) or null;
     * read(modelRecords) or null; then per conversion downConvert(modelRecords) or null; read(converted) or
     * null; read(modelConverted) or null.
     */
    public static byte[] oracle(byte[] request) {
        Out out = new Out();
        try {
            In in = new In(request);
            byte[] spec = in.bytes();
            byte[] modelRecords = in.bytes();
            byte[] built = null;
            byte[] buildResult;
            try {
                built = buildRecords(spec);
                Out ok = new Out();
                ok.i8(OK);
                ok.bytes(built);
                buildResult = ok.toByteArray();
            } catch (Throwable e) {
                Out refused = new Out();
                refused.refusal(e);
                buildResult = refused.toByteArray();
            }
            out.bytes(buildResult);
            out.bytes(built == null ? null : read(built));
            out.bytes(modelRecords == null ? null : read(modelRecords));
            int conversions = in.i32();
            for (int i = 0; i < conversions; i++) {
                int toMagic = in.i8();
                long firstOffset = in.i64();
                byte[] modelConverted = in.bytes();
                byte[] converted = null;
                if (modelRecords == null) {
                    out.bytes(null);
                } else {
                    byte[] result = downConvert(modelRecords, toMagic, firstOffset);
                    out.bytes(result);
                    if (result[0] == OK)
                        converted = new In(result, 1).bytes();
                }
                out.bytes(converted == null ? null : read(converted));
                out.bytes(modelConverted == null ? null : read(modelConverted));
            }
        } catch (Throwable e) {
            // A malformed request is a bug of ours, not Kafka's: an empty answer that the Python side reports.
            return new byte[0];
        }
        return out.toByteArray();
    }

    // ------------------------------------------------------------------------------------------------------

    static byte[] buildRecords(byte[] spec) throws IOException {
        In in = new In(spec);
        byte magic = in.i8();
        CompressionType codec = CompressionType.forId(in.i8());
        TimestampType timestampType = timestampType(in.i8());
        long logAppendTime = in.i64();
        long baseOffset = in.i64();
        int count = in.i32();
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        // A broker-side builder (LogValidator's rebuild, RecordsUtil's conversion) passes its LogAppendTime here.
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, magic, Compression.of(codec).build(),
                timestampType, baseOffset, logAppendTime);
        for (int i = 0; i < count; i++) {
            long timestamp = in.i64();
            byte[] key = in.bytes();
            byte[] value = in.bytes();
            int headerCount = in.i32();
            Header[] headers = new Header[headerCount];
            for (int h = 0; h < headerCount; h++) {
                String headerKey = new String(in.bytes(), StandardCharsets.UTF_8);
                headers[h] = new RecordHeader(headerKey, in.bytes());
            }
            builder.appendWithOffset(baseOffset + i, timestamp, key, value, headers);
        }
        return Utils.toArray(builder.build().buffer());
    }

    static TimestampType timestampType(int id) {
        for (TimestampType type : TimestampType.values())
            if (type.id == id)
                return type;
        throw new IllegalArgumentException("unknown timestamp type id " + id);
    }

    static byte[] convertRecords(byte[] records, int toMagic, long firstOffset) {
        MemoryRecords stored = MemoryRecords.readableRecords(ByteBuffer.wrap(records));
        MemoryRecords converted = stored.downConvert((byte) toMagic, firstOffset, Time.SYSTEM).records();
        return Utils.toArray(converted.buffer());
    }

    static int writeBatches(Out out, byte[] records) {
        MemoryRecords stored = MemoryRecords.readableRecords(ByteBuffer.wrap(records));
        int count = 0;
        for (MutableRecordBatch batch : stored.batches()) {
            count++;
            out.i8(batch.magic());
            out.i8(batch.compressionType().id);
            out.i8((byte) batch.timestampType().id);
            out.i64(batch.baseOffset());
            out.i64(batch.lastOffset());
            out.i64(batch.maxTimestamp());
            Optional<Long> offsetOfMax = batch.offsetOfMaxTimestamp();
            out.i64(offsetOfMax.isPresent() ? offsetOfMax.get() : -1L);
            out.i8(batch.isValid() ? (byte) 1 : (byte) 0);
            Out recordsOut = new Out();
            int recordCount = 0;
            for (Record record : batch) {
                recordCount++;
                recordsOut.i64(record.offset());
                recordsOut.i64(record.timestamp());
                recordsOut.bytes(record.hasKey() ? Utils.toArray(record.key()) : null);
                recordsOut.bytes(record.hasValue() ? Utils.toArray(record.value()) : null);
                Header[] headers = record.headers();
                recordsOut.i32(headers.length);
                for (Header header : headers) {
                    recordsOut.bytes(header.key().getBytes(StandardCharsets.UTF_8));
                    recordsOut.bytes(header.value());
                }
            }
            out.i32(recordCount);
            out.raw(recordsOut.toByteArray());
        }
        return count;
    }

    // ------------------------------------------------------------------------------------------------------

    /** A big-endian writer that never throws IOException (it writes to memory). */
    static final class Out {
        private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        private final DataOutputStream data = new DataOutputStream(buffer);

        void i8(int v) {
            try {
                data.writeByte(v);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        void i32(int v) {
            try {
                data.writeInt(v);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        void i64(long v) {
            try {
                data.writeLong(v);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        void raw(byte[] v) {
            try {
                data.write(v);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        void bytes(byte[] v) {
            if (v == null) {
                i32(-1);
            } else {
                i32(v.length);
                raw(v);
            }
        }

        void refusal(Throwable e) {
            i8(REFUSED);
            String message = e.getMessage();
            String text = e.getClass().getName() + (message == null ? "" : ": " + message);
            bytes(text.getBytes(StandardCharsets.UTF_8));
        }

        byte[] toByteArray() {
            return buffer.toByteArray();
        }
    }

    /** A big-endian reader of a request. */
    static final class In {
        private final DataInputStream data;

        In(byte[] bytes) {
            this(bytes, 0);
        }

        In(byte[] bytes, int start) {
            this.data = new DataInputStream(new java.io.ByteArrayInputStream(bytes, start, bytes.length - start));
        }

        byte i8() throws IOException {
            return data.readByte();
        }

        int i32() throws IOException {
            return data.readInt();
        }

        long i64() throws IOException {
            return data.readLong();
        }

        byte[] bytes() throws IOException {
            int length = data.readInt();
            if (length < 0)
                return null;
            byte[] v = new byte[length];
            data.readFully(v);
            return v;
        }
    }

    /** The kafka-clients version this bridge runs against (AppInfoParser), for the report's environment. */
    public static String kafkaVersion() {
        return org.apache.kafka.common.utils.AppInfoParser.getVersion();
    }

    /** The constant Kafka readers use for "no timestamp", checked by the Python side at start-up. */
    public static long noTimestamp() {
        return RecordBatch.NO_TIMESTAMP;
    }
}

package kts.kafkaclients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The client role: KafkaProducer (one per compression codec, acks=all, no idempotence, a long linger that flush()
 * cuts short), KafkaConsumer by manual assignment (assign, seek, poll; offsetsForTimes) and Admin.listOffsets with
 * OffsetSpec earliest, latest and maxTimestamp. The same settings and the same translations as the in-process
 * adapter (conformance/targets/libraries/java/java_client.py), so that the two give the same verdicts:
 *
 * - a record the producer failed is the Kafka error its exception stands for (Errors.forException:
 *   InvalidTimestampException is INVALID_TIMESTAMP); an exception of exactly the class KafkaException is
 *   BATCH_FAILED (Sender.failBatch's "part of a batch which had one or more invalid records"); an exception with
 *   no Kafka error (UNKNOWN_SERVER_ERROR) is its simple class name; a timeout fails the whole send;
 * - offsetsForTimes' IllegalArgumentException (a negative target, LO-9) is refused before any request;
 * - a consumer failure keeps the records delivered before it.
 *
 * Only APIs that kafka-clients 3.7 through 4.1 all have (no deprecated poll(long), no removed configs).
 */
final class ClientRole implements KafkaClientsDriver.Role {
    private static final int LINGER_MS = 1000;
    private static final int POLL_MS = 100;
    private static final String[] CAPABILITIES = {"send", "record-errors", "consume", "offsets-for-times",
        "earliest", "latest", "max-timestamp", "seek-by-time", "timestamp-type"};
    private static final Map<String, CompressionType> CODECS = new HashMap<>();

    static {
        for (CompressionType type : CompressionType.values())
            CODECS.put(type.name, type);
    }

    private final String bootstrap;
    private final long timeoutMs;
    private final Map<CompressionType, KafkaProducer<byte[], byte[]>> producers = new EnumMap<>(CompressionType.class);
    private KafkaConsumer<byte[], byte[]> consumer;
    private Admin admin;

    ClientRole(String bootstrap, long timeoutMs) {
        this.bootstrap = bootstrap;
        this.timeoutMs = timeoutMs;
    }

    @Override
    public void describe(ObjectNode hello) {
        ArrayNode capabilities = hello.putArray("capabilities");
        for (String capability : CAPABILITIES)
            capabilities.add(capability);
        ArrayNode codecs = hello.putArray("codecs");
        for (CompressionType type : CompressionType.values())
            codecs.add(type.name);
    }

    @Override
    public ObjectNode handle(String op, ObjectNode request) throws Exception {
        switch (op) {
            case "send":
                return send(request);
            case "consume":
                return consume(request);
            case "offsets_for_times":
                return offsetsForTimes(request);
            case "list_offsets":
                return listOffsets(request);
            case "seek_by_time":
                return seekByTime(request);
            default:
                throw DriverError.badRequest("unknown op \"" + op + "\"");
        }
    }

    private Properties props(Map<String, Object> settings) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("request.timeout.ms", String.valueOf(timeoutMs));
        props.put("default.api.timeout.ms", String.valueOf(timeoutMs));
        for (Map.Entry<String, Object> setting : settings.entrySet())
            props.put(setting.getKey(), String.valueOf(setting.getValue()));
        return props;
    }

    private KafkaProducer<byte[], byte[]> producer(CompressionType codec) {
        KafkaProducer<byte[], byte[]> producer = producers.get(codec);
        if (producer == null) {
            Map<String, Object> settings = new HashMap<>();
            settings.put("client.id", "kts-java-producer");
            settings.put("acks", "all");
            settings.put("enable.idempotence", "false");
            settings.put("compression.type", codec.name);
            settings.put("linger.ms", LINGER_MS);
            settings.put("max.block.ms", timeoutMs);
            settings.put("delivery.timeout.ms", 2 * timeoutMs + LINGER_MS);
            producer = new KafkaProducer<>(props(settings), new ByteArraySerializer(), new ByteArraySerializer());
            producers.put(codec, producer);
        }
        return producer;
    }

    private KafkaConsumer<byte[], byte[]> consumer() {
        if (consumer == null) {
            Map<String, Object> settings = new HashMap<>();
            settings.put("client.id", "kts-java-consumer");
            settings.put("enable.auto.commit", "false");
            settings.put("auto.offset.reset", "earliest");
            settings.put("fetch.max.wait.ms", POLL_MS);
            consumer = new KafkaConsumer<>(props(settings), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }
        return consumer;
    }

    private Admin admin() {
        if (admin == null) {
            Map<String, Object> settings = new HashMap<>();
            settings.put("client.id", "kts-java-admin");
            admin = Admin.create(props(settings));
        }
        return admin;
    }

    @Override
    public void close() {
        Duration wait = Duration.ofMillis(timeoutMs);
        try {
            for (KafkaProducer<byte[], byte[]> producer : producers.values())
                producer.close(wait);
            if (consumer != null)
                consumer.close(wait);
            if (admin != null)
                admin.close(wait);
        } finally {
            producers.clear();
            consumer = null;
            admin = null;
        }
    }

    private static TopicPartition partition(ObjectNode request) throws DriverError {
        return new TopicPartition(Requests.text(request, "topic"), (int) Requests.integer(request, "partition"));
    }

    // -- producing

    private ObjectNode send(ObjectNode request) throws Exception {
        Requests.need(request, "topic", "partition", "codec", "records");
        TopicPartition tp = partition(request);
        CompressionType codec = CODECS.get(Requests.text(request, "codec"));
        if (codec == null)
            throw DriverError.unsupported("kafka-clients has no compression codec " + request.get("codec"));
        KafkaProducer<byte[], byte[]> producer = producer(codec);
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (JsonNode record : request.get("records")) {
            ProducerRecord<byte[], byte[]> sent = new ProducerRecord<>(tp.topic(), tp.partition(),
                    Requests.optionalInteger(record, "timestamp"), Requests.bytes(record.get("key")),
                    Requests.bytes(record.get("value")));
            futures.add(producer.send(sent));
        }
        producer.flush();
        ObjectNode ok = KafkaClientsDriver.JSON.createObjectNode();
        ArrayNode outcomes = ok.putArray("outcomes");
        for (Future<RecordMetadata> future : futures) {
            ObjectNode outcome = outcomes.addObject();
            try {
                RecordMetadata metadata = future.get(timeoutMs, TimeUnit.MILLISECONDS);
                outcome.put("offset", metadata.offset());
                outcome.put("timestamp", metadata.timestamp());
            } catch (ExecutionException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                ObjectNode error = outcome.putObject("error");
                error.put("kind", failureKind(cause));
                error.put("message", String.valueOf(cause.getMessage()));
            }
        }
        return ok;
    }

    /**
     * What one record's failure is, as java_client.py's _failure has it; a timeout (the future's own, or the
     * producer's TimeoutException) fails the whole send instead of being a record's outcome.
     */
    private static String failureKind(Throwable cause) throws DriverError {
        if (cause.getClass() == KafkaException.class)
            return "BATCH_FAILED";
        if (cause.getClass().getName().endsWith("TimeoutException"))
            throw DriverError.failed(cause.getClass().getName(), "Java producer: " + cause.getMessage());
        Errors error = Errors.forException(cause);
        return error == Errors.UNKNOWN_SERVER_ERROR ? cause.getClass().getSimpleName() : error.name();
    }

    // -- consuming

    private ArrayNode pollFrom(TopicPartition tp, long offset, long until, boolean firstOnly) throws DriverError {
        KafkaConsumer<byte[], byte[]> consumer = consumer();
        ArrayNode out = KafkaClientsDriver.JSON.createArrayNode();
        long last = -1;
        try {
            consumer.assign(Collections.singletonList(tp));
            consumer.seek(tp, offset);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while ((out.size() == 0 || last < until - 1) && until > offset && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(POLL_MS)).records(tp)) {
                    out.add(Requests.record(record.offset(), record.timestamp(), record.timestampType(), record.key(),
                            record.value(), record.headers().toArray()));
                    last = record.offset();
                    if (firstOnly)
                        return out;
                }
            }
        } catch (KafkaException | IllegalStateException | IllegalArgumentException e) {
            throw DriverError.failedDelivered(e, out);
        }
        // Records past `until` that the last poll brought are not the request's (java_client.py does the same).
        ArrayNode kept = KafkaClientsDriver.JSON.createArrayNode();
        for (JsonNode record : out)
            if (record.get("offset").asLong() < until)
                kept.add(record);
        return kept;
    }

    private ObjectNode consume(ObjectNode request) throws DriverError {
        Requests.need(request, "topic", "partition", "offset", "until");
        ObjectNode ok = KafkaClientsDriver.JSON.createObjectNode();
        ok.set("records", pollFrom(partition(request), Requests.integer(request, "offset"),
                Requests.integer(request, "until"), false));
        return ok;
    }

    // -- lookups

    private OffsetAndTimestamp lookup(TopicPartition tp, long target) throws DriverError {
        Map<TopicPartition, Long> query = Collections.singletonMap(tp, target);
        try {
            return consumer().offsetsForTimes(query, Duration.ofMillis(timeoutMs)).get(tp);
        } catch (IllegalArgumentException e) {
            throw DriverError.refused("IllegalArgumentException", e.getMessage());
        } catch (KafkaException e) {
            throw DriverError.failed(e.getClass().getName(), "Java offsetsForTimes: " + e.getMessage());
        }
    }

    private static ObjectNode answer(OffsetAndTimestamp found) {
        if (found == null)
            return null;
        ObjectNode answer = KafkaClientsDriver.JSON.createObjectNode();
        answer.put("offset", found.offset());
        answer.put("timestamp", found.timestamp());
        return answer;
    }

    private ObjectNode offsetsForTimes(ObjectNode request) throws DriverError {
        Requests.need(request, "topic", "partition", "target");
        ObjectNode ok = KafkaClientsDriver.JSON.createObjectNode();
        ok.set("answer", answer(lookup(partition(request), Requests.integer(request, "target"))));
        return ok;
    }

    private ObjectNode listOffsets(ObjectNode request) throws Exception {
        Requests.need(request, "topic", "partition", "spec");
        TopicPartition tp = partition(request);
        String spec = Requests.text(request, "spec");
        OffsetSpec offsetSpec;
        switch (spec) {
            case "earliest":
                offsetSpec = OffsetSpec.earliest();
                break;
            case "latest":
                offsetSpec = OffsetSpec.latest();
                break;
            case "max-timestamp":
                offsetSpec = OffsetSpec.maxTimestamp();
                break;
            default:
                throw DriverError.badRequest("unknown spec " + spec);
        }
        ListOffsetsResultInfo info;
        try {
            info = admin().listOffsets(Collections.singletonMap(tp, offsetSpec)).partitionResult(tp)
                    .get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw DriverError.failed(cause.getClass().getName(), "Java Admin.listOffsets " + spec + ": "
                    + cause.getMessage());
        } catch (java.util.concurrent.TimeoutException | KafkaException e) {
            throw DriverError.failed(e.getClass().getName(), "Java Admin.listOffsets " + spec + ": " + e.getMessage());
        }
        // Admin reports a timestamp for every spec (-1 for earliest and latest), as the in-process adapter passes on.
        ObjectNode ok = KafkaClientsDriver.JSON.createObjectNode();
        ok.put("offset", info.offset());
        ok.put("timestamp", info.timestamp());
        return ok;
    }

    private ObjectNode seekByTime(ObjectNode request) throws DriverError {
        Requests.need(request, "topic", "partition", "target", "until");
        TopicPartition tp = partition(request);
        OffsetAndTimestamp found = lookup(tp, Requests.integer(request, "target"));
        ObjectNode ok = KafkaClientsDriver.JSON.createObjectNode();
        ok.set("answer", answer(found));
        if (found == null) {
            ok.putNull("record");
            return ok;
        }
        ArrayNode records = pollFrom(tp, found.offset(), Requests.integer(request, "until"), true);
        if (records.size() == 0)
            ok.putNull("record");
        else
            ok.set("record", records.get(0));
        return ok;
    }
}

package kts.kafkaclients;

import java.util.Base64;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;

/** The protocol's values: required fields, bytes as base64, timestamp types by name, consumer records. */
final class Requests {
    private Requests() {
    }

    static void need(ObjectNode request, String... fields) throws DriverError {
        for (String field : fields)
            if (!request.has(field))
                throw DriverError.badRequest(request.path("op").asText() + " needs the field " + field);
    }

    static String text(ObjectNode request, String field) throws DriverError {
        need(request, field);
        JsonNode value = request.get(field);
        if (!value.isTextual())
            throw DriverError.badRequest(field + " must be a string");
        return value.asText();
    }

    static long integer(JsonNode request, String field) throws DriverError {
        JsonNode value = request.get(field);
        if (value == null || !value.isIntegralNumber())
            throw DriverError.badRequest(field + " must be an integer");
        return value.asLong();
    }

    /** A nullable integer (a record's timestamp, a log_append_time). */
    static Long optionalInteger(JsonNode request, String field) throws DriverError {
        JsonNode value = request.get(field);
        if (value == null || value.isNull())
            return null;
        return integer(request, field);
    }

    static byte[] bytes(JsonNode value) throws DriverError {
        if (value == null || value.isNull())
            return null;
        if (!value.isTextual())
            throw DriverError.badRequest("bytes must be base64 text or null");
        try {
            return Base64.getDecoder().decode(value.asText());
        } catch (IllegalArgumentException e) {
            throw DriverError.badRequest("bad base64: " + e.getMessage());
        }
    }

    static String base64(byte[] data) {
        return data == null ? null : Base64.getEncoder().encodeToString(data);
    }

    /** TimestampType's own names ("CreateTime", "LogAppendTime", "NoTimestampType") are the protocol's. */
    static String timestampType(TimestampType type) {
        return type.name;
    }

    static TimestampType timestampType(String name) throws DriverError {
        for (TimestampType type : TimestampType.values())
            if (type.name.equals(name))
                return type;
        throw DriverError.badRequest("unknown timestamp_type " + name);
    }

    /** A record as the protocol's consumer_record. */
    static ObjectNode record(long offset, long timestamp, TimestampType type, byte[] key, byte[] value,
            Header[] headers) {
        ObjectNode record = KafkaClientsDriver.JSON.createObjectNode();
        record.put("offset", offset);
        record.put("timestamp", timestamp);
        record.put("timestamp_type", timestampType(type));
        record.put("key", base64(key));
        record.put("value", base64(value));
        ArrayNode list = record.putArray("headers");
        for (Header header : headers) {
            ObjectNode h = list.addObject();
            h.put("key", header.key());
            h.put("value", base64(header.value()));
        }
        return record;
    }

}

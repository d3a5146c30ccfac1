package kts.kafkaclients;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** An error value of the protocol ("Errors are values"): failed, refused, unsupported or bad-request. */
final class DriverError extends Exception {
    private static final long serialVersionUID = 1L;

    final String type;
    final String kind;
    final ArrayNode delivered;

    private DriverError(String type, String kind, String message, ArrayNode delivered) {
        super(message == null ? "" : message);
        this.type = type;
        this.kind = kind;
        this.delivered = delivered;
    }

    /** The library call failed: `kind` is the Kafka error's protocol name or the library's exception type. */
    static DriverError failed(String kind, String message) {
        return new DriverError("failed", kind, message, null);
    }

    /** A failed call whose kind is the exception's simple class name and whose message is its own. */
    static DriverError failed(Throwable e) {
        return failed(e.getClass().getSimpleName(), e.getMessage());
    }

    /** A consume that failed after delivering `delivered`. */
    static DriverError failedDelivered(Throwable e, ArrayNode delivered) {
        return new DriverError("failed", e.getClass().getSimpleName(), e.getMessage(), delivered);
    }

    /** The library refused the call before doing anything. */
    static DriverError refused(String kind, String message) {
        return new DriverError("refused", kind, message, null);
    }

    static DriverError unsupported(String message) {
        return new DriverError("unsupported", null, message, null);
    }

    static DriverError badRequest(String message) {
        return new DriverError("bad-request", null, message, null);
    }

    ObjectNode toJson() {
        ObjectNode error = KafkaClientsDriver.JSON.createObjectNode();
        error.put("type", type);
        if (kind != null && !kind.isEmpty())
            error.put("kind", kind);
        error.put("message", getMessage());
        if (delivered != null)
            error.set("delivered", delivered);
        return error;
    }
}

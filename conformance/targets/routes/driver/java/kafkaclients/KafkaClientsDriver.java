package kts.kafkaclients;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.utils.AppInfoParser;

/**
 * Apache Kafka's Java client (kafka-clients) behind the client driver protocol, version 1 (docs/driver-protocol.md):
 * JSON lines on stdin and stdout, one request at a time, in the role `client` (ClientRole: KafkaProducer,
 * KafkaConsumer, Admin) or `codec` (CodecRole: MemoryRecords).
 *
 * JSON is Jackson's (jackson-databind, resolved by Maven with kafka-clients): a tree per line, no binding classes.
 * Everything the library logs goes to stderr (slf4j-simple at WARN, and System.out itself is pointed at stderr
 * before any library class loads), so stdout carries nothing but answers.
 *
 * The version in hello is kafka-clients' own (AppInfoParser, read from the jar), or the jar or checkout the build
 * was given (the system property kts.library.path), as the protocol asks of a local checkout.
 */
public final class KafkaClientsDriver {
    static final int PROTOCOL = 1;
    static final ObjectMapper JSON = new ObjectMapper();

    private Role role;

    public static void main(String[] args) throws Exception {
        PrintStream answers = System.out;
        System.setOut(System.err);
        Writer out = new OutputStreamWriter(answers, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int status = new KafkaClientsDriver().serve(in, out);
        System.exit(status);
    }

    /** Answer every line until close or the end of input; 0 in both cases. */
    int serve(BufferedReader in, Writer out) throws Exception {
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.trim().isEmpty())
                    continue;
                ObjectNode request;
                try {
                    JsonNode parsed = JSON.readTree(line);
                    if (parsed == null || !parsed.isObject() || !parsed.path("id").canConvertToLong()
                            || !parsed.path("op").isTextual())
                        throw new IllegalArgumentException("not an object with an integer id and an op");
                    request = (ObjectNode) parsed;
                } catch (Exception e) {
                    // Whatever the line was, it has no id to trust: the protocol's answer is id 0.
                    reply(out, 0, null, DriverError.badRequest("malformed request: " + e.getMessage()));
                    continue;
                }
                long id = request.get("id").asLong();
                String op = request.get("op").asText();
                if (op.equals("close")) {
                    DriverError closing = closeRole();
                    reply(out, id, closing == null ? JSON.createObjectNode() : null, closing);
                    return 0;
                }
                try {
                    reply(out, id, handle(op, request), null);
                } catch (DriverError e) {
                    reply(out, id, null, e);
                } catch (Throwable e) {
                    // The driver's own bug or a library failure nothing below caught: a failed call, never a dead
                    // driver.
                    e.printStackTrace();
                    reply(out, id, null, DriverError.failed(e));
                }
            }
            return 0;
        } finally {
            closeRole();
        }
    }

    private ObjectNode handle(String op, ObjectNode request) throws Exception {
        if (op.equals("hello"))
            return hello(request);
        if (role == null)
            throw DriverError.badRequest("the first request must be hello");
        return role.handle(op, request);
    }

    private ObjectNode hello(ObjectNode request) throws DriverError {
        Requests.need(request, "protocol", "role", "timeout_ms");
        long protocol = request.get("protocol").asLong();
        if (protocol != PROTOCOL)
            throw DriverError.badRequest("this driver speaks protocol version " + PROTOCOL + ", not " + protocol);
        long timeoutMs = request.get("timeout_ms").asLong();
        if (timeoutMs < 1)
            throw DriverError.badRequest("timeout_ms must be at least 1");
        String name = request.get("role").asText();
        closeRole();
        if (name.equals("client")) {
            String bootstrap = request.path("bootstrap").asText("");
            if (bootstrap.isEmpty())
                throw DriverError.badRequest("the client role needs a bootstrap address");
            role = new ClientRole(bootstrap, timeoutMs);
        } else if (name.equals("codec")) {
            role = new CodecRole();
        } else {
            throw DriverError.unsupported("this driver plays the roles client and codec, not " + name);
        }
        ObjectNode ok = JSON.createObjectNode();
        ok.put("protocol", PROTOCOL);
        ok.put("library", "java");
        ok.put("version", libraryVersion());
        ok.put("language", "java");
        role.describe(ok);
        return ok;
    }

    static String libraryVersion() {
        String path = System.getProperty("kts.library.path", "");
        return path.isEmpty() ? AppInfoParser.getVersion() : path;
    }

    private DriverError closeRole() {
        Role open = role;
        role = null;
        if (open == null)
            return null;
        try {
            open.close();
            return null;
        } catch (Throwable e) {
            e.printStackTrace();
            return DriverError.failed(e);
        }
    }

    private static void reply(Writer out, long id, ObjectNode ok, DriverError error) throws Exception {
        ObjectNode answer = JSON.createObjectNode();
        answer.put("id", id);
        if (error != null)
            answer.set("error", error.toJson());
        else
            answer.set("ok", ok);
        out.write(JSON.writeValueAsString(answer));
        out.write('\n');
        out.flush();
    }

    /** One role of the driver, after hello. */
    interface Role extends AutoCloseable {
        /** The role's part of the hello answer: capabilities, codecs (and the codec role's magics). */
        void describe(ObjectNode hello);

        /** The ok object of one operation, or a DriverError (any other exception is a failed call). */
        ObjectNode handle(String op, ObjectNode request) throws Exception;
    }
}

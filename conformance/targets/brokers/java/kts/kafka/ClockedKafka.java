package kts.kafka;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Properties;
import java.util.function.Supplier;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Time;

/**
 * Apache Kafka (KRaft, combined broker and controller) on a clock the conformance suite drives.
 *
 * <pre>java -cp LIB/*:DIR kts.kafka.ClockedKafka server.properties CONTROL_PORT</pre>
 *
 * The broker is built as kafka.Kafka builds it, with the one difference that KafkaRaftServer's public
 * constructor {@code KafkaRaftServer(KafkaConfig, Time)} gets a {@link SuiteTime} instead of Time.SYSTEM. Every
 * wall-clock reading of the log layer (classes of kafka.log and org.apache.kafka.storage.internals.log:
 * LogValidator's now, LogAppendTime, segment creation, roll and retention decisions) is the suite's; every other
 * reading (the network clients, KRaft, the controller, request metrics) and monotonic time stay the machine's,
 * so the broker's own machinery (heartbeats, reconnect backoff, request timeouts) keeps running whatever the suite
 * does to the clock: a clock stepped back by years would otherwise black out the broker's connection to its
 * controller until the session expires and the broker is fenced.
 *
 * A line protocol on CONTROL_PORT (127.0.0.1 only), one request per line, one answer per line:
 * <pre>
 *   CLOCK            -> OK ms        the broker's wall clock
 *   SET ms           -> OK ms        freeze it at ms (until the next SET or ADVANCE)
 *   ADVANCE delta    -> OK ms        move a frozen clock by delta (a ticking one is frozen first)
 *   WALL             -> OK ms        back to the machine's clock, ticking
 *   RETENTION        -> OK n         time- and size-based retention now, as LogManager's scheduled task does
 *   anything else    -> ERR text
 * </pre>
 * Until the first SET or ADVANCE the clock is the machine's, ticking: the broker starts as any Kafka does.
 *
 * RETENTION reaches two internals by reflection: KafkaRaftServer's private field {@code broker}
 * (Option[BrokerServer]) and, through BrokerServer.logManager(), every UnifiedLog's public deleteOldSegments()
 * (the loop of LogManager's private cleanupLogs(), whose count it does not return). They exist, with these names,
 * in 3.9, 4.0 and 4.4.
 */
public final class ClockedKafka {

    /** The suite's clock: the machine's until frozen; milliseconds only. */
    static final class SuiteTime implements Time {
        private static final StackWalker WALKER = StackWalker.getInstance();
        private volatile boolean frozen = false;
        private volatile long frozenMs = 0L;

        /** The suite's wall clock: the machine's until frozen. */
        long suiteNow() {
            return frozen ? frozenMs : System.currentTimeMillis();
        }

        @Override
        public long milliseconds() {
            if (!frozen) {
                return System.currentTimeMillis();
            }
            return logLayerCaller() ? frozenMs : System.currentTimeMillis();
        }

        /** Whether the code reading the clock is Kafka's log layer (the first caller outside this class). */
        private static boolean logLayerCaller() {
            return WALKER.walk(frames -> frames
                .map(StackWalker.StackFrame::getClassName)
                .filter(name -> !name.startsWith("kts.kafka."))
                .findFirst()
                .map(name -> name.startsWith("kafka.log.") || name.startsWith("org.apache.kafka.storage.internals.log."))
                .orElse(false));
        }

        @Override
        public long nanoseconds() {
            return System.nanoTime();
        }

        @Override
        public void sleep(long ms) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) throws InterruptedException {
            // Bounded by monotonic time: a frozen clock never reaches deadlineMs on its own.
            long limit = System.nanoTime() + Math.max(0L, deadlineMs - milliseconds()) * 1_000_000L;
            synchronized (obj) {
                while (!condition.get()) {
                    long leftMs = (limit - System.nanoTime()) / 1_000_000L;
                    if (leftMs <= 0) {
                        throw new TimeoutException("Condition not satisfied before deadline");
                    }
                    obj.wait(leftMs);
                }
            }
        }

        synchronized long set(long ms) {
            frozenMs = ms;
            frozen = true;
            return ms;
        }

        synchronized long advance(long deltaMs) {
            return set(suiteNow() + deltaMs);
        }

        synchronized long wall() {
            frozen = false;
            return suiteNow();
        }
    }

    private final SuiteTime time = new SuiteTime();
    private final KafkaRaftServer server;

    private ClockedKafka(Properties props) {
        this.server = new KafkaRaftServer(KafkaConfig.fromProps(props, false), time);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClockedKafka server.properties CONTROL_PORT");
            System.exit(2);
        }
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        ClockedKafka kafka = new ClockedKafka(props);
        ServerSocket control = new ServerSocket();
        control.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[1])));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                control.close();
            } catch (Exception ignored) {
                // closing on the way out
            }
            kafka.server.shutdown();
        }, "kts-shutdown"));
        kafka.server.startup();
        Thread acceptor = new Thread(() -> kafka.serve(control), "kts-control");
        acceptor.setDaemon(true);
        acceptor.start();
        System.out.println("kts: clock control on 127.0.0.1:" + args[1]);
        kafka.server.awaitShutdown();
    }

    private void serve(ServerSocket control) {
        while (!control.isClosed()) {
            try {
                Socket socket = control.accept();
                Thread connection = new Thread(() -> answer(socket), "kts-control-connection");
                connection.setDaemon(true);
                connection.start();
            } catch (Exception e) {
                if (!control.isClosed()) {
                    System.err.println("kts: control accept failed: " + e);
                }
            }
        }
    }

    private void answer(Socket socket) {
        try (Socket s = socket;
             BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8), true)) {
            s.setSoTimeout(600_000);
            String line;
            while ((line = in.readLine()) != null) {
                out.println(command(line.trim()));
            }
        } catch (Exception e) {
            System.err.println("kts: control connection failed: " + e);
        }
    }

    private String command(String line) {
        String[] words = line.split("\\s+");
        try {
            switch (words[0]) {
                case "CLOCK":
                    return "OK " + time.suiteNow();
                case "SET":
                    return "OK " + time.set(Long.parseLong(words[1]));
                case "ADVANCE":
                    return "OK " + time.advance(Long.parseLong(words[1]));
                case "WALL":
                    return "OK " + time.wall();
                case "RETENTION":
                    return "OK " + retentionNow();
                default:
                    return "ERR unknown command " + words[0] + ": CLOCK, SET ms, ADVANCE delta, WALL or RETENTION";
            }
        } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
            return "ERR " + words[0] + " takes one integer (milliseconds)";
        } catch (Exception e) {
            Throwable cause = e instanceof InvocationTargetException ? e.getCause() : e;
            return "ERR " + cause.getClass().getSimpleName() + ": " + String.valueOf(cause.getMessage()).replace('\n', ' ');
        }
    }

    /** LogManager.cleanupLogs() without the scheduler: deleteOldSegments() on every log not compacted only. */
    private int retentionNow() throws Exception {
        Field brokerField = KafkaRaftServer.class.getDeclaredField("broker");
        brokerField.setAccessible(true);
        Object option = brokerField.get(server);
        Object broker = option.getClass().getMethod("get").invoke(option);
        Object logManager = broker.getClass().getMethod("logManager").invoke(broker);
        Object logs = logManager.getClass().getMethod("allLogs").invoke(logManager);
        Iterator<?> each = logs instanceof Iterable ? ((Iterable<?>) logs).iterator() : scalaIterator(logs);
        int deleted = 0;
        while (each.hasNext()) {
            Object log = each.next();
            Object config = log.getClass().getMethod("config").invoke(log);
            boolean compact = config.getClass().getField("compact").getBoolean(config);
            boolean delete = config.getClass().getField("delete").getBoolean(config);
            if (compact && !delete) {
                continue; // cleanupLogs leaves compacted-only logs to the cleaner
            }
            Method deleteOld = log.getClass().getMethod("deleteOldSegments");
            deleted += (Integer) deleteOld.invoke(log);
        }
        return deleted;
    }

    private static Iterator<?> scalaIterator(Object scalaIterable) throws Exception {
        Object it = scalaIterable.getClass().getMethod("iterator").invoke(scalaIterable);
        Method hasNext = it.getClass().getMethod("hasNext");
        Method next = it.getClass().getMethod("next");
        hasNext.setAccessible(true);
        next.setAccessible(true);
        return new Iterator<Object>() {
            @Override
            public boolean hasNext() {
                try {
                    return (Boolean) hasNext.invoke(it);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public Object next() {
                try {
                    return next.invoke(it);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
    }
}

package kts.kafka;

import java.io.FileInputStream;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
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
 * constructor {@code KafkaRaftServer(KafkaConfig, Time)} gets the suite's clock ({@link SuiteClock}: the log layer
 * reads it, everyone else the machine's) instead of Time.SYSTEM; a clock stepped back by years would otherwise
 * black out the broker's connection to its controller until the session expires and the broker is fenced. The
 * suite drives it through {@link ClockControl}'s line protocol on CONTROL_PORT. Until the first SET or ADVANCE the
 * clock is the machine's, ticking: the broker starts as any Kafka does.
 *
 * RETENTION reaches two internals by reflection: KafkaRaftServer's private field {@code broker}
 * (Option[BrokerServer]) and, through BrokerServer.logManager(), every UnifiedLog's public deleteOldSegments()
 * (the loop of LogManager's private cleanupLogs(), whose count it does not return). They exist, with these names,
 * in 3.9, 4.0 and 4.4.
 */
public final class ClockedKafka {

    /** The suite's clock as the release's Time. */
    static final class SuiteTime implements Time {
        private final SuiteClock clock;

        SuiteTime(SuiteClock clock) {
            this.clock = clock;
        }

        @Override
        public long milliseconds() {
            return clock.milliseconds();
        }

        @Override
        public long nanoseconds() {
            return System.nanoTime();
        }

        @Override
        public void sleep(long ms) {
            clock.sleep(ms);
        }

        @Override
        public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) throws InterruptedException {
            if (!clock.waitObject(obj, condition::get, deadlineMs)) {
                throw new TimeoutException("Condition not satisfied before deadline");
            }
        }
    }

    private ClockedKafka() {
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
        SuiteClock clock = new SuiteClock();
        FileDates dates = ClockControl.fileDates(clock, props);
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(props, false), new SuiteTime(clock));
        ClockControl control = new ClockControl(clock, () -> retentionNow(server), dates, Integer.parseInt(args[1]));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            control.close();
            server.shutdown();
        }, "kts-shutdown"));
        server.startup();
        control.serve();
        server.awaitShutdown();
    }

    /** LogManager.cleanupLogs() without the scheduler: deleteOldSegments() on every log not compacted only. */
    private static int retentionNow(KafkaRaftServer server) throws Exception {
        Field brokerField = KafkaRaftServer.class.getDeclaredField("broker");
        brokerField.setAccessible(true);
        Object option = brokerField.get(server);
        Object broker = option.getClass().getMethod("get").invoke(option);
        Object logManager = broker.getClass().getMethod("logManager").invoke(broker);
        Iterator<?> each = ClockControl.each(logManager.getClass().getMethod("allLogs").invoke(logManager));
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
}

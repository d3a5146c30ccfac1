package kts.kafka;

import java.io.FileInputStream;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * Apache Kafka in ZooKeeper mode (a KafkaServer, every release from 0.10.0 to 3.9) on a clock the conformance
 * suite drives.
 *
 * <pre>java -cp LIB/*:DIR kts.kafka.ClockedZkKafka server.properties CONTROL_PORT</pre>
 *
 * Built as kafka.Kafka builds the broker, through KafkaServer's public constructor, whose second parameter is the
 * broker's Time: the suite's clock ({@link SuiteClock}) goes there instead of the system's. The constructor and the
 * Time interface differ by release (kafka.utils.Time in 0.10.0-0.10.1, org.apache.kafka.common.utils.Time after;
 * three, four parameters), so this class names no Kafka type: it finds the constructor by reflection, gives the
 * Time as a dynamic proxy of whichever interface the release declares, and the parameters after it their Scala
 * defaults (None, Nil, false). It compiles against the JDK alone. The suite drives the clock through
 * {@link ClockControl}'s line protocol on CONTROL_PORT.
 *
 * RETENTION deletes what the broker's retention would, by reflection (retentionNow): every log's
 * deleteOldSegments(), or on 0.10.0 LogManager's cleanupLogs().
 */
public final class ClockedZkKafka {

    private ClockedZkKafka() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClockedZkKafka server.properties CONTROL_PORT");
            System.exit(2);
        }
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        SuiteClock clock = new SuiteClock();
        FileDates dates = ClockControl.fileDates(clock, props);
        Object server = newServer(props, clock);
        ClockControl control = new ClockControl(clock, () -> retentionNow(server), dates, Integer.parseInt(args[1]));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            control.close();
            try {
                server.getClass().getMethod("shutdown").invoke(server);
            } catch (ReflectiveOperationException e) {
                System.err.println("kts: shutdown failed: " + (e.getCause() != null ? e.getCause() : e));
            }
        }, "kts-shutdown"));
        server.getClass().getMethod("startup").invoke(server);
        control.serve();
        server.getClass().getMethod("awaitShutdown").invoke(server);
    }

    /** new KafkaServer(KafkaConfig.fromProps(props), suite's Time, None, [Nil], [false]). */
    static Object newServer(Properties props, SuiteClock clock) throws Exception {
        Class<?> configType = Class.forName("kafka.server.KafkaConfig");
        Object config = configType.getMethod("fromProps", Properties.class).invoke(null, props);
        Constructor<?> constructor = null;
        for (Constructor<?> each : Class.forName("kafka.server.KafkaServer").getConstructors()) {
            Class<?>[] types = each.getParameterTypes();
            if (types.length >= 2 && types[0] == configType && types[1].isInterface()
                    && types[1].getSimpleName().equals("Time")
                    && (constructor == null || types.length > constructor.getParameterCount())) {
                constructor = each;
            }
        }
        if (constructor == null) {
            throw new IllegalStateException("kafka.server.KafkaServer has no constructor (KafkaConfig, Time, ...)");
        }
        Class<?>[] types = constructor.getParameterTypes();
        Object[] values = new Object[types.length];
        values[0] = config;
        values[1] = time(types[1], clock);
        for (int i = 2; i < types.length; i++) {
            values[i] = scalaDefault(types[i], constructor);
        }
        return constructor.newInstance(values);
    }

    private static Object scalaDefault(Class<?> type, Constructor<?> constructor) throws Exception {
        if (type == boolean.class) {
            return false;
        }
        Object none = Class.forName("scala.None$").getField("MODULE$").get(null);
        if (type.isInstance(none)) {
            return none;
        }
        Object nil = Class.forName("scala.collection.immutable.Nil$").getField("MODULE$").get(null);
        if (type.isInstance(nil)) {
            return nil;
        }
        throw new IllegalStateException("no default for " + type.getName() + " in " + constructor);
    }

    /** The suite's clock as an instance of the release's Time interface `type`. */
    static Object time(Class<?> type, SuiteClock clock) {
        InvocationHandler handler = (proxy, method, args) -> {
            switch (method.getName()) {
                case "milliseconds":
                    return clock.milliseconds();
                case "nanoseconds":
                    return System.nanoTime();
                case "hiResClockMs":
                    return System.nanoTime() / 1_000_000L;
                case "sleep":
                    clock.sleep((Long) args[0]);
                    return null;
                case "waitObject":
                    Supplier<?> condition = (Supplier<?>) args[1];
                    if (!clock.waitObject(args[0], () -> (Boolean) condition.get(), (Long) args[2])) {
                        throw (Exception) Class.forName("org.apache.kafka.common.errors.TimeoutException")
                            .getConstructor(String.class).newInstance("Condition not satisfied before deadline");
                    }
                    return null;
                case "toString":
                    return "SuiteTime";
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                default:
                    if (method.isDefault()) {
                        return InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    throw new UnsupportedOperationException("the suite's Time has no " + method);
            }
        };
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler);
    }

    /**
     * Retention now on every log that is not compacted only, as the broker's scheduled task and, for a topic both
     * compacted and deleted, its log cleaner do (the cleaner is off: see the broker's configuration): every
     * log's deleteOldSegments() (0.10.1 on). 0.10.0 has no such method and a topic there is either compacted or
     * deleted: LogManager's own cleanupLogs() (private) then, counted with every log's numberOfSegments().
     */
    private static int retentionNow(Object server) throws Exception {
        Object logManager = server.getClass().getMethod("logManager").invoke(server);
        List<Object> logs = new ArrayList<>();
        ClockControl.each(logManager.getClass().getMethod("allLogs").invoke(logManager)).forEachRemaining(logs::add);
        if (logs.isEmpty()) {
            return 0;
        }
        Method deleteOld = noArgument(logs.get(0).getClass(), "deleteOldSegments");
        if (deleteOld == null) {
            int before = segments(logs);
            Method cleanup = logManager.getClass().getDeclaredMethod("cleanupLogs");
            cleanup.setAccessible(true);
            cleanup.invoke(logManager);
            return before - segments(logs);
        }
        int deleted = 0;
        for (Object log : logs) {
            Object config = log.getClass().getMethod("config").invoke(log);
            boolean compact = flag(config, "compact");
            boolean delete = flag(config, "delete");
            if (compact && !delete) {
                continue; // compacted-only logs are the cleaner's alone
            }
            deleted += (Integer) deleteOld.invoke(log);
        }
        return deleted;
    }

    /**
     * A LogConfig's boolean: a method of the Scala kafka.log.LogConfig (to 3.4), a public field of the Java
     * org.apache.kafka.storage.internals.log.LogConfig it became (3.5 on, as in the KRaft launcher).
     */
    private static boolean flag(Object config, String name) throws ReflectiveOperationException {
        Method method = noArgument(config.getClass(), name);
        return method != null ? (Boolean) method.invoke(config) : config.getClass().getField(name).getBoolean(config);
    }

    private static Method noArgument(Class<?> type, String name) {
        try {
            return type.getMethod(name);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static int segments(List<Object> logs) throws Exception {
        int count = 0;
        for (Object log : logs) {
            count += (Integer) log.getClass().getMethod("numberOfSegments").invoke(log);
        }
        return count;
    }
}

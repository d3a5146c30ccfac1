package kts.kafka;

import java.util.function.BooleanSupplier;

/**
 * The wall clock the conformance suite drives, shared by both launchers (ClockedKafka, KRaft; ClockedZkKafka,
 * ZooKeeper mode): the machine's until frozen; milliseconds only.
 *
 * Only Kafka's log layer (classes of kafka.log and org.apache.kafka.storage.internals.log: the validator's now,
 * LogAppendTime, segment creation, roll and retention decisions) reads the frozen clock; every other reader (the
 * network clients, the controller, ZooKeeper sessions, request metrics) keeps the machine's, so the broker's own
 * machinery keeps running whatever the suite does to the clock.
 */
final class SuiteClock {
    private static final StackWalker WALKER = StackWalker.getInstance();
    private volatile boolean frozen = false;
    private volatile long frozenMs = 0L;

    /** The suite's wall clock: the machine's until frozen. */
    long suiteNow() {
        return frozen ? frozenMs : System.currentTimeMillis();
    }

    /** Whether the suite froze the clock (SET or ADVANCE, no WALL since). */
    boolean frozen() {
        return frozen;
    }

    /** The broker's reading: the suite's for the log layer, the machine's for everyone else. */
    long milliseconds() {
        if (!frozen) {
            return System.currentTimeMillis();
        }
        return logLayerCaller() ? frozenMs : System.currentTimeMillis();
    }

    /** Whether the code reading the clock is Kafka's log layer: the first caller that is neither this package nor
     * the dynamic proxy standing for a release's Time interface. Up to 2.0 ListOffsets v0 dated the log end "now"
     * in KafkaApis.fetchOffsetsBefore, which 2.1 moved into the log (Log.legacyFetchOffsetsBefore): that method is
     * the log layer's reading wherever it is. */
    private static boolean logLayerCaller() {
        return WALKER.walk(frames -> frames
            .filter(frame -> !frame.getClassName().startsWith("kts.kafka.")
                && !frame.getClassName().startsWith("jdk.proxy") && !frame.getClassName().startsWith("com.sun.proxy."))
            .findFirst()
            .map(frame -> frame.getClassName().startsWith("kafka.log.")
                || frame.getClassName().startsWith("org.apache.kafka.storage.internals.log.")
                || frame.getMethodName().equals("fetchOffsetsBefore"))
            .orElse(false));
    }

    void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Time.waitObject: until `condition` holds (true) or the deadline passes (false), the deadline counted in
     * monotonic time, since a frozen clock never reaches it on its own. */
    boolean waitObject(Object obj, BooleanSupplier condition, long deadlineMs) throws InterruptedException {
        long limit = System.nanoTime() + Math.max(0L, deadlineMs - milliseconds()) * 1_000_000L;
        synchronized (obj) {
            while (!condition.getAsBoolean()) {
                long leftMs = (limit - System.nanoTime()) / 1_000_000L;
                if (leftMs <= 0) {
                    return false;
                }
                obj.wait(leftMs);
            }
        }
        return true;
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

package kts.kafka;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.concurrent.Callable;

/**
 * The launchers' line protocol on 127.0.0.1:PORT, one request per line, one answer per line:
 * <pre>
 *   CLOCK            -> OK ms        the broker's wall clock
 *   SET ms           -> OK ms        freeze it at ms (until the next SET or ADVANCE)
 *   ADVANCE delta    -> OK ms        move a frozen clock by delta (a ticking one is frozen first)
 *   WALL             -> OK ms        back to the machine's clock, ticking
 *   RETENTION        -> OK n         time- and size-based retention now, as LogManager's scheduled task does
 *   FILES            -> OK 1 or 0    whether segment files are dated by this clock (FileDates installed)
 *   anything else    -> ERR text
 * </pre>
 * With FileDates, the files written since the last move are dated before the clock moves to another value (and
 * before retention reads their times); a SET to the clock's own value moves nothing and dates nothing.
 */
final class ClockControl {
    private final SuiteClock clock;
    private final Callable<Integer> retention;
    private final FileDates dates;
    private final ServerSocket socket = new ServerSocket();

    /** Bound to 127.0.0.1:`port` at once (a port taken fails the launch); served after `serve()`. `dates`: null
     * where the release offers no hook to date files before Kafka reads them (FILES answers 0). */
    ClockControl(SuiteClock clock, Callable<Integer> retention, FileDates dates, int port) throws IOException {
        this.clock = clock;
        this.retention = retention;
        this.dates = dates;
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    void serve() {
        Thread acceptor = new Thread(this::accept, "kts-control");
        acceptor.setDaemon(true);
        acceptor.start();
        System.out.println("kts: clock control on 127.0.0.1:" + socket.getLocalPort());
    }

    void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing on the way out
        }
    }

    private void accept() {
        while (!socket.isClosed()) {
            try {
                Socket connection = socket.accept();
                Thread answering = new Thread(() -> answer(connection), "kts-control-connection");
                answering.setDaemon(true);
                answering.start();
            } catch (Exception e) {
                if (!socket.isClosed()) {
                    System.err.println("kts: control accept failed: " + e);
                }
            }
        }
    }

    private void answer(Socket connection) {
        try (Socket s = connection;
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
                    return "OK " + clock.suiteNow();
                case "SET":
                    long ms = Long.parseLong(words[1]);
                    if (!clock.frozen() || ms != clock.suiteNow()) {
                        dateFiles();
                    }
                    return "OK " + clock.set(ms);
                case "ADVANCE":
                    long delta = Long.parseLong(words[1]);
                    if (!clock.frozen() || delta != 0) {
                        dateFiles();
                    }
                    return "OK " + clock.advance(delta);
                case "WALL":
                    dateFiles();
                    return "OK " + clock.wall();
                case "RETENTION":
                    dateFiles();
                    return "OK " + retention.call();
                case "FILES":
                    return "OK " + (dates != null ? 1 : 0);
                default:
                    return "ERR unknown command " + words[0]
                        + ": CLOCK, SET ms, ADVANCE delta, WALL, RETENTION or FILES";
            }
        } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
            return "ERR " + words[0] + " takes one integer (milliseconds)";
        } catch (Exception e) {
            Throwable cause = e instanceof InvocationTargetException ? e.getCause() : e;
            return "ERR " + cause.getClass().getSimpleName() + ": " + String.valueOf(cause.getMessage()).replace('\n', ' ');
        }
    }

    private void dateFiles() throws IOException {
        if (dates != null) {
            dates.date();
        }
    }

    /** FileDates for the broker of `props` where the launcher was compiled with an authorizer that dates files
     * (DatingAuthorizer: Kafka's Authorizer interface, 2.4+; LegacyDatingAuthorizer: the Scala one before), which
     * `props` then names as the broker's authorizer; null where it was compiled with neither. */
    static FileDates fileDates(SuiteClock clock, java.util.Properties props) {
        for (String authorizer : new String[] {"kts.kafka.DatingAuthorizer", "kts.kafka.LegacyDatingAuthorizer"}) {
            try {
                Class.forName(authorizer);
            } catch (ClassNotFoundException e) {
                continue;
            }
            String dirs = props.getProperty("log.dirs", props.getProperty("log.dir", "/tmp/kafka-logs"));
            FileDates dates = new FileDates(clock, dirs);
            FileDates.installed = dates;
            props.setProperty("authorizer.class.name", authorizer);
            return dates;
        }
        return null;
    }

    /** The elements of a Java or Scala collection (LogManager.allLogs() is one or the other, by release). */
    static Iterator<?> each(Object iterable) throws ReflectiveOperationException {
        if (iterable instanceof Iterable) {
            return ((Iterable<?>) iterable).iterator();
        }
        Object it = iterable.getClass().getMethod("iterator").invoke(iterable);
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

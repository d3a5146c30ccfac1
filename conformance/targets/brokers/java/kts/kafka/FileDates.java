package kts.kafka;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Segment files dated by the suite's clock (the control plane's file-times). The operating system dates a file
 * with the machine's clock when it is written; Kafka reads a segment's file time where the segment has no
 * timestamps (its largest timestamp, IDX-6; ListOffsets v0's offsets before a time). A frozen clock does not move
 * between two of the suite's clock moves, so every write since the last one happened at the clock's present value:
 * {@link #date()} gives that value to every segment file whose time changed since it last looked. It runs before
 * every move of the clock to another value and every retention run (ClockControl), and before every ListOffsets
 * request for the request's topics (DatingAuthorizer: Kafka asks its authorizer before reading): the places where
 * Kafka reads these times on the suite's behalf.
 *
 * A file time this class gave before and finds again on another file was copied there by Kafka itself (the log
 * cleaner dates a cleaned segment with its sources' latest time), and is kept. While the clock ticks (never
 * frozen, or back on the machine's), the machine's dates are the suite's: they are noted, not changed.
 */
final class FileDates {
    /** The suffix of a deleted partition's folder, which Kafka removes after log.segment.delete.delay.ms. */
    private static final String DELETED = "-delete";

    /** The launcher's, for the authorizer Kafka instantiates by class name. */
    static volatile FileDates installed;

    private final SuiteClock clock;
    private final List<Path> dirs = new ArrayList<>();
    private final Map<Path, Long> seen = new HashMap<>();
    private final Set<Long> given = new HashSet<>();

    /** `logDirs`: the broker's log.dirs (or log.dir), comma-separated. */
    FileDates(SuiteClock clock, String logDirs) {
        this.clock = clock;
        for (String dir : logDirs.split(",")) {
            if (!dir.trim().isEmpty()) {
                dirs.add(Paths.get(dir.trim()));
            }
        }
    }

    /** Every segment file of the broker's partitions (not of those Kafka deleted and keeps a while). */
    synchronized void date() throws IOException {
        boolean frozen = clock.frozen();
        long now = clock.suiteNow();
        Map<Path, Long> found = new HashMap<>();
        for (Path dir : dirs) {
            for (Path partition : list(dir)) {
                if (!partition.getFileName().toString().endsWith(DELETED) && Files.isDirectory(partition)) {
                    datePartition(partition, frozen, now, found);
                }
            }
        }
        seen.clear();
        seen.putAll(found);
    }

    /** The segment files of `topics`' partitions only: what a ListOffsets request for them reads. Partitions are
     * looked for from 0 up to the first this broker does not hold (the suite's topics have a replica of every
     * partition on every broker); a later move of the clock dates any other. */
    synchronized void date(Collection<String> topics) throws IOException {
        boolean frozen = clock.frozen();
        long now = clock.suiteNow();
        for (String topic : topics) {
            for (Path dir : dirs) {
                for (int partition = 0; ; partition++) {
                    Path folder = dir.resolve(topic + "-" + partition);
                    if (!Files.isDirectory(folder)) {
                        break;
                    }
                    datePartition(folder, frozen, now, seen);
                }
            }
        }
    }

    private void datePartition(Path partition, boolean frozen, long now, Map<Path, Long> found) throws IOException {
        for (Path file : list(partition)) {
            if (file.getFileName().toString().endsWith(".log")) {
                try {
                    found.put(file, dated(file, frozen, now));
                } catch (NoSuchFileException gone) {
                    // deleted or renamed by Kafka meanwhile: nothing to date
                }
            }
        }
    }

    private long dated(Path file, boolean frozen, long now) throws IOException {
        long time = Files.getLastModifiedTime(file).toMillis();
        Long last = seen.get(file);
        if ((last != null && last == time) || !frozen || given.contains(time)) {
            return time;
        }
        Files.setLastModifiedTime(file, FileTime.fromMillis(now));
        long back = Files.getLastModifiedTime(file).toMillis();
        given.add(back);
        return back;
    }

    private static List<Path> list(Path dir) throws IOException {
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path entry : stream) {
                entries.add(entry);
            }
        } catch (NoSuchFileException gone) {
            // a partition's folder deleted meanwhile
        }
        return entries;
    }
}

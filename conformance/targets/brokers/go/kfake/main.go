// Command kts-kfake runs franz-go's fake Kafka cluster (github.com/twmb/franz-go/pkg/kfake) for
// kafka-timestamp-conformance: N brokers on loopback ports, driven by one line at a time on stdin.
//
// Written for the suite (conformance/targets/brokers/kfake.py builds it with the go command on first
// use). It starts the cluster, prints one line
//
//	READY <node>@127.0.0.1:<port> ...
//
// on stdout, then answers each command on stdin with one line, "OK ..." or "ERR <why>":
//
//	PING                        OK
//	VERSION                     OK <the kfake module version, or local:<directory> where a go.mod replaced it>
//	ADDRS                       OK <node>@<host:port> ...
//	LEADER <topic> <partition>  OK <node>            (kfake's LeaderFor)
//	MOVE <topic> <partition> <node>
//	                            OK <node>            (kfake's MoveTopicPartition: the leader epoch goes up by one)
//	RETENTION                   OK                   (kfake's ApplyRetention: retention.ms and retention.bytes now)
//	QUIT                        OK, then it stops
//
// It stops when stdin closes (so it never outlives the process that started it), on QUIT, and on
// SIGTERM or SIGINT. Its log (kfake's own, at -log-level) goes to stderr. kfake reads the machine's
// clock (time.Now) wherever it needs a time, so there is no clock to drive.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

const kfakeModule = "github.com/twmb/franz-go/pkg/kfake"

// Ten years in milliseconds: kfake runs retention (and compaction) on a ticker of log.cleaner.backoff.ms
// for topics with a retention config; the suite runs retention when it asks (RETENTION), never on a timer.
const neverMs = "315360000000"

func main() {
	brokers := flag.Int("brokers", 3, "how many brokers")
	ports := flag.String("ports", "", "comma-separated loopback ports, one per broker (default: the kernel picks)")
	clusterID := flag.String("cluster-id", "kafka-conformance", "the cluster id Metadata answers")
	logLevel := flag.String("log-level", "warn", "kfake's log level on stderr: none, error, warn, info, debug")
	flag.Parse()

	level, err := parseLevel(*logLevel)
	if err != nil {
		fail(err.Error())
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(*brokers),
		kfake.ClusterID(*clusterID),
		kfake.WithLogger(kfake.BasicLogger(os.Stderr, level)),
		kfake.BrokerConfigs(map[string]string{"log.cleaner.backoff.ms": neverMs}),
	}
	if *ports != "" {
		var list []int
		for _, p := range strings.Split(*ports, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 0 || n > 65535 {
				fail(fmt.Sprintf("-ports: %q is not a port", p))
			}
			list = append(list, n)
		}
		opts = append(opts, kfake.Ports(list...))
	}
	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		fail("kfake could not start: " + err.Error())
	}

	out := bufio.NewWriter(os.Stdout)
	say := func(line string) {
		out.WriteString(line + "\n")
		out.Flush()
	}
	say("READY " + addrs(cluster))

	// A signal ends the program as a closed stdin does: the cluster is closed first.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		cluster.Close()
		os.Exit(0)
	}()

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		answer, quit := command(cluster, strings.Fields(in.Text()))
		say(answer)
		if quit {
			break
		}
	}
	cluster.Close()
}

// command runs one command line and gives its answer line, and whether to stop.
func command(cluster *kfake.Cluster, words []string) (string, bool) {
	if len(words) == 0 {
		return "ERR empty command: one of PING, VERSION, ADDRS, LEADER, MOVE, RETENTION, QUIT", false
	}
	switch words[0] {
	case "PING":
		return "OK", false
	case "VERSION":
		return "OK " + kfakeVersion(), false
	case "ADDRS":
		return "OK " + addrs(cluster), false
	case "LEADER":
		topic, partition, err := topicPartition(words, 3)
		if err != nil {
			return "ERR " + err.Error(), false
		}
		node := cluster.LeaderFor(topic, partition)
		if node < 0 {
			return fmt.Sprintf("ERR no partition %d of topic %q", partition, topic), false
		}
		return fmt.Sprintf("OK %d", node), false
	case "MOVE":
		topic, partition, err := topicPartition(words, 4)
		if err != nil {
			return "ERR " + err.Error(), false
		}
		node, err := strconv.ParseInt(words[3], 10, 32)
		if err != nil {
			return fmt.Sprintf("ERR node %q is not a number", words[3]), false
		}
		if err := cluster.MoveTopicPartition(topic, partition, int32(node)); err != nil {
			return fmt.Sprintf("ERR moving %s-%d to node %d: %v", topic, partition, node, err), false
		}
		return fmt.Sprintf("OK %d", cluster.LeaderFor(topic, partition)), false
	case "RETENTION":
		cluster.ApplyRetention()
		return "OK", false
	case "QUIT":
		return "OK", true
	}
	return fmt.Sprintf("ERR unknown command %q: one of PING, VERSION, ADDRS, LEADER, MOVE, RETENTION, QUIT", words[0]), false
}

func topicPartition(words []string, want int) (string, int32, error) {
	if len(words) != want {
		return "", 0, fmt.Errorf("%s takes %d arguments, not %d", words[0], want-1, len(words)-1)
	}
	partition, err := strconv.ParseInt(words[2], 10, 32)
	if err != nil {
		return "", 0, fmt.Errorf("partition %q is not a number", words[2])
	}
	return words[1], int32(partition), nil
}

// addrs lists the brokers as node@host:port; kfake numbers its brokers 0..N-1 in the order it listens.
func addrs(cluster *kfake.Cluster) string {
	var parts []string
	for node, addr := range cluster.ListenAddrs() {
		parts = append(parts, fmt.Sprintf("%d@%s", node, addr))
	}
	return strings.Join(parts, " ")
}

// kfakeVersion is the kfake module this program was built against, as the go command resolved it, or the
// local directory that replaced it.
func kfakeVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path != kfakeModule {
			continue
		}
		if dep.Replace != nil {
			// A directory that replaces the module has no version of its own: the go command writes "(devel)".
			if dep.Replace.Version == "" || dep.Replace.Version == "(devel)" {
				return "local:" + dep.Replace.Path
			}
			return dep.Replace.Version
		}
		return dep.Version
	}
	return "unknown"
}

func parseLevel(name string) (kfake.LogLevel, error) {
	switch name {
	case "none":
		return kfake.LogLevelNone, nil
	case "error":
		return kfake.LogLevelError, nil
	case "warn":
		return kfake.LogLevelWarn, nil
	case "info":
		return kfake.LogLevelInfo, nil
	case "debug":
		return kfake.LogLevelDebug, nil
	}
	return kfake.LogLevelNone, fmt.Errorf("-log-level %q: one of none, error, warn, info, debug", name)
}

func fail(why string) {
	fmt.Fprintln(os.Stderr, "kts-kfake: "+why)
	os.Exit(2)
}

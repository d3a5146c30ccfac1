// The kafka-go driver: github.com/segmentio/kafka-go behind the suite's driver protocol
// (docs/driver-protocol.md), client role only, one kafka-go call per operation:
//
//	send               a kafka.Writer per send, WriteMessages of all records (BatchSize is the number of
//	                   records, so they go as one batch at once; a Balancer that picks the asked
//	                   partition; RequireAll); each record's metadata is the Message the Writer's
//	                   Completion hands back (Offset, Time)
//	consume            a kafka.Reader on the partition (no GroupID), SetOffset, ReadMessage until `until`
//	offsets_for_times  kafka.Client.ListOffsets with an OffsetRequest{Partition, Timestamp: target}
//	list_offsets       kafka.Client.ListOffsets with FirstOffsetOf / LastOffsetOf (their FirstOffset and
//	                   LastOffset: offsets only); kafka-go has no max-timestamp lookup
//	seek_by_time       ListOffsets for the answer, then kafka-go's own seek by time:
//	                   Reader.SetOffsetAt(time) and the first ReadMessage
//
// kafka-go's Message has no timestamp type, only Time (message.go); the driver gives a null
// timestamp_type and leaves "timestamp-type" out of its capabilities, and reports -1 where Time is Go's
// zero time. A WriteMessages failure is the Writer's one error for the
// whole batch (the Writer does not pass on a Produce answer's record errors), reported for each record.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"kts.local/driverkit"
)

const module = "github.com/segmentio/kafka-go"

var codecs = map[string]kafka.Compression{
	"none": 0, "gzip": kafka.Gzip, "snappy": kafka.Snappy, "lz4": kafka.Lz4, "zstd": kafka.Zstd,
}

type driver struct {
	brokers []string
	timeout time.Duration
	logger  kafka.Logger // kafka-go's log, with KTS_DRIVER_DEBUG set
	errors  kafka.Logger // kafka-go's errors, always: a Reader retries what it cannot read and says so only here
}

// transport is a kafka.Transport for one operation. A Transport answers metadata from a cache it refreshes every
// MetadataTTL (6 s by default, transport.go connPool.roundTrip), so a long-lived one does not know a topic
// created since and fails a write to it with UNKNOWN_TOPIC_OR_PARTITION; the suites create a topic per example.
func (d *driver) transport() *kafka.Transport {
	return &kafka.Transport{ClientID: "kts-kafka-go", DialTimeout: d.timeout}
}

func (d *driver) Hello(role, bootstrap string, timeout time.Duration) (*driverkit.HelloOK, error) {
	if role != driverkit.RoleClient {
		return nil, driverkit.NotSupported("kafka-go's record encoding is internal (protocol package, unexported writers)")
	}
	d.brokers, d.timeout = strings.Split(bootstrap, ","), timeout
	d.errors = log.New(os.Stderr, "[kafka-go error] ", log.LstdFlags)
	if os.Getenv("KTS_DRIVER_DEBUG") != "" {
		d.logger = log.New(os.Stderr, "[kafka-go] ", log.LstdFlags)
	}
	return driverkit.Hello("kafka-go", module, "send", "record-errors", "consume", "offsets-for-times", "earliest",
		"latest", "seek-by-time"), nil
}

func (d *driver) Handle(ctx context.Context, req *driverkit.Request) (any, error) {
	return driverkit.HandleClient(ctx, d, req)
}

func (d *driver) Close() error { return nil }

// kind is a failure's name: a kafka.Error's protocol name, else the Go type.
var kind = driverkit.CodeKind[kafka.Error]

func (d *driver) Send(ctx context.Context, topic string, partition int32, codec string, records []driverkit.Record,
) ([]driverkit.Outcome, error) {
	compression, ok := codecs[codec]
	if !ok {
		return nil, driverkit.NotSupported("no codec " + codec)
	}
	var written []kafka.Message
	to := int(partition)
	transport := d.transport()
	defer transport.CloseIdleConnections()
	writer := &kafka.Writer{
		Addr:         kafka.TCP(d.brokers...),
		Topic:        topic,
		Balancer:     kafka.BalancerFunc(func(kafka.Message, ...int) int { return to }),
		BatchSize:    len(records),
		BatchTimeout: d.timeout, // only if fewer records reach the batch than were sent
		RequiredAcks: kafka.RequireAll,
		Compression:  compression,
		WriteTimeout: d.timeout,
		ReadTimeout:  d.timeout,
		Transport:    transport,
		Logger:       d.logger,
		ErrorLogger:  d.errors,
		Completion:   func(messages []kafka.Message, _ error) { written = append(written, messages...) },
	}
	messages := make([]kafka.Message, len(records))
	for i, r := range records {
		messages[i] = kafka.Message{Key: r.Key, Value: r.Value, Time: driverkit.Time(r.Timestamp)}
	}
	err := writer.WriteMessages(ctx, messages...)
	writer.Close()
	var each kafka.WriteErrors
	if err != nil && !errors.As(err, &each) {
		return nil, driverkit.Fail(kind(err), err.Error())
	}
	if len(written) != len(messages) {
		return nil, driverkit.Fail("driver", fmt.Sprintf("the Writer completed %d of %d messages", len(written),
			len(messages)))
	}
	outcomes := make([]driverkit.Outcome, len(messages))
	for i, m := range written { // Completion hands back one batch, in the order written
		if each != nil && each[i] != nil {
			outcomes[i] = driverkit.NotSent(kind(each[i]), each[i].Error())
		} else {
			outcomes[i] = driverkit.Sent(m.Offset, driverkit.Millis(m.Time))
		}
	}
	return outcomes, nil
}

func consumerRecord(m kafka.Message) driverkit.ConsumerRecord {
	// No TimestampType: kafka-go does not expose one (see the package doc).
	out := driverkit.ConsumerRecord{Offset: m.Offset, Timestamp: driverkit.Millis(m.Time), Key: m.Key,
		Value: m.Value}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, driverkit.Header{Key: h.Key, Value: h.Value})
	}
	return out
}

// lastError is a Reader's ErrorLogger that also keeps the last line: a Reader that cannot read a batch logs the
// error and fetches again (reader.go:1427-1433), so a consume that times out says why with it.
type lastError struct {
	to   kafka.Logger
	mu   sync.Mutex
	line string
}

func (l *lastError) Printf(format string, args ...any) {
	l.to.Printf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line = fmt.Sprintf(format, args...)
}

func (l *lastError) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.line
}

func (d *driver) reader(topic string, partition int32) (*kafka.Reader, *lastError) {
	logged := &lastError{to: d.errors}
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers:     d.brokers,
		Topic:       topic,
		Partition:   int(partition),
		MaxWait:     100 * time.Millisecond,
		Dialer:      &kafka.Dialer{ClientID: "kts-kafka-go", Timeout: d.timeout},
		Logger:      d.logger,
		ErrorLogger: logged,
	}), logged
}

// read delivers records from the reader's position until one at until-1 or beyond (or the first).
func (d *driver) read(ctx context.Context, reader *kafka.Reader, logged *lastError, until int64, first bool,
) ([]driverkit.ConsumerRecord, error) {
	return driverkit.Poll(until, first, func() ([]driverkit.ConsumerRecord, error) {
		m, err := reader.ReadMessage(ctx)
		if ctx.Err() != nil {
			why := ""
			if line := logged.last(); line != "" {
				why = "; the Reader's last error: " + line
			}
			return nil, driverkit.NoRecordWithin("kafka-go", until, d.timeout, why)
		}
		if err != nil {
			return nil, driverkit.Fail(kind(err), err.Error())
		}
		return []driverkit.ConsumerRecord{consumerRecord(m)}, nil
	})
}

func (d *driver) Consume(ctx context.Context, topic string, partition int32, offset, until int64,
) ([]driverkit.ConsumerRecord, error) {
	reader, logged := d.reader(topic, partition)
	defer reader.Close()
	if err := reader.SetOffset(offset); err != nil {
		return nil, driverkit.Fail(kind(err), err.Error())
	}
	return d.read(ctx, reader, logged, until, false)
}

// listOffsets is kafka.Client.ListOffsets for one partition and one OffsetRequest timestamp, passed on
// as it is (FirstOffset and LastOffset are -2 and -1).
func (d *driver) listOffsetsOf(ctx context.Context, topic string, partition int32, timestamp int64,
) (kafka.PartitionOffsets, error) {
	transport := d.transport()
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(d.brokers...), Timeout: d.timeout, Transport: transport}
	resp, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{topic: {{Partition: int(partition), Timestamp: timestamp}}},
	})
	if err != nil {
		return kafka.PartitionOffsets{}, driverkit.Fail(kind(err), err.Error())
	}
	for _, p := range resp.Topics[topic] {
		if p.Partition == int(partition) {
			if p.Error != nil {
				return p, driverkit.Fail(kind(p.Error), p.Error.Error())
			}
			return p, nil
		}
	}
	return kafka.PartitionOffsets{}, driverkit.Fail("UNKNOWN_TOPIC_OR_PARTITION",
		fmt.Sprintf("ListOffsets answered nothing for %s-%d", topic, partition))
}

// OffsetForTime reads a by-time ListOffsets answer as kafka-go gives it: PartitionOffsets.Offsets, a map of the
// offset answered to a time. kafka-go puts the requested timestamp there, not the broker's answer
// (protocol/listoffsets Response.Merge overrides it), and files an answer to a target of -1 or -2 under
// LastOffset or FirstOffset instead, leaving the map empty (reported as null).
func (d *driver) OffsetForTime(ctx context.Context, topic string, partition int32, target int64,
) (*driverkit.OffsetAndTimestamp, error) {
	p, err := d.listOffsetsOf(ctx, topic, partition, target)
	if err != nil {
		return nil, err
	}
	for offset, at := range p.Offsets {
		return &driverkit.OffsetAndTimestamp{Offset: offset, Timestamp: driverkit.Int64(driverkit.Millis(at))}, nil
	}
	return nil, nil
}

func (d *driver) ListOffset(ctx context.Context, topic string, partition int32, spec string,
) (*driverkit.OffsetAndTimestamp, error) {
	switch spec {
	case "earliest":
		p, err := d.listOffsetsOf(ctx, topic, partition, kafka.FirstOffset)
		if err != nil {
			return nil, err
		}
		return &driverkit.OffsetAndTimestamp{Offset: p.FirstOffset}, nil
	case "latest":
		p, err := d.listOffsetsOf(ctx, topic, partition, kafka.LastOffset)
		if err != nil {
			return nil, err
		}
		return &driverkit.OffsetAndTimestamp{Offset: p.LastOffset}, nil
	}
	return nil, driverkit.NotSupported("kafka-go has no " + spec + " lookup")
}

// SeekByTime is kafka-go's own seek by time: Reader.SetOffsetAt(target) and the first ReadMessage (no record
// found, where kafka-go answers offset -1, leaves HandleClient's record null before this).
func (d *driver) SeekByTime(ctx context.Context, topic string, partition int32, target int64,
	_ *driverkit.OffsetAndTimestamp, until int64) (driverkit.ConsumerRecord, error) {
	reader, logged := d.reader(topic, partition)
	defer reader.Close()
	if err := reader.SetOffsetAt(ctx, time.UnixMilli(target)); err != nil {
		return driverkit.ConsumerRecord{}, driverkit.Fail(kind(err), err.Error())
	}
	records, err := d.read(ctx, reader, logged, until, true)
	if err != nil {
		return driverkit.ConsumerRecord{}, err
	}
	return records[0], nil
}

func main() { driverkit.Serve(&driver{}) }

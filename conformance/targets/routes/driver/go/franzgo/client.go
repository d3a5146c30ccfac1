package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"kts.local/driverkit"
)

// The client role, one library call per operation:
//
//	send               kgo.Client.ProduceSync (one producer client per codec: ManualPartitioner,
//	                   acks=all, no idempotence); each record's metadata is its *kgo.Record after
//	                   the promise (Offset, Timestamp)
//	consume            a kgo.Client with kgo.ConsumePartitions at kgo.NewOffset().At(offset) (direct
//	                   consuming, no group), PollFetches until `until`
//	offsets_for_times  kadm.Client.ListOffsetsAfterMilli
//	list_offsets       kadm.Client.ListStartOffsets / ListEndOffsets / ListMaxTimestampOffsets
//	seek_by_time       ListOffsetsAfterMilli for the answer, then kgo's own seek by time:
//	                   kgo.ConsumePartitions at kgo.NewOffset().AfterMilli(target)

// A send's records are buffered within microseconds, so a short linger keeps them in one batch even
// while the producer still waits for a new topic's metadata (where it knows the partition already,
// ProduceSync stops lingering once every record is buffered).
const linger = 50 * time.Millisecond

var codecs = map[string]kgo.CompressionCodec{
	"none":   kgo.NoCompression(),
	"gzip":   kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(),
	"lz4":    kgo.Lz4Compression(),
	"zstd":   kgo.ZstdCompression(),
}

type client struct {
	seeds     []string
	timeout   time.Duration
	producers map[string]*kgo.Client
	admin     *kadm.Client
	batches   atomic.Int64 // produce batches written, to check that one send is one batch
}

func newClient(bootstrap string, timeout time.Duration) *client {
	return &client{seeds: strings.Split(bootstrap, ","), timeout: timeout, producers: map[string]*kgo.Client{}}
}

func (c *client) options(id string, more ...kgo.Opt) []kgo.Opt {
	return append([]kgo.Opt{
		kgo.SeedBrokers(c.seeds...),
		kgo.ClientID("kts-franz-go-" + id),
		kgo.RetryTimeout(c.timeout),
		kgo.WithLogger(kgo.BasicLogger(log.Writer(), logLevel(), nil)),
	}, more...)
}

func (c *client) producer(codec string) (*kgo.Client, error) {
	if p, ok := c.producers[codec]; ok {
		return p, nil
	}
	compression, ok := codecs[codec]
	if !ok {
		return nil, driverkit.NotSupported("no codec " + codec)
	}
	p, err := kgo.NewClient(c.options("producer",
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(compression),
		kgo.ProducerLinger(linger),
		// No kgo.RecordDeliveryTimeout: kgo measures it from each record's own Timestamp
		// (recBatch.isTimedOut), so a record stamped further back than the timeout would fail unsent.
		// ProduceSync's context bounds the call instead.
		kgo.WithHooks(batchCounter{&c.batches}),
	)...)
	if err != nil {
		return nil, err
	}
	c.producers[codec] = p
	return p, nil
}

// batchCounter counts the batches kgo writes (kgo.HookProduceBatchWritten).
type batchCounter struct{ n *atomic.Int64 }

func (b batchCounter) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, _ kgo.ProduceBatchMetrics) {
	b.n.Add(1)
}

func (c *client) adminClient() (*kadm.Client, error) {
	if c.admin == nil {
		cl, err := kgo.NewClient(c.options("admin")...)
		if err != nil {
			return nil, err
		}
		c.admin = kadm.NewClient(cl)
		c.admin.SetTimeoutMillis(int32(c.timeout.Milliseconds()))
	}
	return c.admin, nil
}

func (c *client) close() {
	for _, p := range c.producers {
		p.Close()
	}
	if c.admin != nil {
		c.admin.Close()
	}
}

// kind is a failure's name: the Kafka error's protocol name (kerr.Error.Message), else the Go type.
func kind(err error) string {
	var kafka *kerr.Error
	if errors.As(err, &kafka) {
		return kafka.Message
	}
	return fmt.Sprintf("%T", err)
}

func (c *client) Send(ctx context.Context, topic string, partition int32, codec string, sent []driverkit.Record,
) ([]driverkit.Outcome, error) {
	p, err := c.producer(codec)
	if err != nil {
		return nil, err
	}
	records := make([]*kgo.Record, len(sent))
	for i, r := range sent {
		records[i] = &kgo.Record{Topic: topic, Partition: partition, Key: r.Key, Value: r.Value,
			Timestamp: driverkit.Time(r.Timestamp)}
	}
	before := c.batches.Load()
	results := p.ProduceSync(ctx, records...)
	if n := c.batches.Load() - before; n > 1 {
		log.Printf("send of %d records went out as %d batches", len(records), n)
	}
	failed := map[*kgo.Record]error{}
	for _, r := range results {
		if r.Err != nil {
			failed[r.Record] = r.Err
		}
	}
	outcomes := make([]driverkit.Outcome, len(records))
	for i, r := range records {
		err, bad := failed[r]
		switch {
		case !bad:
			outcomes[i] = driverkit.Sent(r.Offset, driverkit.Millis(r.Timestamp))
		case errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, context.DeadlineExceeded):
			return nil, driverkit.Fail(kind(err), err.Error())
		default:
			outcomes[i] = driverkit.NotSent(kind(err), err.Error())
		}
	}
	return outcomes, nil
}

func consumerRecord(r *kgo.Record) driverkit.ConsumerRecord {
	types := map[int8]string{-1: driverkit.NoTimestampType, 0: driverkit.CreateTime, 1: driverkit.LogAppendTime}
	out := driverkit.ConsumerRecord{Offset: r.Offset, Timestamp: driverkit.Millis(r.Timestamp),
		TimestampType: driverkit.TypeOf(types[r.Attrs.TimestampType()]), Key: r.Key, Value: r.Value}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, driverkit.Header{Key: h.Key, Value: h.Value})
	}
	return out
}

// poll consumes one partition from `at` with a client of its own (direct consuming, no group) and
// delivers records until one at until-1 or beyond, or `first` records.
func (c *client) poll(ctx context.Context, topic string, partition int32, at kgo.Offset, until int64, first bool,
) ([]driverkit.ConsumerRecord, error) {
	cl, err := kgo.NewClient(c.options("consumer",
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: at}}),
		kgo.FetchMaxWait(100*time.Millisecond),
	)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return driverkit.Poll(until, first, func() ([]driverkit.ConsumerRecord, error) {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, driverkit.NoRecordWithin("kgo", until, c.timeout, "")
		}
		for _, e := range fetches.Errors() {
			return nil, driverkit.Fail(kind(e.Err), e.Err.Error())
		}
		var batch []driverkit.ConsumerRecord
		for _, r := range fetches.Records() {
			batch = append(batch, consumerRecord(r))
		}
		return batch, nil
	})
}

func (c *client) Consume(ctx context.Context, topic string, partition int32, offset, until int64,
) ([]driverkit.ConsumerRecord, error) {
	return c.poll(ctx, topic, partition, kgo.NewOffset().At(offset), until, false)
}

// listed is kadm's answer for one partition, or the failure it reports.
func listed(offsets kadm.ListedOffsets, err error, topic string, partition int32) (kadm.ListedOffset, error) {
	if err != nil {
		return kadm.ListedOffset{}, driverkit.Fail(kind(err), err.Error())
	}
	o, ok := offsets.Lookup(topic, partition)
	if !ok {
		return o, driverkit.Fail("UNKNOWN_TOPIC_OR_PARTITION", fmt.Sprintf("kadm listed no %s-%d", topic, partition))
	}
	if o.Err != nil {
		return o, driverkit.Fail(kind(o.Err), o.Err.Error())
	}
	return o, nil
}

// OffsetForTime is kadm's ListOffsetsAfterMilli: it passes any target on, negative ones included, and its
// answer has no null: "Offset is the record offset, or -1 if one could not be found", which the
// driver reports as null; where the broker found nothing kadm answers the end offset instead
// (ListOffsetsAfterMilli's documented fallback), reported as kadm gives it.
func (c *client) OffsetForTime(ctx context.Context, topic string, partition int32, target int64,
) (*driverkit.OffsetAndTimestamp, error) {
	admin, err := c.adminClient()
	if err != nil {
		return nil, err
	}
	offsets, err := admin.ListOffsetsAfterMilli(ctx, target, topic)
	o, err := listed(offsets, err, topic, partition)
	if err != nil {
		return nil, err
	}
	if o.Offset < 0 {
		return nil, nil
	}
	return &driverkit.OffsetAndTimestamp{Offset: o.Offset, Timestamp: driverkit.Int64(o.Timestamp)}, nil
}

func (c *client) ListOffset(ctx context.Context, topic string, partition int32, spec string,
) (*driverkit.OffsetAndTimestamp, error) {
	admin, err := c.adminClient()
	if err != nil {
		return nil, err
	}
	var offsets kadm.ListedOffsets
	switch spec {
	case "earliest":
		offsets, err = admin.ListStartOffsets(ctx, topic)
	case "latest":
		offsets, err = admin.ListEndOffsets(ctx, topic)
	case "max-timestamp":
		offsets, err = admin.ListMaxTimestampOffsets(ctx, topic)
	default:
		return nil, driverkit.NotSupported("no spec " + spec)
	}
	o, err := listed(offsets, err, topic, partition)
	if err != nil {
		return nil, err
	}
	// kadm's ListedOffset always carries the broker's timestamp (-1 for the start and end offsets).
	return &driverkit.OffsetAndTimestamp{Offset: o.Offset, Timestamp: driverkit.Int64(o.Timestamp)}, nil
}

// SeekByTime is kgo's own seek by time: kgo.ConsumePartitions at kgo.NewOffset().AfterMilli(target) (where
// kadm answered its end-offset fallback, at or beyond `until`, HandleClient leaves the record null before this).
func (c *client) SeekByTime(ctx context.Context, topic string, partition int32, target int64,
	_ *driverkit.OffsetAndTimestamp, until int64) (driverkit.ConsumerRecord, error) {
	records, err := c.poll(ctx, topic, partition, kgo.NewOffset().AfterMilli(target), until, true)
	if err != nil {
		return driverkit.ConsumerRecord{}, err
	}
	return records[0], nil
}

// logLevel is kgo's log level on stderr: warnings, or everything with KTS_DRIVER_DEBUG set.
func logLevel() kgo.LogLevel {
	if os.Getenv("KTS_DRIVER_DEBUG") != "" {
		return kgo.LogLevelDebug
	}
	return kgo.LogLevelWarn
}

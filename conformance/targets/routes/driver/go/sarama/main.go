// The Sarama driver: github.com/IBM/sarama behind the suite's driver protocol (docs/driver-protocol.md),
// client role only, one Sarama call per operation:
//
//	send               a SyncProducer per send (SendMessages of all records; the producer flushes when
//	                   it holds them all, Producer.Flush.Messages, so they go as one batch; manual
//	                   partitioner, acks=all, no idempotence); each record's metadata is its
//	                   *ProducerMessage after the call (Offset, Timestamp)
//	consume            Consumer.ConsumePartition at the offset (no group), Messages() until `until`
//	offsets_for_times  Client.GetOffset(topic, partition, target): an offset only, so the answer's
//	                   timestamp is null
//	list_offsets       Client.GetOffset with OffsetOldest / OffsetNewest; Sarama has no max-timestamp
//	                   lookup (no OffsetSpec, no KIP-734 constant), so that spec is unsupported
//	seek_by_time       GetOffset(target), then ConsumePartition at the offset it answered
//
// Sarama's ConsumerMessage has no timestamp type, only Timestamp (the record's, or the batch's max
// timestamp where the batch is LogAppendTime: consumer.go parseRecords) and BlockTimestamp; the driver
// gives a null timestamp_type and leaves "timestamp-type" out of its capabilities, and reports -1 where
// Timestamp is Go's zero time (Sarama's "no timestamp": a v0 message, or any negative stored timestamp,
// which timestamp.go decodes to the zero time).
//
// No codec role: Sarama's RecordBatch, Record, MessageSet and Message types are exported but their
// encode and decode methods are not (packetEncoder, packetDecoder), so no application can build or
// read a batch through Sarama's record layer.
//
// Version is sarama.V3_6_0_0: at V0_11_0_0 or later Sarama writes record batches (magic 2,
// produce_set.go); 3.6 picks the request versions Sarama sends a 3.6 broker (Produce v9, produce_set.go;
// Fetch v12, consumer.go; ListOffsets v6, offset_request.go).
package main

import (
	"context"
	"errors"
	"log"
	"os"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"kts.local/driverkit"
)

const module = "github.com/IBM/sarama"

var codecs = map[string]sarama.CompressionCodec{
	"none":   sarama.CompressionNone,
	"gzip":   sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy,
	"lz4":    sarama.CompressionLZ4,
	"zstd":   sarama.CompressionZSTD,
}

type driver struct {
	addrs    []string
	timeout  time.Duration
	client   sarama.Client
	consumer sarama.Consumer
}

func (d *driver) Hello(role, bootstrap string, timeout time.Duration) (*driverkit.HelloOK, error) {
	if role != driverkit.RoleClient {
		return nil, driverkit.NotSupported("Sarama's record layer encodes and decodes through unexported methods only")
	}
	if os.Getenv("KTS_DRIVER_DEBUG") != "" {
		sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags)
	}
	d.addrs, d.timeout = strings.Split(bootstrap, ","), timeout
	return driverkit.Hello("sarama", module, "send", "record-errors", "consume", "offsets-for-times", "earliest",
		"latest", "seek-by-time"), nil
}

func (d *driver) config() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kts-sarama"
	cfg.Version = sarama.V3_6_0_0
	cfg.Net.DialTimeout, cfg.Net.ReadTimeout, cfg.Net.WriteTimeout = d.timeout, d.timeout, d.timeout
	cfg.Metadata.Timeout = d.timeout
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	return cfg
}

func (d *driver) Handle(ctx context.Context, req *driverkit.Request) (any, error) {
	return driverkit.HandleClient(ctx, d, req)
}

func (d *driver) Close() error {
	if d.consumer != nil {
		d.consumer.Close()
	}
	if d.client != nil {
		return d.client.Close()
	}
	return nil
}

// kind is a failure's name: a Sarama KError's protocol name, else the Go type.
var kind = driverkit.CodeKind[sarama.KError]

func (d *driver) Send(ctx context.Context, topic string, partition int32, codecName string,
	records []driverkit.Record) ([]driverkit.Outcome, error) {
	codec, ok := codecs[codecName]
	if !ok {
		return nil, driverkit.NotSupported("no codec " + codecName)
	}
	cfg := d.config()
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = false
	cfg.Producer.Return.Successes = true
	cfg.Producer.Compression = codec
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Timeout = d.timeout
	cfg.Producer.Flush.Messages = len(records)
	cfg.Producer.Flush.Frequency = d.timeout // only if fewer records reach the batch than were sent
	producer, err := sarama.NewSyncProducer(d.addrs, cfg)
	if err != nil {
		return nil, driverkit.Fail(kind(err), err.Error())
	}
	defer producer.Close()
	messages := make([]*sarama.ProducerMessage, len(records))
	for i, r := range records {
		messages[i] = &sarama.ProducerMessage{Topic: topic, Partition: partition,
			Timestamp: driverkit.Time(r.Timestamp)}
		if r.Key != nil {
			messages[i].Key = sarama.ByteEncoder(r.Key)
		}
		if r.Value != nil {
			messages[i].Value = sarama.ByteEncoder(r.Value)
		}
	}
	done := make(chan error, 1)
	go func() { done <- producer.SendMessages(messages) }()
	select {
	case <-ctx.Done():
		return nil, driverkit.Fail("timeout", "SendMessages did not return within "+d.timeout.String())
	case err = <-done:
	}
	failed := map[*sarama.ProducerMessage]error{}
	var each sarama.ProducerErrors
	if errors.As(err, &each) {
		for _, e := range each {
			failed[e.Msg] = e.Err
		}
	} else if err != nil {
		return nil, driverkit.Fail(kind(err), err.Error())
	}
	outcomes := make([]driverkit.Outcome, len(messages))
	for i, m := range messages {
		if err, bad := failed[m]; bad {
			outcomes[i] = driverkit.NotSent(kind(err), err.Error())
		} else {
			outcomes[i] = driverkit.Sent(m.Offset, driverkit.Millis(m.Timestamp))
		}
	}
	return outcomes, nil
}

func (d *driver) clientOf() (sarama.Client, error) {
	if d.client == nil {
		client, err := sarama.NewClient(d.addrs, d.config())
		if err != nil {
			return nil, driverkit.Fail(kind(err), err.Error())
		}
		d.client = client
	}
	return d.client, nil
}

func consumerRecord(m *sarama.ConsumerMessage) driverkit.ConsumerRecord {
	// No TimestampType: Sarama does not expose one (see the package doc).
	out := driverkit.ConsumerRecord{Offset: m.Offset, Timestamp: driverkit.Millis(m.Timestamp), Key: m.Key,
		Value: m.Value}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, driverkit.Header{Key: string(h.Key), Value: h.Value})
	}
	return out
}

// poll consumes from `offset` with Consumer.ConsumePartition until a record at until-1 or beyond
// (or the first record, with `first`).
func (d *driver) poll(ctx context.Context, topic string, partition int32, offset, until int64, first bool,
) ([]driverkit.ConsumerRecord, error) {
	if d.consumer == nil {
		client, err := d.clientOf()
		if err != nil {
			return nil, err
		}
		if d.consumer, err = sarama.NewConsumerFromClient(client); err != nil {
			return nil, driverkit.Fail(kind(err), err.Error())
		}
	}
	pc, err := d.consumer.ConsumePartition(topic, partition, offset)
	if err != nil {
		return nil, driverkit.Fail(kind(err), err.Error())
	}
	defer pc.Close()
	return driverkit.Poll(until, first, func() ([]driverkit.ConsumerRecord, error) {
		select {
		case <-ctx.Done():
			return nil, driverkit.NoRecordWithin("Sarama", until, d.timeout, "")
		case e := <-pc.Errors():
			return nil, driverkit.Fail(kind(e.Err), e.Error())
		case m := <-pc.Messages():
			return []driverkit.ConsumerRecord{consumerRecord(m)}, nil
		}
	})
}

func (d *driver) Consume(ctx context.Context, topic string, partition int32, offset, until int64,
) ([]driverkit.ConsumerRecord, error) {
	return d.poll(ctx, topic, partition, offset, until, false)
}

// OffsetForTime is Client.GetOffset: any target is sent as it is (OffsetNewest and OffsetOldest are -1 and
// -2), and the answer is an offset only, -1 where the broker found nothing.
func (d *driver) OffsetForTime(_ context.Context, topic string, partition int32, target int64,
) (*driverkit.OffsetAndTimestamp, error) {
	client, err := d.clientOf()
	if err != nil {
		return nil, err
	}
	offset, err := client.GetOffset(topic, partition, target)
	if err != nil {
		return nil, driverkit.Fail(kind(err), err.Error())
	}
	return &driverkit.OffsetAndTimestamp{Offset: offset}, nil
}

func (d *driver) ListOffset(ctx context.Context, topic string, partition int32, spec string,
) (*driverkit.OffsetAndTimestamp, error) {
	specs := map[string]int64{"earliest": sarama.OffsetOldest, "latest": sarama.OffsetNewest}
	target, ok := specs[spec]
	if !ok {
		return nil, driverkit.NotSupported("Sarama has no " + spec + " lookup")
	}
	return d.OffsetForTime(ctx, topic, partition, target)
}

// SeekByTime consumes from the offset GetOffset answered (Sarama has no seek by time of its own).
func (d *driver) SeekByTime(ctx context.Context, topic string, partition int32, _ int64,
	found *driverkit.OffsetAndTimestamp, until int64) (driverkit.ConsumerRecord, error) {
	records, err := d.poll(ctx, topic, partition, found.Offset, until, true)
	if err != nil {
		return driverkit.ConsumerRecord{}, err
	}
	return records[0], nil
}

func main() { driverkit.Serve(&driver{}) }

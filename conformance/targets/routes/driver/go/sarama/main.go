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
	"fmt"
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
	return &driverkit.HelloOK{
		Protocol: driverkit.Version,
		Library:  "sarama",
		Version:  driverkit.ModuleVersion(module),
		Language: "go",
		Capabilities: []string{"send", "record-errors", "consume", "offsets-for-times", "earliest", "latest",
			"seek-by-time"},
		Codecs: driverkit.CodecNames,
	}, nil
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
	switch req.Op {
	case "send":
		return d.send(ctx, req)
	case "consume":
		return d.consume(ctx, req)
	case "offsets_for_times":
		return d.offsetsForTimes(req)
	case "list_offsets":
		return d.listOffsets(req)
	case "seek_by_time":
		return d.seekByTime(ctx, req)
	}
	return nil, driverkit.UnknownOp(req)
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
func kind(err error) string {
	var kafka sarama.KError
	if errors.As(err, &kafka) {
		return driverkit.ErrorName(int16(kafka))
	}
	return fmt.Sprintf("%T", err)
}

func (d *driver) send(ctx context.Context, req *driverkit.Request) (any, error) {
	if err := req.Need("topic", "partition", "codec", "records"); err != nil {
		return nil, err
	}
	codec, ok := codecs[req.Codec]
	if !ok {
		return nil, driverkit.NotSupported("no codec " + req.Codec)
	}
	cfg := d.config()
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = false
	cfg.Producer.Return.Successes = true
	cfg.Producer.Compression = codec
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Timeout = d.timeout
	cfg.Producer.Flush.Messages = len(req.Records)
	cfg.Producer.Flush.Frequency = d.timeout // only if fewer records reach the batch than were sent
	producer, err := sarama.NewSyncProducer(d.addrs, cfg)
	if err != nil {
		return nil, driverkit.Fail(kind(err), err.Error())
	}
	defer producer.Close()
	messages := make([]*sarama.ProducerMessage, len(req.Records))
	for i, r := range req.Records {
		messages[i] = &sarama.ProducerMessage{Topic: req.Topic, Partition: req.Partition,
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
	return map[string]any{"outcomes": outcomes}, nil
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
	var out []driverkit.ConsumerRecord
	for len(out) == 0 || out[len(out)-1].Offset < until-1 {
		select {
		case <-ctx.Done():
			return nil, driverkit.FailDelivered("timeout", fmt.Sprintf("Sarama delivered no record at offset %d or "+
				"beyond within %s", until-1, d.timeout), out)
		case e := <-pc.Errors():
			return nil, driverkit.FailDelivered(kind(e.Err), e.Error(), out)
		case m := <-pc.Messages():
			if m.Offset < until {
				out = append(out, consumerRecord(m))
			}
			if first && len(out) > 0 {
				return out, nil
			}
		}
	}
	return out, nil
}

func (d *driver) consume(ctx context.Context, req *driverkit.Request) (any, error) {
	if err := req.Need("topic", "partition", "offset", "until"); err != nil {
		return nil, err
	}
	records, err := d.poll(ctx, req.Topic, req.Partition, req.Offset, req.Until, false)
	if err != nil {
		return nil, err
	}
	if records == nil {
		records = []driverkit.ConsumerRecord{}
	}
	return map[string]any{"records": records}, nil
}

// getOffset is Client.GetOffset: any target is sent as it is (OffsetNewest and OffsetOldest are -1 and
// -2), and the answer is an offset only, -1 where the broker found nothing.
func (d *driver) getOffset(topic string, partition int32, target int64) (*driverkit.OffsetAndTimestamp, error) {
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

func (d *driver) offsetsForTimes(req *driverkit.Request) (any, error) {
	if err := req.Need("topic", "partition", "target"); err != nil {
		return nil, err
	}
	answer, err := d.getOffset(req.Topic, req.Partition, req.Target)
	if err != nil {
		return nil, err
	}
	return map[string]any{"answer": answer}, nil
}

func (d *driver) listOffsets(req *driverkit.Request) (any, error) {
	if err := req.Need("topic", "partition", "spec"); err != nil {
		return nil, err
	}
	specs := map[string]int64{"earliest": sarama.OffsetOldest, "latest": sarama.OffsetNewest}
	target, ok := specs[req.Spec]
	if !ok {
		return nil, driverkit.NotSupported("Sarama has no " + req.Spec + " lookup")
	}
	return d.getOffset(req.Topic, req.Partition, target)
}

func (d *driver) seekByTime(ctx context.Context, req *driverkit.Request) (any, error) {
	if err := req.Need("topic", "partition", "target", "until"); err != nil {
		return nil, err
	}
	answer, err := d.getOffset(req.Topic, req.Partition, req.Target)
	if err != nil {
		return nil, err
	}
	// Nothing to seek to (-1) or nothing before `until`: a consumer there would wait for new records.
	if answer.Offset < 0 || answer.Offset >= req.Until {
		return map[string]any{"answer": answer, "record": nil}, nil
	}
	records, err := d.poll(ctx, req.Topic, req.Partition, answer.Offset, req.Until, true)
	if err != nil {
		return nil, err
	}
	return map[string]any{"answer": answer, "record": records[0]}, nil
}

func main() { driverkit.Serve(&driver{}) }

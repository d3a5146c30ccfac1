package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kts.local/driverkit"
)

// The codec role. franz-go has no public batch builder: kgo builds batches inside its producer (sink.go)
// and kmsg.RecordBatch / kmsg.Record only encode the fields they are given (length, CRC, deltas and the
// max timestamp would be the driver's). So `build` runs kgo's real producer (ProduceSync) against a
// broker of the driver's own over an in-memory connection (kgo.Dialer, fakebroker.go) and answers the
// record set kgo put in its Produce request: the batch a franz-go application writes. The Produce
// version the broker offers picks the format, as a real broker's does: v0-v1 message sets of magic 0,
// v2 magic 1, v3+ record batches (magic 2).
//
// `read` is kgo's consumer code: kgo.ProcessFetchPartition, the function kgo's consumer runs on every
// fetched partition, on the given bytes; each batch's own fields (magic, offsets, type, max timestamp)
// are kmsg's reading of its header (kmsg.RecordBatch, kmsg.MessageV0, kmsg.MessageV1 ReadFrom).

type codec struct{ timeout time.Duration }

func newCodec(timeout time.Duration) *codec { return &codec{timeout: timeout} }

// produceVersion is the highest Produce version whose requests carry batches of the magic.
var produceVersion = map[int8]int16{0: 1, 1: 2, 2: 11}

func (c *codec) build(ctx context.Context, req *driverkit.Request) (any, error) {
	if err := req.Need("magic", "codec", "timestamp_type", "log_append_time", "base_offset", "records"); err != nil {
		return nil, err
	}
	if req.TimestampType != driverkit.CreateTime || req.LogAppendTime != nil {
		return nil, driverkit.Refuse("unsupported", "franz-go's producer writes CreateTime batches only")
	}
	if req.BaseOffset != 0 {
		return nil, driverkit.Refuse("unsupported", "franz-go's producer writes its batches at base offset 0")
	}
	compression, ok := codecs[req.Codec]
	version, known := produceVersion[req.Magic]
	if !ok || !known {
		return nil, driverkit.NotSupported(fmt.Sprintf("no codec %q or magic %d", req.Codec, req.Magic))
	}
	broker := newFakeBroker(version)
	cl, err := kgo.NewClient(
		kgo.SeedBrokers("fake:9092"),
		kgo.Dialer(broker.dial),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(compression),
		kgo.ProducerLinger(time.Second), // one request: ProduceSync stops lingering once every record is buffered
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	// ProduceSync stops lingering only on partitions whose metadata the client had before it was called;
	// a new client has none, so the records would wait out the whole linger (a second per build). One
	// empty record produced and flushed first (Flush stops every linger) loads the partition; that
	// request is dropped, and the records asked for then go out in one request, as before. Its outcome is
	// not the answer: where it failed (or the request's time ran out), the records below meet the same.
	cl.Produce(ctx, &kgo.Record{Topic: fakeTopic, Partition: 0}, nil)
	_ = cl.Flush(ctx)
	broker.reset()
	records := make([]*kgo.Record, len(req.Records))
	for i, r := range req.Records {
		records[i] = &kgo.Record{Topic: fakeTopic, Partition: 0, Key: r.Key, Value: r.Value,
			Timestamp: driverkit.Time(r.Timestamp)}
		for _, h := range r.Headers {
			records[i].Headers = append(records[i].Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return nil, driverkit.Refuse(kind(err), err.Error())
	}
	produced := broker.produced()
	if len(produced) != 1 {
		return nil, driverkit.Fail("driver", fmt.Sprintf("kgo sent %d Produce requests, not one", len(produced)))
	}
	return map[string]any{"data": driverkit.Bytes(produced[0])}, nil
}

func (c *codec) read(req *driverkit.Request) (any, error) {
	if err := req.Need("data"); err != nil {
		return nil, err
	}
	data := []byte(req.Data)
	decompressor := kgo.DefaultDecompressor()
	// The whole record set at once is what kgo's consumer reads; its error (if any) is the answer.
	whole, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: math.MinInt64, Topic: fakeTopic},
		&kmsg.FetchResponseTopicPartition{RecordBatches: data}, decompressor, nil)
	if whole.Err != nil {
		return nil, driverkit.Refuse(fmt.Sprintf("%T", whole.Err), whole.Err.Error())
	}
	// Then entry by entry, carrying the consumer's position from one to the next as it does, to tell
	// which records each batch gave.
	batches := []driverkit.ReadBatch{}
	next := int64(math.MinInt64)
	for len(data) >= 17 {
		length := int32(binary.BigEndian.Uint32(data[8:]))
		if length < 0 || int(length)+12 > len(data) {
			break // a partial entry at the end, which a consumer leaves for the next fetch
		}
		entry := data[:12+length]
		data = data[12+length:]
		fp, after := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: next, Topic: fakeTopic},
			&kmsg.FetchResponseTopicPartition{RecordBatches: entry}, decompressor, nil)
		if fp.Err != nil {
			break // kgo's consumer keeps the records before a batch it cannot decompress and stops
		}
		next = after
		batch, err := header(entry)
		if err != nil {
			return nil, driverkit.Refuse(fmt.Sprintf("%T", err), err.Error())
		}
		for _, r := range fp.Records {
			batch.Records = append(batch.Records, consumerRecord(r))
		}
		if batch.Magic < 2 && len(batch.Records) > 0 { // a legacy entry's offsets are its records'
			batch.BaseOffset, batch.LastOffset = batch.Records[0].Offset, batch.Records[len(batch.Records)-1].Offset
		}
		batches = append(batches, batch)
	}
	return map[string]any{"batches": batches}, nil
}

// header is kmsg's reading of an entry's own fields.
func header(entry []byte) (driverkit.ReadBatch, error) {
	out := driverkit.ReadBatch{Magic: int8(entry[16]), BaseOffset: -1, LastOffset: -1,
		Records: []driverkit.ConsumerRecord{}}
	typeOf := func(attributes int16) string {
		if attributes&0x08 != 0 {
			return driverkit.LogAppendTime
		}
		return driverkit.CreateTime
	}
	switch out.Magic {
	case 0:
		var m kmsg.MessageV0
		if err := m.ReadFrom(entry); err != nil {
			return out, err
		}
		out.TimestampType = driverkit.NoTimestampType
	case 1:
		var m kmsg.MessageV1
		if err := m.ReadFrom(entry); err != nil {
			return out, err
		}
		out.TimestampType = typeOf(int16(m.Attributes))
	case 2:
		var b kmsg.RecordBatch
		if err := b.ReadFrom(entry); err != nil {
			return out, err
		}
		out.BaseOffset, out.LastOffset = b.FirstOffset, b.FirstOffset+int64(b.LastOffsetDelta)
		out.TimestampType = typeOf(b.Attributes)
		out.MaxTimestamp = driverkit.Int64(b.MaxTimestamp)
	default:
		return out, fmt.Errorf("unknown magic %d", out.Magic)
	}
	return out, nil
}

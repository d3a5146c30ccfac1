package driverkit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Client is a library in the client role, one method per operation of the protocol. HandleClient checks a
// request's fields and shapes the answer, so that a driver writes only the library calls, and every Go driver
// answers the same request the same way.
type Client interface {
	// Send writes records to topic-partition compressed with codec, as one batch where the library allows;
	// one outcome per record, in order.
	Send(ctx context.Context, topic string, partition int32, codec string, records []Record) ([]Outcome, error)
	// Consume delivers the records from offset on, up to the one at until-1 (Poll gathers them).
	Consume(ctx context.Context, topic string, partition int32, offset, until int64) ([]ConsumerRecord, error)
	// OffsetForTime is the library's lookup of the first record at or after target (nil: none found). It is
	// also seek_by_time's answer.
	OffsetForTime(ctx context.Context, topic string, partition int32, target int64) (*OffsetAndTimestamp, error)
	// ListOffset is the library's lookup of spec ("earliest", "latest", "max-timestamp"); a spec it has no
	// lookup for is NotSupported.
	ListOffset(ctx context.Context, topic string, partition int32, spec string) (*OffsetAndTimestamp, error)
	// SeekByTime is the first record the library's consumer delivers after its own seek to target, where
	// OffsetForTime answered `found`, an offset below until.
	SeekByTime(ctx context.Context, topic string, partition int32, target int64, found *OffsetAndTimestamp,
		until int64) (ConsumerRecord, error)
}

// clientOp is one operation of the client role: the request fields it needs and its answer through a Client.
type clientOp struct {
	needs  []string
	answer func(ctx context.Context, c Client, req *Request) (any, error)
}

// clientOps are the operations of the client role, by name.
var clientOps = map[string]clientOp{
	"send":              {[]string{"topic", "partition", "codec", "records"}, send},
	"consume":           {[]string{"topic", "partition", "offset", "until"}, consume},
	"offsets_for_times": {[]string{"topic", "partition", "target"}, offsetsForTimes},
	"list_offsets":      {[]string{"topic", "partition", "spec"}, listOffsets},
	"seek_by_time":      {[]string{"topic", "partition", "target", "until"}, seekByTime},
}

func send(ctx context.Context, c Client, req *Request) (any, error) {
	outcomes, err := c.Send(ctx, req.Topic, req.Partition, req.Codec, req.Records)
	return okAs("outcomes", outcomes, err)
}

func consume(ctx context.Context, c Client, req *Request) (any, error) {
	records, err := c.Consume(ctx, req.Topic, req.Partition, req.Offset, req.Until)
	if records == nil {
		records = []ConsumerRecord{}
	}
	return okAs("records", records, err)
}

func offsetsForTimes(ctx context.Context, c Client, req *Request) (any, error) {
	answer, err := c.OffsetForTime(ctx, req.Topic, req.Partition, req.Target)
	return okAs("answer", answer, err)
}

func listOffsets(ctx context.Context, c Client, req *Request) (any, error) {
	return c.ListOffset(ctx, req.Topic, req.Partition, req.Spec)
}

// IsClientOp says whether op is one of the client role's operations (HandleClient's).
func IsClientOp(op string) bool {
	_, ok := clientOps[op]
	return ok
}

// HandleClient answers a client operation through c: the fields the op needs are checked first (a missing one
// is a bad request naming it), and the answer is the op's ok object. An op that is not a client one is
// UnknownOp.
func HandleClient(ctx context.Context, c Client, req *Request) (any, error) {
	op, ok := clientOps[req.Op]
	if !ok {
		return nil, UnknownOp(req)
	}
	if err := req.Need(op.needs...); err != nil {
		return nil, err
	}
	return op.answer(ctx, c, req)
}

// okAs is the ok object {key: value}, or the error.
func okAs(key string, value any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]any{key: value}, nil
}

// seekByTime is the lookup's answer and, where it found an offset below `until`, the first record the
// library's own seek by time delivers; with nothing to seek to (none found, or an offset of -1) or nothing
// before `until`, a consumer there would wait for new records, so the record is null.
func seekByTime(ctx context.Context, c Client, req *Request) (any, error) {
	answer, err := c.OffsetForTime(ctx, req.Topic, req.Partition, req.Target)
	if err != nil {
		return nil, err
	}
	if answer == nil || answer.Offset < 0 || answer.Offset >= req.Until {
		return map[string]any{"answer": answer, "record": nil}, nil
	}
	record, err := c.SeekByTime(ctx, req.Topic, req.Partition, req.Target, answer, req.Until)
	if err != nil {
		return nil, err
	}
	return map[string]any{"answer": answer, "record": record}, nil
}

// Poll gathers what a consumer delivers, batch by batch from next, until a record at until-1 or beyond (with
// first: until the first record); a record at until or beyond is dropped. A failure of next ends the poll with
// the records delivered so far (FailDelivered, of the failure's kind and message).
func Poll(until int64, first bool, next func() ([]ConsumerRecord, error)) ([]ConsumerRecord, error) {
	var out []ConsumerRecord
	for len(out) == 0 || out[len(out)-1].Offset < until-1 {
		batch, err := next()
		if err != nil {
			failed := asError(err)
			return nil, FailDelivered(failed.Kind, failed.Message, out)
		}
		for _, r := range batch {
			if r.Offset < until {
				out = append(out, r)
			}
			if first && len(out) > 0 {
				return out, nil
			}
		}
	}
	return out, nil
}

// NoRecordWithin is a poll that timed out: `who` delivered no record at offset until-1 or beyond within the
// hello's timeout; why, where not empty, says what the library logged.
func NoRecordWithin(who string, until int64, timeout time.Duration, why string) *Error {
	return Fail("timeout", fmt.Sprintf("%s delivered no record at offset %d or beyond within %s%s", who, until-1,
		timeout, why))
}

// CodeKind is a failure's name for a library whose Kafka errors are a code type E (Sarama's KError, an
// int16; kafka-go's Error, an int): the code's protocol name, else the failure's Go type.
func CodeKind[E interface {
	~int | ~int16
	error
}](err error) string {
	var code E
	if errors.As(err, &code) {
		return ErrorName(int16(code))
	}
	return fmt.Sprintf("%T", err)
}

// Hello is a Go driver's hello answer: the library's name and the version of its Go module this binary was
// built with, every codec, and the capabilities the driver declares (a driver of several roles may set them
// after, by role).
func Hello(library, module string, capabilities ...string) *HelloOK {
	return &HelloOK{
		Protocol:     Version,
		Library:      library,
		Version:      ModuleVersion(module),
		Language:     "go",
		Capabilities: capabilities,
		Codecs:       CodecNames,
	}
}

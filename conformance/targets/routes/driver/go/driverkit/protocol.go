// Package driverkit is what every Go driver of the suite shares: the driver protocol v1
// (docs/driver-protocol.md) as Go types, the JSON-lines loop over stdin and stdout, the client role's
// requests checked and answered around a driver's library calls (client.go), and the small translations
// every library needs (base64 bytes, Go's zero time as "no timestamp", Kafka error names).
// A driver supplies the library calls; nothing here knows a library.
package driverkit

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Version is the protocol version these drivers speak.
const Version = 1

// The roles of the hello request.
const (
	RoleClient = "client"
	RoleCodec  = "codec"
)

// The timestamp types of a consumer record (Java's TimestampType names).
const (
	CreateTime      = "CreateTime"
	LogAppendTime   = "LogAppendTime"
	NoTimestampType = "NoTimestampType"
)

// Bytes is a key, value, header value or whole batch: base64 on the wire, JSON null for a null
// (nil) slice. An empty string decodes to an empty, non-nil slice, so that null and empty stay apart.
type Bytes []byte

func (b Bytes) MarshalJSON() ([]byte, error) {
	if b == nil {
		return []byte("null"), nil
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(b))
}

func (b *Bytes) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*b = nil
		return nil
	}
	var text string
	if err := json.Unmarshal(data, &text); err != nil {
		return err
	}
	decoded, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return fmt.Errorf("not base64: %w", err)
	}
	*b = Bytes(append([]byte{}, decoded...))
	return nil
}

// Header is a record header; its key is a string, its value bytes or null.
type Header struct {
	Key   string `json:"key"`
	Value Bytes  `json:"value"`
}

// Record is a record of a request: a send's outgoing record (timestamp null: the library stamps it)
// or a build's record spec (timestamp always set, headers given).
type Record struct {
	Key       Bytes    `json:"key"`
	Value     Bytes    `json:"value"`
	Timestamp *int64   `json:"timestamp"`
	Headers   []Header `json:"headers"`
}

// Request is any request; which fields it must carry depends on its op (Need checks them).
type Request struct {
	ID  int64  `json:"id"`
	Op  string `json:"op"`
	raw map[string]json.RawMessage

	// hello
	Protocol  int    `json:"protocol"`
	Role      string `json:"role"`
	Bootstrap string `json:"bootstrap"`
	TimeoutMs int64  `json:"timeout_ms"`

	// client operations
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Codec     string   `json:"codec"`
	Records   []Record `json:"records"`
	Offset    int64    `json:"offset"`
	Until     int64    `json:"until"`
	Target    int64    `json:"target"`
	Spec      string   `json:"spec"`

	// codec operations
	Magic         int8   `json:"magic"`
	TimestampType string `json:"timestamp_type"`
	LogAppendTime *int64 `json:"log_append_time"`
	BaseOffset    int64  `json:"base_offset"`
	Data          Bytes  `json:"data"`
	ToMagic       int8   `json:"to_magic"`
	FirstOffset   int64  `json:"first_offset"`
}

// Need answers a bad-request error naming the fields of this op the request does not carry.
func (r *Request) Need(fields ...string) error {
	var missing []string
	for _, field := range fields {
		if _, ok := r.raw[field]; !ok {
			missing = append(missing, field)
		}
	}
	if len(missing) > 0 {
		return BadRequest(fmt.Sprintf("op %q needs %s", r.Op, strings.Join(missing, ", ")))
	}
	return nil
}

func parseRequest(line []byte) (*Request, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, err
	}
	req := &Request{raw: raw}
	if err := json.Unmarshal(line, req); err != nil {
		return nil, err
	}
	if _, ok := raw["id"]; !ok {
		return nil, errors.New(`no "id"`)
	}
	if _, ok := raw["op"]; !ok {
		return nil, errors.New(`no "op"`)
	}
	return req, nil
}

// HelloOK is the answer to hello.
type HelloOK struct {
	Protocol     int      `json:"protocol"`
	Library      string   `json:"library"`
	Version      string   `json:"version"`
	Language     string   `json:"language"`
	Capabilities []string `json:"capabilities"`
	Codecs       []string `json:"codecs"`
	BuildMagics  []int    `json:"build_magics,omitempty"`
	ReadMagics   []int    `json:"read_magics,omitempty"`
}

// Outcome is one record's outcome of a send: its RecordMetadata, or its failure.
type Outcome struct {
	Offset    *int64        `json:"offset,omitempty"`
	Timestamp *int64        `json:"timestamp,omitempty"`
	Error     *RecordFailed `json:"error,omitempty"`
}

// RecordFailed is the failure the library reports for one record.
type RecordFailed struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Sent is a record the library reports as written at offset with timestamp.
func Sent(offset, timestamp int64) Outcome {
	return Outcome{Offset: &offset, Timestamp: &timestamp}
}

// NotSent is a record the library reports as failed.
func NotSent(kind, message string) Outcome {
	return Outcome{Error: &RecordFailed{Kind: kind, Message: message}}
}

// ConsumerRecord is a record as the library's consumer delivers it. TimestampType is nil (null) where the
// library exposes no timestamp type; a driver that gives one declares the "timestamp-type" capability.
type ConsumerRecord struct {
	Offset        int64    `json:"offset"`
	Timestamp     int64    `json:"timestamp"`
	TimestampType *string  `json:"timestamp_type"`
	Key           Bytes    `json:"key"`
	Value         Bytes    `json:"value"`
	Headers       []Header `json:"headers,omitempty"`
}

// OffsetAndTimestamp is a lookup's answer; Timestamp nil where the library reports an offset only.
type OffsetAndTimestamp struct {
	Offset    int64  `json:"offset"`
	Timestamp *int64 `json:"timestamp"`
}

// ReadBatch is one batch as a codec's reader reports it; MaxTimestamp nil where not exposed.
type ReadBatch struct {
	Magic         int8             `json:"magic"`
	BaseOffset    int64            `json:"base_offset"`
	LastOffset    int64            `json:"last_offset"`
	TimestampType string           `json:"timestamp_type"`
	MaxTimestamp  *int64           `json:"max_timestamp"`
	Records       []ConsumerRecord `json:"records"`
}

// TypeOf is a record's timestamp type as a library exposes it, for ConsumerRecord.TimestampType.
func TypeOf(name string) *string {
	return &name
}

// Int64 is a pointer to v, for the optional fields above.
func Int64(v int64) *int64 { return &v }

// Sorted returns the keys of a set in order, so that a hello answer reads the same every time.
func Sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k, ok := range set {
		if ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

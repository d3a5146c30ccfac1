package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeBroker is the smallest broker kgo's producer will write to: one node, one topic of one
// partition, every Produce request accepted at offset 0 and its record set kept. It runs over
// in-memory connections (net.Pipe) handed to kgo through kgo.Dialer; requests and answers are kmsg's
// encoding of the Kafka protocol, so the only bytes of the driver's own are the request and answer
// headers.
type fakeBroker struct {
	maxProduce int16
	mu         sync.Mutex
	records    [][]byte
}

const fakeTopic = "kts"

func newFakeBroker(maxProduce int16) *fakeBroker { return &fakeBroker{maxProduce: maxProduce} }

func (b *fakeBroker) dial(_ context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	go b.serve(server)
	return client, nil
}

// reset forgets the record sets kept so far.
func (b *fakeBroker) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.records = nil
}

func (b *fakeBroker) produced() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.records
}

func (b *fakeBroker) serve(conn net.Conn) {
	defer conn.Close()
	for {
		var size [4]byte
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(conn, body); err != nil {
			return
		}
		answer, err := b.answer(body)
		if err != nil {
			return // kgo sees a dropped connection, as from a broker that cannot parse a request
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(len(answer)))
		if _, err := conn.Write(append(out, answer...)); err != nil {
			return
		}
	}
}

// answer parses one request (header v1 or v2, then kmsg's body) and encodes the response.
func (b *fakeBroker) answer(in []byte) ([]byte, error) {
	if len(in) < 10 {
		return nil, fmt.Errorf("short request")
	}
	key, version := int16(binary.BigEndian.Uint16(in)), int16(binary.BigEndian.Uint16(in[2:]))
	correlation := in[4:8]
	pos := 10
	if n := int16(binary.BigEndian.Uint16(in[8:])); n > 0 {
		pos += int(n)
	}
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil, fmt.Errorf("unknown key %d", key)
	}
	req.SetVersion(version)
	if req.IsFlexible() { // header v2 ends with tagged fields
		pos = skipTags(in, pos)
	}
	if pos < 0 || pos > len(in) {
		return nil, fmt.Errorf("bad header")
	}
	if err := req.ReadFrom(in[pos:]); err != nil {
		return nil, err
	}
	resp := b.respond(req)
	resp.SetVersion(version)
	out := append([]byte{}, correlation...)
	if resp.IsFlexible() && key != 18 { // ApiVersions answers with header v0 at every version
		out = append(out, 0)
	}
	return resp.AppendTo(out), nil
}

func skipTags(in []byte, pos int) int {
	n, read := binary.Uvarint(in[pos:])
	if read <= 0 {
		return -1
	}
	pos += read
	for i := uint64(0); i < n; i++ {
		for j := 0; j < 2; j++ { // the tag, then the size of its value
			v, read := binary.Uvarint(in[pos:])
			if read <= 0 {
				return -1
			}
			pos += read
			if j == 1 {
				pos += int(v)
			}
		}
	}
	return pos
}

func (b *fakeBroker) respond(req kmsg.Request) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.ApiVersionsRequest:
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		for _, k := range []struct{ key, max int16 }{{0, b.maxProduce}, {3, 12}, {18, 4}} {
			resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k.key, MaxVersion: k.max})
		}
		return resp
	case *kmsg.MetadataRequest:
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: "fake", Port: 9092}}
		resp.ControllerID = 0
		topic := kmsg.NewMetadataResponseTopic()
		topic.Topic = kmsg.StringPtr(fakeTopic)
		partition := kmsg.NewMetadataResponseTopicPartition()
		partition.Replicas, partition.ISR = []int32{0}, []int32{0}
		topic.Partitions = []kmsg.MetadataResponseTopicPartition{partition}
		resp.Topics = []kmsg.MetadataResponseTopic{topic}
		return resp
	case *kmsg.ProduceRequest:
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				b.mu.Lock()
				b.records = append(b.records, append([]byte{}, p.Records...))
				b.mu.Unlock()
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition = p.Partition
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	default:
		return req.ResponseKind() // an empty answer: nothing else is asked of a producer without idempotence
	}
}

// The franz-go driver: github.com/twmb/franz-go (kgo, kadm, kmsg) behind the suite's driver protocol
// (docs/driver-protocol.md). The client role drives kgo and kadm as an application does
// (client.go); the codec role drives kgo's own producer and consumer record code on bytes
// (codec.go).
package main

import (
	"context"
	"time"

	"kts.local/driverkit"
)

const module = "github.com/twmb/franz-go"

type driver struct {
	client *client
	codec  *codec
}

func (d *driver) Hello(role, bootstrap string, timeout time.Duration) (*driverkit.HelloOK, error) {
	hello := driverkit.Hello("franz-go", module) // every codec: kgo writes and reads all five (kgo.DefaultCompressor)
	switch role {
	case driverkit.RoleClient:
		d.client = newClient(bootstrap, timeout)
		hello.Capabilities = []string{"send", "record-errors", "consume", "offsets-for-times", "earliest",
			"latest", "max-timestamp", "seek-by-time", "timestamp-type"} // kgo.Record.Attrs.TimestampType()
	case driverkit.RoleCodec:
		d.codec = newCodec(timeout)
		hello.Capabilities = []string{"build", "read", "batch-max-timestamp"}
		hello.BuildMagics = []int{0, 1, 2}
		hello.ReadMagics = []int{0, 1, 2}
	default:
		return nil, driverkit.NotSupported("no role " + role)
	}
	return hello, nil
}

func (d *driver) Handle(ctx context.Context, req *driverkit.Request) (any, error) {
	if d.client != nil && driverkit.IsClientOp(req.Op) {
		return driverkit.HandleClient(ctx, d.client, req)
	}
	if d.codec != nil {
		switch req.Op {
		case "build":
			return d.codec.build(ctx, req)
		case "read":
			return d.codec.read(req)
		}
	}
	return nil, driverkit.UnknownOp(req)
}

func (d *driver) Close() error {
	if d.client != nil {
		d.client.close()
	}
	return nil
}

func main() { driverkit.Serve(&driver{}) }

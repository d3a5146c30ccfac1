package driverkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/debug"
	"time"
)

// Driver is one library behind the protocol. Serve calls Hello once, then Handle for every other
// request but close, one at a time, then Close.
type Driver interface {
	// Hello starts the role ("client" against bootstrap, or "codec") and says what the driver can do;
	// a role it does not play is an NotSupported error. timeout bounds every later library call.
	Hello(role, bootstrap string, timeout time.Duration) (*HelloOK, error)
	// Handle answers one operation with its ok object, or an error (an *Error, or any error: failed).
	// ctx ends after the hello's timeout. An op it does not know is UnknownOp(req).
	Handle(ctx context.Context, req *Request) (any, error)
	// Close closes the library's producers and consumers.
	Close() error
}

// UnknownOp is the answer to an op the driver does not know.
func UnknownOp(req *Request) error { return BadRequest(fmt.Sprintf("unknown op %q", req.Op)) }

type answer struct {
	ID    int64  `json:"id"`
	OK    any    `json:"ok,omitempty"`
	Error *Error `json:"error,omitempty"`
}

// Serve runs the protocol over stdin and stdout until close or the end of stdin, then exits 0.
// Logs go to stderr only: stdout carries nothing but answers.
func Serve(driver Driver) {
	log.SetOutput(os.Stderr)
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	os.Exit(serve(driver, os.Stdin, os.Stdout))
}

func serve(driver Driver, in io.Reader, out io.Writer) int {
	reader := bufio.NewReaderSize(in, 1<<20)
	writer := bufio.NewWriter(out)
	reply := func(a answer) {
		line, err := json.Marshal(a)
		if err != nil { // an answer that does not encode is the driver's bug: say so rather than hang
			line, _ = json.Marshal(answer{ID: a.ID, Error: Fail("driver", "cannot encode the answer: "+err.Error())})
		}
		writer.Write(append(line, '\n'))
		writer.Flush()
	}
	var timeout time.Duration
	started := false
	for {
		line, err := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			req, perr := parseRequest(line)
			switch {
			case perr != nil:
				// Whatever the line was, it has no id we can trust: the protocol's answer is id 0.
				reply(answer{ID: 0, Error: BadRequest("malformed request: " + perr.Error())})
			case req.Op == "hello":
				ok, herr := hello(driver, req)
				if herr == nil {
					started, timeout = true, time.Duration(req.TimeoutMs)*time.Millisecond
				}
				reply(result(req.ID, ok, herr))
			case req.Op == "close":
				var cerr error
				if started {
					cerr = driver.Close()
				}
				reply(result(req.ID, struct{}{}, cerr))
				return 0
			case !started:
				reply(answer{ID: req.ID, Error: BadRequest("the first request must be hello")})
			default:
				ok, herr := handle(driver, req, timeout)
				reply(result(req.ID, ok, herr))
			}
		}
		if err != nil { // end of input (or a broken pipe): close as on close
			if started {
				if cerr := driver.Close(); cerr != nil {
					log.Printf("close at end of input: %v", cerr)
				}
			}
			return 0
		}
	}
}

func hello(driver Driver, req *Request) (*HelloOK, error) {
	if err := req.Need("protocol", "role", "timeout_ms"); err != nil {
		return nil, err
	}
	if req.Protocol != Version {
		return nil, BadRequest(fmt.Sprintf("this driver speaks protocol version %d, not %d", Version, req.Protocol))
	}
	if req.TimeoutMs < 1 {
		return nil, BadRequest("timeout_ms must be at least 1")
	}
	if req.Role == RoleClient && req.Bootstrap == "" {
		return nil, BadRequest("the client role needs a bootstrap address")
	}
	return driver.Hello(req.Role, req.Bootstrap, time.Duration(req.TimeoutMs)*time.Millisecond)
}

// handle runs one operation; a library panic is a failed call (or the driver's bug), never a dead driver.
func handle(driver Driver, req *Request, timeout time.Duration) (ok any, err error) {
	defer func() {
		if p := recover(); p != nil {
			log.Printf("panic in %s: %v\n%s", req.Op, p, debug.Stack())
			ok, err = nil, Fail("panic", fmt.Sprint(p))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return driver.Handle(ctx, req)
}

func result(id int64, ok any, err error) answer {
	if err != nil {
		return answer{ID: id, Error: asError(err)}
	}
	return answer{ID: id, OK: ok}
}

package driverkit

import (
	"errors"
	"fmt"
)

// The error types of the protocol ("Errors are values").
const (
	Failed      = "failed"      // the library call failed
	Refused     = "refused"     // the library refused the call before sending anything
	Unsupported = "unsupported" // the driver or the library cannot do this
	Bad         = "bad-request" // the driver does not understand the request
)

// Error is an error answer. A handler returns one (or any error, which becomes type "failed").
type Error struct {
	Type      string           `json:"type"`
	Kind      string           `json:"kind,omitempty"`
	Message   string           `json:"message,omitempty"`
	Delivered []ConsumerRecord `json:"delivered,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s %s: %s", e.Type, e.Kind, e.Message) }

// Fail is a failed library call: kind is the Kafka error name or the library's error type.
func Fail(kind, message string) *Error { return &Error{Type: Failed, Kind: kind, Message: message} }

// FailDelivered is a consume that failed after delivering `delivered`.
func FailDelivered(kind, message string, delivered []ConsumerRecord) *Error {
	if delivered == nil {
		delivered = []ConsumerRecord{}
	}
	return &Error{Type: Failed, Kind: kind, Message: message, Delivered: delivered}
}

// Refuse is the library refusing a call before sending anything.
func Refuse(kind, message string) *Error { return &Error{Type: Refused, Kind: kind, Message: message} }

// NotSupported is an operation or option the driver or the library does not offer.
func NotSupported(message string) *Error { return &Error{Type: Unsupported, Message: message} }

// BadRequest is a request the driver does not understand.
func BadRequest(message string) *Error { return &Error{Type: Bad, Message: message} }

// asError turns a handler's error into an answer: an *Error as it is, anything else a failed call
// whose kind is the error's Go type.
func asError(err error) *Error {
	var answer *Error
	if errors.As(err, &answer) {
		return answer
	}
	return Fail(fmt.Sprintf("%T", err), err.Error())
}

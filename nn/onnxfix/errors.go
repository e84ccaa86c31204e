package onnxfix

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// WireError is a malformed protobuf: the file is cut short or is not a
// protobuf message at all.
type WireError struct {
	Field protowire.Number // the field being read, 0 if its tag
	Err   error
}

func (e *WireError) Error() string {
	// protowire's messages start with "proto:" and a no-break space.
	msg := strings.TrimLeft(strings.TrimPrefix(e.Err.Error(), "proto:"), " \u00a0")
	if e.Field == 0 {
		return "malformed protobuf: " + msg
	}
	return fmt.Sprintf("malformed protobuf field %d: %s", e.Field, msg)
}

func (e *WireError) Unwrap() error { return e.Err }

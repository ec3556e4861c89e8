package ingest

import (
	"errors"
	"io"
	"sync/atomic"
)

// Bodies are read as they arrive, never sized by the declared
// Content-Length: a sender that declares 5 MiB and then stalls must not make
// the gateway hold 5 MiB for it. Every request's buffer is charged to one
// budget of in-flight body bytes; when it is spent, requests get 503.

// DefaultInflightBodyBytes bounds the body bytes all requests being read
// may hold at once.
const DefaultInflightBodyBytes = 256 << 20

// firstChunk is the buffer a body starts with, before more has arrived.
const firstChunk = 16 << 10

// errBodyBudget means the in-flight body budget is spent.
var errBodyBudget = errors.New("too many request bodies in flight")

// bodyBudget counts the bytes held by bodies being read.
type bodyBudget struct {
	limit int64
	used  atomic.Int64
}

func (b *bodyBudget) reserve(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *bodyBudget) release(n int64) { b.used.Add(-n) }

// readBody reads a body as it arrives, growing its buffer only as bytes come
// in, and charges the buffer to the budget. The caller releases the returned
// reservation once it is done with the body, also after an error.
func readBody(r io.Reader, declared int64, budget *bodyBudget) (body []byte, reserved int64, err error) {
	size := int64(firstChunk)
	if declared > 0 && declared < size {
		size = declared
	}
	if !budget.reserve(size) {
		return nil, 0, errBodyBudget
	}
	reserved = size
	buf := make([]byte, 0, size)
	for {
		if declared > 0 && int64(len(buf)) == declared {
			// The server's body reader ends at Content-Length.
			return buf, reserved, nil
		}
		if len(buf) == cap(buf) {
			grow := int64(cap(buf))
			if declared > 0 {
				grow = min(grow, declared-int64(len(buf)))
			}
			if !budget.reserve(grow) {
				return nil, reserved, errBodyBudget
			}
			reserved += grow
			grown := make([]byte, len(buf), int64(cap(buf))+grow)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, reserved, nil
		}
		if err != nil {
			return nil, reserved, err
		}
	}
}

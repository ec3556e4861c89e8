package ingest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Bodies are read as they arrive, never sized by the declared
// Content-Length: a sender that declares 5 MiB and then stalls must not make
// the gateway hold 5 MiB for it. Every request's buffer beyond its first
// small chunk is charged to one budget of in-flight body bytes, as the bytes
// arrive; when it is spent, requests get 503.
//
// A request whose body has not fully arrived is unfinished. One client may
// hold only so many unfinished requests, and one connection only so many
// (HTTP/2 multiplexes hundreds of streams on one), and each must send its
// first byte soon: a sender that opens streams and sends nothing is
// answered 503 at once and costs no more than its headers.

// DefaultInflightBodyBytes bounds the body bytes all requests being read
// may hold at once.
const DefaultInflightBodyBytes = 256 << 20

// Defaults for unfinished requests: per client address, per connection
// (not for connections from trusted proxies, which carry many clients), in
// all, and how long a body may take to start.
const (
	DefaultUnfinishedPerClient     = 128
	DefaultUnfinishedPerConnection = 64
	DefaultUnfinishedTotal         = 4096
	DefaultFirstByteTimeout        = 10 * time.Second
)

// firstChunk is the buffer a body starts with, before more has arrived; it
// is not charged to the budget, so a request that has sent nothing holds
// no budget.
const firstChunk = 1 << 10

// errBodyBudget means the in-flight body budget is spent.
var errBodyBudget = errors.New("too many request bodies in flight")

// errFirstByte means a body did not start within the first-byte timeout.
var errFirstByte = errors.New("request body did not start in time")

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

// unfinished counts requests whose body has not fully arrived, by client
// address and by connection.
type unfinished struct {
	mu                              sync.Mutex
	byClient, byConn                map[string]int
	total                           int
	perClient, perConnection, limit int
}

func newUnfinished(perClient, perConnection, total int) *unfinished {
	return &unfinished{byClient: map[string]int{}, byConn: map[string]int{}, perClient: perClient, perConnection: perConnection, limit: total}
}

// enter counts a request in; conn is "" for a connection not capped. It
// reports false, counting nothing, when a cap is reached.
func (u *unfinished) enter(client, conn string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.total >= u.limit || u.byClient[client] >= u.perClient || (conn != "" && u.byConn[conn] >= u.perConnection) {
		return false
	}
	u.total++
	u.byClient[client]++
	if conn != "" {
		u.byConn[conn]++
	}
	return true
}

func (u *unfinished) leave(client, conn string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.total--
	if u.byClient[client]--; u.byClient[client] <= 0 {
		delete(u.byClient, client)
	}
	if conn != "" {
		if u.byConn[conn]--; u.byConn[conn] <= 0 {
			delete(u.byConn, conn)
		}
	}
}

// deadlines moves a request's read deadline: first to the first-byte
// timeout, then, once a byte has arrived, to the whole body's.
type deadlines struct {
	rc        *http.ResponseController
	firstByte time.Duration
	body      time.Time // zero: no deadline for the whole body
}

func (d *deadlines) start() {
	if d.firstByte > 0 {
		at := time.Now().Add(d.firstByte)
		if !d.body.IsZero() && d.body.Before(at) {
			at = d.body
		}
		_ = d.rc.SetReadDeadline(at)
	} else if !d.body.IsZero() {
		_ = d.rc.SetReadDeadline(d.body)
	}
}

func (d *deadlines) started() {
	if d.firstByte > 0 {
		_ = d.rc.SetReadDeadline(d.body) // zero clears it
	}
}

// readBody reads a body as it arrives, growing its buffer only as bytes come
// in, and charges the buffer beyond the first chunk to the budget. started,
// when not nil, is called once the first byte has arrived. The caller
// releases the returned reservation once it is done with the body, also
// after an error.
func readBody(r io.Reader, declared int64, budget *bodyBudget, started func()) (body []byte, reserved int64, err error) {
	size := int64(firstChunk)
	if declared > 0 && declared < size {
		size = declared
	}
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
		if n > 0 && len(buf) == 0 && started != nil {
			started()
			started = nil
		}
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, reserved, nil
		}
		if err != nil {
			if len(buf) == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				err = fmt.Errorf("%w: %w", errFirstByte, err)
			}
			return nil, reserved, err
		}
	}
}

package jetstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// freezer relays TCP connections to a server until freeze, after which the
// connections it holds carry nothing more, in either direction, and stay
// open: what a client sees when the path to its server is cut by a network
// partition. Connections made after freeze are relayed again, as a path
// through another route would be.
type freezer struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	frozen map[net.Conn]bool
}

func newFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{l: l, target: target, frozen: map[net.Conn]bool{}}
	t.Cleanup(func() {
		l.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Small buffers, as between machines under load: a cut
			// connection fills them with a few writes.
			c.(*net.TCPConn).SetReadBuffer(16 << 10)
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			f.mu.Lock()
			f.conns = append(f.conns, c, s)
			f.mu.Unlock()
			go f.relay(c, s)
			go f.relay(s, c)
		}
	}()
	return f
}

func (f *freezer) url() string { return "nats://" + f.l.Addr().String() }

// relay copies from one side to the other until the connection is frozen;
// then it reads no more, so the sender's writes fill its socket buffers and
// block, as they do when no packet gets through.
func (f *freezer) relay(from, to net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		f.mu.Lock()
		frozen := f.frozen[from]
		f.mu.Unlock()
		if frozen {
			return // the connection stays open, unread
		}
		from.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := from.Read(buf)
		if n > 0 {
			if _, err := to.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
	}
}

// freeze cuts every connection relayed so far.
func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		f.frozen[c] = true
	}
}

// TestStaleConnectionIsLeft cuts the path to the store's server without
// closing the connection, as a network partition does, and expects writes
// to be taken again, through a new connection, within a minute. Idle, the
// store notices by its pings; while its writes fill the socket's buffers,
// by the write that cannot finish, which holds up every other request on
// the connection. With NATS's defaults (a ping every 2 minutes, a write
// given a minute) neither happens that soon. Partitions in test/e2e
// (TestJetStreamPartitions) showed a gateway whose server was isolated
// refusing every write for as long as the partition lasted, and some time
// after, while the other gateway, on another server, took them.
func TestStaleConnectionIsLeft(t *testing.T) {
	for _, busy := range []bool{false, true} {
		t.Run(map[bool]string{false: "idle", true: "buffers full"}[busy], func(t *testing.T) {
			t.Parallel() // each waits out timeouts of 10 s or more
			ns := runServer(t)
			f := newFreezer(t, ns.Addr().String())
			s := open(t, ns, func(o *Options) { o.URL = f.url() })
			ctx := context.Background()
			if _, err := s.Ingest(ctx, newEvent("stripe", "evt_before", `{}`)); err != nil {
				t.Fatal(err)
			}
			f.freeze()
			var wg sync.WaitGroup
			defer wg.Wait()
			if busy {
				// Large events without a dedup key, written at once, pile
				// up behind the cut until the buffers are full.
				big := strings.Repeat("x", 512<<10)
				for i := range 64 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						s.Ingest(ctx, newEvent("stripe", "", fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, big)))
					}()
				}
			}
			deadline := time.Now().Add(time.Minute)
			for i := 0; ; i++ {
				_, err := s.Ingest(ctx, newEvent("stripe", fmt.Sprintf("evt_after_%d", i), `{}`))
				if err == nil {
					break
				}
				if !errors.Is(err, store.ErrUnavailable) {
					t.Fatal(err)
				}
				if time.Now().After(deadline) {
					t.Fatalf("no write taken within a minute of the cut: %v", err)
				}
			}
		})
	}
}

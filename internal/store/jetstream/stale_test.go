package jetstream

import (
	"context"
	"errors"
	"fmt"
	"net"
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
// what it reads after that is dropped.
func (f *freezer) relay(from, to net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		f.mu.Lock()
		frozen := f.frozen[from]
		f.mu.Unlock()
		if frozen {
			continue
		}
		if _, err := to.Write(buf[:n]); err != nil {
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
// closing the connection, as a network partition does: the store notices by
// its pings and connects again, so writes are taken again well before
// NATS's default ping (every 2 minutes, 2 unanswered) would notice.
// Partitions in test/e2e (TestJetStreamPartitions) showed a gateway whose
// server was isolated refusing every write for as long as the partition
// lasted, while the other gateway, on another server, took them.
func TestStaleConnectionIsLeft(t *testing.T) {
	ns := runServer(t)
	f := newFreezer(t, ns.Addr().String())
	s := open(t, ns, func(o *Options) { o.URL = f.url() })
	ctx := context.Background()
	if _, err := s.Ingest(ctx, newEvent("stripe", "evt_before", `{}`)); err != nil {
		t.Fatal(err)
	}
	f.freeze()
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
}

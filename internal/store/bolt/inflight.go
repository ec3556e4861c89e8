package bolt

import (
	"errors"
	"sync"

	"github.com/hookgate/hookgate/internal/store"
)

// inflight holds the dedup, digest and replay keys of the events between
// the check that found them new and their apply to bbolt: claimed while
// being logged, then logged (ACKed) but not yet in bbolt. A copy of an
// event that arrives meanwhile finds its key here, waits for the log's
// answer and is told it is a duplicate of that event, so copies sent at
// once still give one event.
type inflight struct {
	mu    sync.Mutex
	byKey map[string]*claim
}

// claim is one event's hold on its keys.
type claim struct {
	id   store.ID
	keys [3][]byte
	// logged is closed once the event's log write ended; err, set before,
	// says it failed or that the event turned out to be a duplicate, and
	// that nothing was stored.
	logged chan struct{}
	err    error
}

// Key kinds, in the order they are looked up.
const (
	keyDedup = iota
	keyDigest
	keyReplay
)

var errNotClaimed = errors.New("not stored")

// claim takes keys (nil ones skipped) for a new event, or returns the
// claim that holds one of them and which kind of key it was. With no key,
// it returns nothing: such an event cannot be a duplicate.
func (f *inflight) claim(keys [3][]byte) (mine, held *claim, kind int) {
	if keys[0] == nil && keys[1] == nil && keys[2] == nil {
		return nil, nil, 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, k := range keys {
		if k == nil {
			continue
		}
		if c, ok := f.byKey[string(k)]; ok {
			return nil, c, i
		}
	}
	if f.byKey == nil {
		f.byKey = map[string]*claim{}
	}
	c := &claim{keys: keys, logged: make(chan struct{})}
	for _, k := range keys {
		if k != nil {
			f.byKey[string(k)] = c
		}
	}
	return c, nil, 0
}

// drop ends a claim whose event was not logged: err says why.
func (f *inflight) drop(c *claim, err error) {
	if c == nil {
		return
	}
	f.release(c)
	c.err = err
	close(c.logged)
}

// release lets go of a claim's keys: its event is in bbolt now, or was
// never stored.
func (f *inflight) release(c *claim) {
	if c == nil {
		return
	}
	f.mu.Lock()
	for _, k := range c.keys {
		if k != nil && f.byKey[string(k)] == c {
			delete(f.byKey, string(k))
		}
	}
	f.mu.Unlock()
}

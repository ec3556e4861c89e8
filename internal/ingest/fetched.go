package ingest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/verify"
)

// StoreFetched stores an event the gateway fetched from the provider's
// event API (reconciliation) as the source would store the same event
// received as a webhook: the source's dedup key, validation, mode and
// routes apply, so a fetched copy of an event the gateway has is a
// duplicate, and a webhook arriving after it is one too. It is marked with
// its origin. It reports whether the event was new.
func (p *Pipeline) StoreFetched(ctx context.Context, sourceName string, body []byte) (bool, error) {
	var src *source
	for _, s := range p.sources {
		if s.Name == sourceName {
			src = s
		}
	}
	if src == nil {
		return false, fmt.Errorf("no source %q", sourceName)
	}
	if !p.awaitStore() {
		return false, fmt.Errorf("the store is not open")
	}
	// The request the provider would have sent, less its signature:
	// the event came over TLS from the provider's API, with the team's
	// credentials.
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, src.Path, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	r.Header.Set("Content-Type", "application/json")
	now := p.now()
	ne, rej := p.event(r, src, body, now, verify.Result{})
	if rej != nil {
		return false, fmt.Errorf("%s: %s", rej.reason, rej.message)
	}
	ne.Event.Origin = store.OriginReconcile
	ne.Event.Host = ""
	res, err := p.storeEvent(ctx, ne)
	if err != nil {
		return false, err
	}
	return !res.Duplicate, nil
}

// redeliveryWindow is how long after reconciliation asked for a
// redelivery its webhook is marked as one.
const redeliveryWindow = 15 * time.Minute

// maxRedeliveries bounds the redeliveries awaited at once.
const maxRedeliveries = 10000

// redeliveries are the dedup keys reconciliation asked providers to send
// again, by source, each until when its webhook is marked a redelivery.
type redeliveries struct {
	waiting atomic.Int32 // lets the request path skip the lock when none are
	mu      sync.Mutex
	until   map[string]time.Time
}

func redeliveryKey(source, key string) string { return source + "\x00" + key }

// ExpectRedelivery notes that reconciliation asked the provider to send
// the event with this dedup key again: when it arrives, it is marked
// OriginRedelivery.
func (p *Pipeline) ExpectRedelivery(source, key string) {
	r := &p.redeliveries
	now := p.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.until == nil {
		r.until = map[string]time.Time{}
	}
	if len(r.until) >= maxRedeliveries {
		for k, t := range r.until {
			if now.After(t) {
				delete(r.until, k)
			}
		}
		if len(r.until) >= maxRedeliveries {
			return
		}
	}
	r.until[redeliveryKey(source, key)] = now.Add(redeliveryWindow)
	r.waiting.Store(int32(len(r.until)))
}

// asked reports whether the event with this key is a redelivery asked
// for, and forgets it.
func (r *redeliveries) asked(source, key string, now time.Time) bool {
	if r.waiting.Load() == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := redeliveryKey(source, key)
	until, ok := r.until[k]
	if ok {
		delete(r.until, k)
		r.waiting.Store(int32(len(r.until)))
	}
	return ok && !now.After(until)
}

package ingest

import (
	"context"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/hookgate/hookgate/internal/store"
)

// Each source's log takes rejectionRate records a second, in bursts of
// rejectionBurst: a flood of forged requests costs the request path a lock
// and a counter, and the store one write per flush.
const (
	rejectionRate  = 10
	rejectionBurst = 20
	// rejectionFlush is how often logs with new records are written.
	rejectionFlush = 2 * time.Second
)

// Rejections keeps each source's most recent refused requests, so that
// "why is Stripe getting 401?" has an answer. Records are added in memory
// on the request path and written to the store in the background; the
// value outlives reloads, with the store it writes to.
type Rejections struct {
	keeper store.RejectionKeeper // nil: memory only
	log    *zap.Logger

	mu      sync.Mutex
	sources map[string]*rejectionRing
	dirty   map[string]bool

	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

type rejectionRing struct {
	store.RejectionLog
	limiter *rate.Limiter
}

// NewRejections starts a set of logs that carries on what keeper kept (nil
// keeps them in memory) and writes new records to it every few seconds
// until Close.
func NewRejections(keeper store.RejectionKeeper, log *zap.Logger) *Rejections {
	if log == nil {
		log = zap.NewNop()
	}
	r := &Rejections{keeper: keeper, log: log, sources: map[string]*rejectionRing{}, dirty: map[string]bool{},
		stop: make(chan struct{}), stopped: make(chan struct{})}
	if keeper != nil {
		kept, err := keeper.Rejections(true)
		if err != nil {
			log.Warn("reading the kept rejections", zap.Error(err))
		}
		for source, l := range kept {
			r.sources[source] = &rejectionRing{RejectionLog: l, limiter: newRejectionLimiter()}
		}
	}
	go r.run()
	return r
}

func newRejectionLimiter() *rate.Limiter { return rate.NewLimiter(rejectionRate, rejectionBurst) }

// add keeps the record build makes in source's log of at most keep
// records, unless the log's rate is spent: then the refusal is only
// counted as dropped, and build (which copies and masks the headers) is
// not called, so a flood costs a lock and a token. It never blocks on the
// store.
func (r *Rejections) add(source string, at time.Time, keep int, build func() store.Rejection) {
	if r == nil || keep <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ring := r.sources[source]
	if ring == nil {
		ring = &rejectionRing{limiter: newRejectionLimiter()}
		r.sources[source] = ring
	}
	r.dirty[source] = true
	if !ring.limiter.AllowN(at, 1) {
		ring.Dropped++
		return
	}
	ring.Records = append(ring.Records, build())
	if over := len(ring.Records) - keep; over > 0 {
		ring.Records = slices.Delete(ring.Records, 0, over)
	}
}

// Recent returns each source's log (one source's when source is set), the
// store's merged with what is not written yet, newest record first, at most
// limit records per source.
func (r *Rejections) Recent(source string, limit int) (map[string]store.RejectionLog, error) {
	if err := r.Flush(context.Background()); err != nil && r.keeper != nil {
		r.log.Debug("writing rejections before a read", zap.Error(err))
	}
	var logs map[string]store.RejectionLog
	if r.keeper != nil {
		var err error
		if logs, err = r.keeper.Rejections(false); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	if r.keeper == nil || len(r.dirty) > 0 {
		// Memory only, or a write that failed (a full disk): this instance's
		// own records are the freshest it has.
		if logs == nil {
			logs = map[string]store.RejectionLog{}
		}
		for name, ring := range r.sources {
			if r.keeper == nil || r.dirty[name] {
				logs[name] = store.RejectionLog{Records: slices.Clone(ring.Records), Dropped: ring.Dropped}
			}
		}
	}
	r.mu.Unlock()
	out := map[string]store.RejectionLog{}
	for name, l := range logs {
		if source != "" && name != source {
			continue
		}
		slices.Reverse(l.Records)
		if limit > 0 && len(l.Records) > limit {
			l.Records = l.Records[:limit]
		}
		out[name] = l
	}
	return out, nil
}

// Flush writes the logs with new records now.
func (r *Rejections) Flush(ctx context.Context) error {
	if r.keeper == nil {
		return nil
	}
	r.mu.Lock()
	if len(r.dirty) == 0 {
		r.mu.Unlock()
		return nil
	}
	logs := make(map[string]store.RejectionLog, len(r.dirty))
	for name := range r.dirty {
		ring := r.sources[name]
		logs[name] = store.RejectionLog{Records: slices.Clone(ring.Records), Dropped: ring.Dropped}
	}
	written := maps.Clone(r.dirty)
	clear(r.dirty)
	r.mu.Unlock()
	if err := r.keeper.KeepRejections(ctx, logs); err != nil {
		r.mu.Lock()
		maps.Copy(r.dirty, written) // again at the next flush
		r.mu.Unlock()
		return err
	}
	return nil
}

func (r *Rejections) run() {
	defer close(r.stopped)
	t := time.NewTicker(rejectionFlush)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := r.Flush(ctx); err != nil {
				r.log.Debug("writing rejections", zap.Error(err)) // the store's own errors are logged and alerted
			}
			cancel()
		}
	}
}

// Close stops the background writes and writes what is left.
func (r *Rejections) Close() error {
	r.once.Do(func() { close(r.stop) })
	<-r.stopped
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return r.Flush(ctx)
}

// shownRejectionHeaders are the headers whose values a rejection keeps:
// they say what the request was and carry nothing secret. Every other
// value (signatures, tokens, cookies, anything a provider names itself) is
// kept as its length only.
var shownRejectionHeaders = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Content-Encoding": true, "User-Agent": true,
	"Accept": true, "Accept-Encoding": true, "Transfer-Encoding": true,
}

// eventTypeHeader matches headers that name an event's type or topic
// (X-GitHub-Event, X-Shopify-Topic, X-Event-Type).
var eventTypeHeader = regexp.MustCompile(`(?i)^x-[a-z0-9-]*(event|topic|event-type|event-name)$`)

// rejectionHeaders is h with the values masked as shownRejectionHeaders says.
func rejectionHeaders(h http.Header, secret []string) http.Header {
	out := make(http.Header, len(h))
	for name, values := range h {
		show := shownRejectionHeaders[name] || eventTypeHeader.MatchString(name)
		if slices.ContainsFunc(secret, func(s string) bool { return http.CanonicalHeaderKey(s) == name }) {
			show = false
		}
		masked := make([]string, len(values))
		for i, v := range values {
			if show && len(v) <= 256 {
				masked[i] = v
			} else {
				masked[i] = "[" + strconv.Itoa(len(v)) + " bytes]"
			}
		}
		out[name] = masked
	}
	return out
}

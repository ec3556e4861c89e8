package reconcile

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hookgate/hookgate/internal/store"
)

// Schedule is one source's reconciliation: its client, where its cursor
// lives, and when it runs.
type Schedule struct {
	// Source names the source; Scope is its cursor's key (the source's
	// name and address, as for learned secrets).
	Source, Scope string
	Client        Client
	// Requests counts the requests the client made so far.
	Requests func() int
	// Every is how often a run starts, besides one at start; Lookback the
	// first run's horizon; Window how far back the provider keeps events.
	Every, Lookback, Window time.Duration
	// SoonDelay is how long after Loop.Soon a run starts: a 503 to the
	// source is rarely alone, and the run waits for the outage to pass.
	// Default DefaultSoonDelay.
	SoonDelay time.Duration
}

// DefaultSoonDelay is how long a run asked for by Loop.Soon waits.
const DefaultSoonDelay = 30 * time.Second

// Loop runs a schedule: once when it starts, then every Every, and when
// asked; one run at a time. Its cursor lives in the store, so a restart
// resumes where the last run got to, and covers the time it was down.
type Loop struct {
	Schedule
	sink    Sink
	cursors store.Cursors
	done    func(Report, error)
	soon    chan struct{}
	mu      sync.Mutex // one run at a time
	last    Report
	lastErr error
}

// NewLoop makes a loop storing through sink and keeping its cursor in
// cursors; done, when set, is told of every run.
func NewLoop(s Schedule, sink Sink, cursors store.Cursors, done func(Report, error)) *Loop {
	if s.SoonDelay <= 0 {
		s.SoonDelay = DefaultSoonDelay
	}
	return &Loop{Schedule: s, sink: sink, cursors: cursors, done: done, soon: make(chan struct{}, 1)}
}

// Soon asks for a run SoonDelay from now, as after the gateway
// answered the source 503; calls before that run starts are one. It never
// blocks, so the request path may call it.
func (l *Loop) Soon() {
	select {
	case l.soon <- struct{}{}:
	default:
	}
}

// Start runs the loop until ctx ends.
func (l *Loop) Start(ctx context.Context) {
	go func() {
		t := time.NewTicker(l.Every)
		defer t.Stop()
		for {
			_, _ = l.RunNow(ctx, 0, false)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-l.soon:
				if sleep(ctx, l.SoonDelay) != nil {
					return
				}
				// The nudges that came while waiting are answered by this run.
				select {
				case <-l.soon:
				default:
				}
			}
		}
	}()
}

// RunNow runs once: from the cursor, or from since ago when since is set
// (never further back than the provider keeps events); a dry run lists
// and stores nothing and leaves the cursor.
func (l *Loop) RunNow(ctx context.Context, since time.Duration, dryRun bool) (Report, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	cur, err := l.cursors.Cursor(l.Scope)
	if err != nil {
		return Report{}, err
	}
	from := cur.Through
	switch {
	case since > 0:
		from = now.Add(-since)
	case from.IsZero():
		from = now.Add(-l.Lookback)
	}
	if oldest := now.Add(-l.Window); l.Window > 0 && from.Before(oldest) {
		from = oldest
	}
	before := 0
	if l.Requests != nil {
		before = l.Requests()
	}
	rep, runErr := Run(ctx, l.Client, nil, l.sink, from, dryRun)
	if l.Requests != nil {
		rep.Requests = l.Requests() - before
	}
	if !dryRun {
		next := store.Cursor{Through: cur.Through, LastRun: time.Now().UTC(), Outcome: outcome(rep, runErr)}
		if runErr == nil && rep.Through.After(cur.Through) {
			next.Through = rep.Through.UTC()
		}
		if err := l.cursors.SetCursor(context.WithoutCancel(ctx), l.Scope, next); err != nil && runErr == nil {
			runErr = err
		}
	}
	l.last, l.lastErr = rep, runErr
	if l.done != nil && !errors.Is(runErr, context.Canceled) {
		l.done(rep, runErr)
	}
	return rep, runErr
}

// Last is the last run's report and error.
func (l *Loop) Last() (Report, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, l.lastErr
}

func outcome(r Report, err error) string {
	switch {
	case err != nil:
		return "failed: " + err.Error()
	case r.Failed > 0:
		return "incomplete"
	}
	return "ok"
}

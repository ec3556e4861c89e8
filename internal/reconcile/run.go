package reconcile

import (
	"context"
	"time"
)

// Sink stores what a run fetched: the pipeline's own dedup, routing and
// durable write, so a fetched copy of an event the gateway has is a
// duplicate, and a webhook arriving after its fetched copy is one too.
type Sink interface {
	// Store stores a fetched event body and reports whether it was new.
	Store(ctx context.Context, f Found) (stored bool, err error)
	// Seen reports whether the gateway has the event with this dedup key.
	Seen(key string) (bool, error)
	// Redelivering is told of a redelivery about to be asked, so the
	// webhook that follows is marked as one.
	Redelivering(key string)
}

// Report is what a run did.
type Report struct {
	// Since is the horizon listed from; Through what the cursor moves to.
	Since, Through time.Time
	// Listed counts the events the provider listed; Stored the fetched ones
	// that were new; Duplicates the ones the gateway had; Redeliveries the
	// redeliveries asked for; Failed the events whose store or redelivery
	// failed (the cursor then does not move); Pending the ones the
	// provider is still retrying (the cursor stays before them).
	Listed, Stored, Duplicates, Redeliveries, Failed, Pending int
	// Requests counts the requests made to the provider.
	Requests int
	// Took is how long the run took.
	Took time.Duration
	// DryRun marks a run that stored and asked for nothing.
	DryRun bool
}

// clockSkew is how far before a run's start its cursor moves: events the
// provider creates as a run lists may show up in its API a little late.
const clockSkew = 5 * time.Minute

// Run lists the events created since and stores or has redelivered what
// the gateway lacks: a fetched event is stored through sink (a duplicate
// is counted, not stored twice); a delivery the provider saw fail, or
// whose event the gateway does not have, is redelivered, and arrives
// signed through the webhook path (where the gateway has it already, that
// delivery is a duplicate). The report's
// Through is where the cursor may move: the run's start less clockSkew,
// or since when anything failed, so a failed event is listed again.
func Run(ctx context.Context, c Client, requests func() int, sink Sink, since time.Time, dryRun bool) (Report, error) {
	start := time.Now()
	rep := Report{Since: since, DryRun: dryRun}
	var oldestPending time.Time
	err := c.List(ctx, since, func(f Found) error {
		rep.Listed++
		switch {
		case f.Pending:
			rep.Pending++
			if oldestPending.IsZero() || f.At.Before(oldestPending) {
				oldestPending = f.At
			}
		case f.Body != nil:
			if dryRun {
				return nil
			}
			stored, err := sink.Store(ctx, f)
			switch {
			case err != nil:
				rep.Failed++
			case stored:
				rep.Stored++
			default:
				rep.Duplicates++
			}
		case f.Redeliver != nil:
			if f.Delivered {
				// The provider saw it succeed; unless something else
				// answered for the gateway, the gateway has it.
				seen, err := sink.Seen(f.Key)
				if err != nil {
					rep.Failed++
					return nil
				}
				if seen {
					rep.Duplicates++
					return nil
				}
			}
			if dryRun {
				rep.Redeliveries++
				return nil
			}
			sink.Redelivering(f.Key)
			if err := f.Redeliver(ctx); err != nil {
				rep.Failed++
				return nil
			}
			rep.Redeliveries++
		default:
			rep.Duplicates++
		}
		return ctx.Err()
	})
	rep.Took = time.Since(start)
	if requests != nil {
		rep.Requests = requests()
	}
	rep.Through = since
	if err == nil && rep.Failed == 0 && !dryRun {
		through := start.Add(-clockSkew)
		if !oldestPending.IsZero() && oldestPending.Before(through) {
			through = oldestPending
		}
		if through.After(since) {
			rep.Through = through
		}
	}
	return rep, err
}

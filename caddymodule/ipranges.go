package caddymodule

import (
	"context"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/hookgate/hookgate/internal/ipranges"
)

// rangeRefresher is the one loop per process that keeps the named IP ranges
// of allow_ips current. It belongs to the live hookgate app: a reload hands
// it to the new app (new apps start before old ones stop) and keeps its
// schedule when the interval is unchanged, so reloads never refetch.
type rangeRefresher struct {
	mu       sync.Mutex
	owner    *App
	interval time.Duration
	cancel   context.CancelFunc
	done     chan struct{}
}

var refresher rangeRefresher

// start makes owner the live app and runs the loop at interval; zero stops
// it (no source names a range, or ip_ranges.refresh is off).
func (r *rangeRefresher) start(owner *App, interval time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.owner = owner
	if r.cancel != nil && r.interval == interval {
		return
	}
	r.stopLocked()
	if interval <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done, r.interval = cancel, make(chan struct{}), interval
	go refreshRanges(ctx, r.done, interval, caddy.Log().Named("hookgate.ip_ranges"))
}

// stop ends the loop if owner is still the live app.
func (r *rangeRefresher) stop(owner *App) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owner != owner {
		return
	}
	r.owner = nil
	r.stopLocked()
}

func (r *rangeRefresher) stopLocked() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
	r.cancel, r.done, r.interval = nil, nil, 0
}

// refreshRanges fetches the providers' lists at once, then every interval.
// A failure is logged and the list in use kept; it never stops the gateway.
func refreshRanges(ctx context.Context, done chan<- struct{}, interval time.Duration, log *zap.Logger) {
	defer close(done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		for _, res := range ipranges.Default().Refresh(ctx) {
			switch {
			case ctx.Err() != nil:
				return
			case res.Err != nil:
				log.Warn("could not refresh a named IP range; keeping its current list",
					zap.String("range", res.Name), zap.Int("prefixes", res.Prefixes), zap.Error(res.Err))
			default:
				log.Info("named IP range refreshed", zap.String("range", res.Name), zap.Int("prefixes", res.Prefixes))
			}
		}
		timer.Reset(interval)
	}
}

package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookgate/hookgate/internal/store"
)

// Pauses live in the bucket S_pauses, one key per upstream, without a TTL:
// a pause holds until someone resumes it. Every instance watches the
// bucket, so a pause set on one holds on all, and a resume anywhere wakes
// the upstream's lane everywhere.

// watchPauses loads the pauses and keeps them current. It returns once the
// stored pauses are in memory, so no claim runs before a pause is known.
func (s *Store) watchPauses() error {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := s.pauseKV.WatchAll(ctx)
	if err != nil {
		cancel()
		return err
	}
	loaded := make(chan struct{})
	s.stopped.Add(1)
	go func() {
		defer s.stopped.Done()
		defer cancel()
		defer func() { _ = w.Stop() }()
		initial := true
		for {
			select {
			case <-s.stop:
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil { // the stored values are all in
					if initial {
						initial = false
						close(loaded)
					}
					continue
				}
				s.pauseChanged(e)
			}
		}
	}()
	select {
	case <-loaded:
		return nil
	case <-s.stop:
		return errors.New("closed")
	case <-time.After(s.opts.ConnectTimeout):
		return fmt.Errorf("reading bucket %s_pauses: timed out", s.opts.Stream)
	}
}

// pauseChanged applies a watched entry and wakes the lane of a resumed upstream.
func (s *Store) pauseChanged(e jetstream.KeyValueEntry) {
	var p store.Pause
	if e.Operation() == jetstream.KeyValuePut {
		if json.Unmarshal(e.Value(), &p) != nil {
			return
		}
	}
	s.applyPause(e.Key(), p)
}

// SetPaused implements store.Pauses.
func (s *Store) SetPaused(ctx context.Context, upstream string, paused bool) (store.Pause, error) {
	if prior := s.PauseOf(upstream); prior.Paused == paused {
		return prior, nil
	}
	p := store.Pause{Paused: paused, Since: s.now().UTC()}
	v, err := json.Marshal(p)
	if err != nil {
		return store.Pause{}, err
	}
	if _, err := s.pauseKV.Put(ctx, upstream, v); err != nil {
		return store.Pause{}, unavailable(err)
	}
	// The watch brings the same record; taking it now means the caller's
	// next look (and this instance's engine) sees it at once.
	s.applyPause(upstream, p)
	return p, nil
}

// applyPause keeps a record in memory and wakes the lane of a resumed
// upstream on this instance.
func (s *Store) applyPause(upstream string, p store.Pause) {
	was := s.pauses.Set(upstream, p)
	if !was.Paused || p.Paused {
		return
	}
	s.mu.Lock()
	notify := s.notify
	s.mu.Unlock()
	if notify != nil {
		notify(upstream)
	}
}

// PauseOf implements store.Pauses.
func (s *Store) PauseOf(upstream string) store.Pause {
	return s.pauses.Of(upstream)
}

// Pauses implements store.Pauses.
func (s *Store) Pauses() map[string]store.Pause {
	return s.pauses.All()
}

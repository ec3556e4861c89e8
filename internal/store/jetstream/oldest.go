package jetstream

import "time"

// OldestPendingByUpstream returns, by upstream, the receive time of the
// oldest event with a pending delivery to it, for alerts: the first work
// message of each upstream that has any.
func (s *Store) OldestPendingByUpstream() (map[string]time.Time, error) {
	names, err := s.QueuedUpstreams()
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	out := make(map[string]time.Time, len(names))
	for _, name := range names {
		if t, ok := s.oldestQueued(ctx, s.subject+".work."+name+".>"); ok {
			out[name] = t
		}
	}
	return out, nil
}

package ingest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

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

package ipranges

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Range is a provider's published list of webhook source addresses.
type Range struct {
	// Name is what allow_ips entries call it.
	Name string
	// Source is the page that publishes the list, cited in docs/configuration.md.
	Source string
	// Taken is the day the bundled list was copied from Source (YYYY-MM-DD).
	Taken string
	// Bundled is the list as published on Taken; it is the fallback for as
	// long as no refresh has succeeded.
	Bundled []string
	// Feeds are the machine-readable lists a refresh reads; the range is
	// their union. A range without feeds keeps its bundled list.
	Feeds []Feed
}

// Feed is one machine-readable list and how its format is read.
type Feed struct {
	// URL is where the provider publishes the list.
	URL string
	// Parse turns the body into the entries (addresses or CIDRs) it lists.
	Parse func(body []byte) ([]string, error)
}

// Registry holds the named ranges and refreshes them.
type Registry struct {
	lists  map[string]*List
	client *http.Client
	// refreshMu makes refreshes run one at a time.
	refreshMu sync.Mutex
}

// TestBaseEnv names the environment variable that, for tests only, sends
// every feed request to another server: the feed URL's scheme and host are
// replaced by its value, the path kept (https://api.github.com/meta becomes
// $HOOKGATE_TEST_IPRANGES_BASE/meta). Never set it in production.
const TestBaseEnv = "HOOKGATE_TEST_IPRANGES_BASE"

// maxFeedBytes bounds a feed's body: the largest published list is a few KiB.
const maxFeedBytes = 1 << 20

// NewRegistry builds a registry of ranges, each starting from its bundled
// list. A bundled entry that does not parse is a programming error.
func NewRegistry(ranges []Range, client *http.Client) *Registry {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	r := &Registry{lists: map[string]*List{}, client: client}
	for _, rg := range ranges {
		prefixes, err := parseAll(rg.Bundled)
		if err != nil {
			panic(fmt.Sprintf("ipranges: bundled %s: %v", rg.Name, err))
		}
		l := &List{Range: rg}
		l.current.Store(&prefixes)
		r.lists[rg.Name] = l
	}
	return r
}

var (
	defaultOnce     sync.Once
	defaultRegistry *Registry
)

// Default is the process's registry of the providers' ranges, shared by
// every configuration so that one refresh serves them all.
func Default() *Registry {
	defaultOnce.Do(func() { defaultRegistry = NewRegistry(Catalog(), nil) })
	return defaultRegistry
}

// Names returns the registry's range names, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.lists))
	for n := range r.lists {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Lookup returns a named range.
func (r *Registry) Lookup(name string) (*List, bool) {
	l, ok := r.lists[strings.ToLower(name)]
	return l, ok
}

// Refreshed is what one range's refresh came to: the number of prefixes now
// in use, or the error that kept the previous list.
type Refreshed struct {
	// Name is the range's.
	Name string
	// Prefixes counts the prefixes in use after the refresh.
	Prefixes int
	// Err is why the list in use was kept; nil when it was replaced.
	Err error
}

// Refresh fetches every range that has feeds and replaces its list with what
// the feeds now publish. A range whose feeds fail, or parse to nothing,
// keeps the list it had: a refresh never empties a list.
func (r *Registry) Refresh(ctx context.Context) []Refreshed {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	var out []Refreshed
	for _, name := range r.Names() {
		l := r.lists[name]
		if len(l.Feeds) == 0 {
			continue
		}
		prefixes, err := r.fetch(ctx, l.Range)
		if err != nil {
			out = append(out, Refreshed{Name: name, Prefixes: len(l.Prefixes()), Err: err})
			continue
		}
		l.current.Store(&prefixes)
		out = append(out, Refreshed{Name: name, Prefixes: len(prefixes)})
	}
	return out
}

// fetch reads and parses every feed of a range; any failure fails it whole,
// since half a list would refuse a provider's other addresses.
func (r *Registry) fetch(ctx context.Context, rg Range) ([]netip.Prefix, error) {
	var all []netip.Prefix
	for _, f := range rg.Feeds {
		u := feedURL(f.URL)
		body, err := r.get(ctx, u)
		if err != nil {
			return nil, err
		}
		entries, err := f.Parse(body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		prefixes, err := parseAll(entries)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		if len(prefixes) == 0 {
			return nil, fmt.Errorf("%s: lists no addresses", u)
		}
		for _, p := range prefixes {
			if p.Bits() < minFeedBits(p) {
				return nil, fmt.Errorf("%s: %s is broader than any provider's webhook range", u, p)
			}
		}
		all = append(all, prefixes...)
	}
	return all, nil
}

func (r *Registry) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "Hookgate (webhook source ranges)")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFeedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	if len(body) > maxFeedBytes {
		return nil, fmt.Errorf("%s: more than %d bytes", u, maxFeedBytes)
	}
	return body, nil
}

// minFeedBits is the broadest prefix a fetched list may hold: a list that
// suddenly allows a /0 is broken or tampered with, not a provider's.
func minFeedBits(p netip.Prefix) int {
	if p.Addr().Is4() {
		return 8
	}
	return 16
}

// feedURL applies the test-only override of TestBaseEnv.
func feedURL(raw string) string {
	base := os.Getenv(TestBaseEnv)
	if base == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.TrimSuffix(base, "/") + u.RequestURI()
}

func parseAll(entries []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(entries))
	var errs []error
	for _, e := range entries {
		p, err := ParseEntry(strings.TrimSpace(e))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

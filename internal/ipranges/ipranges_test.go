package ipranges

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestSetContains(t *testing.T) {
	r := NewRegistry(Catalog(), nil)
	set, err := r.Compile([]string{"192.0.2.0/24", "198.51.100.7", "2001:db8::/32", "2001:db8:ffff::1", "10.1.2.3/8", "::ffff:203.0.113.0/120", "GitHub"})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{
		"192.0.2.1":            true,
		"192.0.3.1":            false,
		"198.51.100.7":         true,
		"198.51.100.8":         false,
		"::ffff:192.0.2.200":   true, // IPv4-mapped counts as IPv4
		"2001:db8:1::1":        true,
		"2001:db9::1":          false,
		"10.200.0.1":           true, // host bits of 10.1.2.3/8 are dropped
		"11.0.0.1":             false,
		"203.0.113.9":          true, // a mapped CIDR is its IPv4 CIDR
		"fe80::1%eth0":         false,
		"2001:db8::1%eth0":     true,
		"140.82.115.4":         true, // github's hooks
		"2606:50c0:8000::1":    true,
		"127.0.0.1":            false,
		"::1":                  false,
		"9.234.98.170":         true,
		"9.234.98.200":         false,
		"2a0a:a440:ffff::ffff": true,
	} {
		if got := set.Contains(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Contains(%s) = %v, want %v", addr, got, want)
		}
	}
	if !set.Named() || !strings.Contains(set.String(), "github") {
		t.Errorf("set %s: named ranges missing", set)
	}
}

func TestCompileErrors(t *testing.T) {
	r := NewRegistry(Catalog(), nil)
	for entry, want := range map[string]string{
		"githb":          `did you mean github?`,
		"stripe-live":    `did you mean stripe?`,
		"nobody":         `named ranges: apple-app-store, customer-io, github, knock, paddle, paddle-sandbox, pagerduty, paystack, persona, razorpay, revolut, sentry, square, square-sandbox, stripe, telegram, workos`,
		"10.0.0.0/33":    `is not a CIDR`,
		"300.1.1.1":      `is not an address or a CIDR`,
		"fe80::1%eth0":   `is not an address or a CIDR`,
		"2001:db8::/129": `is not a CIDR`,
		"1.2.3":          `is not an address or a CIDR`,
	} {
		err := r.Check(entry)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%q) = %v, want it to say %q", entry, err, want)
		}
	}
	for _, ok := range []string{"github", "PADDLE-sandbox", "1.2.3.4", "::1", "0.0.0.0/0", "::/0"} {
		if err := r.Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
}

// TestCatalogBundled: every bundled list parses, is not empty, and cites
// where and when it was taken.
func TestCatalogBundled(t *testing.T) {
	seen := map[string]bool{}
	for _, rg := range Catalog() {
		if seen[rg.Name] || rg.Name != strings.ToLower(rg.Name) || IsAddress(rg.Name) {
			t.Errorf("range name %q: repeated, not lower case, or taken for an address", rg.Name)
		}
		seen[rg.Name] = true
		if _, err := parseAll(rg.Bundled); err != nil || len(rg.Bundled) == 0 {
			t.Errorf("%s: bundled list: %v (%d entries)", rg.Name, err, len(rg.Bundled))
		}
		if !strings.HasPrefix(rg.Source, "https://") || len(rg.Taken) != len("2006-01-02") {
			t.Errorf("%s: source %q taken %q", rg.Name, rg.Source, rg.Taken)
		}
		for _, f := range rg.Feeds {
			if !strings.HasPrefix(f.URL, "https://") || f.Parse == nil {
				t.Errorf("%s: feed %+v", rg.Name, f.URL)
			}
		}
	}
}

// feedServer serves each path's body with its status; a missing path is 404.
func feedServer(t *testing.T, bodies map[string]string, status *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if status != nil && status.Load() != 0 {
			w.WriteHeader(int(status.Load()))
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRefreshReadsEachProvidersFormat(t *testing.T) {
	srv := feedServer(t, map[string]string{
		"/meta":                        `{"verifiable_password_authentication":false,"hooks":["127.0.0.0/8","2001:db8::/32"],"web":["10.0.0.0/8"]}`,
		"/files/ips/ips_webhooks.json": `{"WEBHOOKS":["127.0.0.2","127.0.0.3"]}`,
		"/ip-safelists/webhooks-us-service-region-json": `["127.0.1.1"]`,
		"/ip-safelists/webhooks-eu-service-region-json": `["127.0.2.1","127.0.2.2"]`,
	}, nil)
	t.Setenv(TestBaseEnv, srv.URL)
	r := NewRegistry(Catalog(), srv.Client())
	before, _ := r.Lookup("paddle")
	paddle := before.Prefixes()
	got := map[string]Refreshed{}
	for _, res := range r.Refresh(context.Background()) {
		got[res.Name] = res
	}
	for name, n := range map[string]int{"github": 2, "stripe": 2, "pagerduty": 3} {
		if got[name].Err != nil || got[name].Prefixes != n {
			t.Errorf("%s: %+v, want %d prefixes", name, got[name], n)
		}
	}
	if _, refreshed := got["paddle"]; refreshed {
		t.Errorf("paddle has no feed but was refreshed")
	}
	set, _ := r.Compile([]string{"github", "stripe", "pagerduty"})
	for addr, want := range map[string]bool{
		"127.1.2.3": true, "10.0.0.1": false, "140.82.115.4": false, // the web list is not hooks; the bundled list is replaced
		"127.0.0.3": true, "127.0.1.1": true, "127.0.2.2": true, "54.187.174.169": false,
	} {
		if got := set.Contains(netip.MustParseAddr(addr)); got != want {
			t.Errorf("after refresh, Contains(%s) = %v, want %v", addr, got, want)
		}
	}
	if after, _ := r.Lookup("paddle"); len(after.Prefixes()) != len(paddle) {
		t.Errorf("paddle's list changed")
	}
}

// TestRefreshFailureKeepsTheList: a provider that is down, answers an
// error, changes its format or publishes nothing leaves the list as it was,
// bundled or last refreshed.
func TestRefreshFailureKeepsTheList(t *testing.T) {
	bodies := map[string]string{"/meta": `{"hooks":["127.0.0.0/8"]}`}
	var status atomic.Int32
	srv := feedServer(t, bodies, &status)
	t.Setenv(TestBaseEnv, srv.URL)
	r := NewRegistry(Catalog(), srv.Client())
	set, _ := r.Compile([]string{"github"})
	loopback, github := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("140.82.115.4")

	// Before any refresh: the bundled list.
	if set.Contains(loopback) || !set.Contains(github) {
		t.Fatal("bundled list not in use")
	}
	// Stripe and PagerDuty 404 here: their refresh fails, github's works.
	for _, res := range r.Refresh(context.Background()) {
		switch {
		case res.Name == "github" && res.Err != nil:
			t.Fatalf("github: %v", res.Err)
		case res.Name != "github" && res.Err == nil:
			t.Errorf("%s refreshed from a 404", res.Name)
		}
	}
	if stripe, _ := r.Lookup("stripe"); len(stripe.Prefixes()) != 15 {
		t.Errorf("a failed refresh changed stripe's bundled list: %v", stripe.Prefixes())
	}
	if !set.Contains(loopback) || set.Contains(github) {
		t.Fatal("refreshed list not in use")
	}
	for _, c := range []struct {
		name   string
		broken func()
	}{
		{"server error", func() { status.Store(http.StatusInternalServerError) }},
		{"not JSON", func() { status.Store(0); bodies["/meta"] = `<html>maintenance</html>` }},
		{"no hooks field", func() { bodies["/meta"] = `{"web":["10.0.0.0/8"]}` }},
		{"empty hooks", func() { bodies["/meta"] = `{"hooks":[]}` }},
		{"a bad entry", func() { bodies["/meta"] = `{"hooks":["10.0.0.0/8","not-an-ip"]}` }},
		{"everything (IPv4)", func() { bodies["/meta"] = `{"hooks":["10.0.0.0/8","0.0.0.0/0"]}` }},
		{"everything (IPv6)", func() { bodies["/meta"] = `{"hooks":["10.0.0.0/8","::/15"]}` }},
		{"too large", func() { bodies["/meta"] = `{"hooks":["10.0.0.0/8"],"pad":"` + strings.Repeat("x", maxFeedBytes) + `"}` }},
		{"down", func() { srv.Close() }},
	} {
		name, broken := c.name, c.broken
		broken()
		res := refreshed(r, "github")
		if res.Err == nil || res.Prefixes != 1 {
			t.Errorf("%s: %+v, want an error and the last list kept", name, res)
		}
		if !set.Contains(loopback) || set.Contains(netip.MustParseAddr("10.0.0.1")) {
			t.Errorf("%s: the list changed", name)
		}
	}
}

func refreshed(r *Registry, name string) Refreshed {
	for _, res := range r.Refresh(context.Background()) {
		if res.Name == name {
			return res
		}
	}
	return Refreshed{}
}

func TestFeedURLOverride(t *testing.T) {
	if got := feedURL("https://api.github.com/meta"); got != "https://api.github.com/meta" {
		t.Errorf("without the variable: %s", got)
	}
	t.Setenv(TestBaseEnv, "http://127.0.0.1:9/")
	if got := feedURL("https://stripe.com/files/ips/ips_webhooks.json?x=1"); got != "http://127.0.0.1:9/files/ips/ips_webhooks.json?x=1" {
		t.Errorf("with the variable: %s", got)
	}
}

// BenchmarkContains checks an address against every bundled range and a
// CIDR, the worst case: the address is in none of them, so every prefix is
// read. Compare with the request path's own cost (BenchmarkIngest in
// internal/ingest) to see what an allowlist adds to a request.
func BenchmarkContains(b *testing.B) {
	reg := Default()
	set, err := reg.Compile(append(reg.Names(), "10.0.0.0/8"))
	if err != nil {
		b.Fatal(err)
	}
	miss, hit := netip.MustParseAddr("203.0.113.250"), netip.MustParseAddr("10.1.2.3")
	b.Run("refused", func(b *testing.B) {
		for b.Loop() {
			if set.Contains(miss) {
				b.Fatal("contains an address outside every range")
			}
		}
	})
	b.Run("allowed", func(b *testing.B) {
		for b.Loop() {
			if !set.Contains(hit) {
				b.Fatal("misses an address in the CIDR")
			}
		}
	})
}

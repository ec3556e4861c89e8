package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hookgate/hookgate/internal/reconcile/providertest"
	"github.com/hookgate/hookgate/internal/verify"
)

// redeliverCase is a provider that can be asked to deliver again: its
// fake API, the source's settings, and how it sends event i (delivered,
// or lost while the gateway was down).
type redeliverCase struct {
	provider string
	// source is the source's settings beyond path, provider and default;
	// reconcile its reconcile block's, api_base apart.
	source, reconcile string
	api               func() string
	send              func(i int, delivered bool)
	redelivered       func() int
}

// TestReconcileRedeliveringProviders: for GitLab, Paddle and PayPal, 10
// events are sent while the gateway runs, 2 of them lost (the gateway
// was down); once reconcile is set, the gateway asks the provider's API
// for exactly those 2, they arrive signed through the webhook path
// (delivered with Hookgate-Origin: redelivery), and the upstream has each
// of the 10 events once. A dry run over the last
// hour then finds nothing to ask.
func TestReconcileRedeliveringProviders(t *testing.T) {
	lost := map[int]bool{3: true, 7: true}
	cases := []func(t *testing.T, gatewayURL string) redeliverCase{
		func(t *testing.T, gatewayURL string) redeliverCase {
			const token, secret, hook = "glpat-e2e-reconcile", "gitlab-e2e-token-0123456789", "projects/acme%2Fapp/hooks/7"
			fake := providertest.NewGitLab(t, token, hook, secret)
			fake.Deliver = providertest.Post(gatewayURL)
			return redeliverCase{
				provider: "gitlab", source: fmt.Sprintf("    secrets: [%q]\n", secret),
				reconcile: fmt.Sprintf("      credentials: %q\n      hook: %s\n", token, hook), api: fake.URL,
				send: func(i int, delivered bool) {
					key, body := fmt.Sprintf("3a427872-00df-429c-9bc9-%012d", i), []byte(fmt.Sprintf(`{"object_kind":"push","checkout_sha":"%040d"}`, i))
					if delivered {
						if status := fake.Send(key, body, time.Now()); status != 200 {
							t.Fatalf("gitlab event %d: %d", i, status)
						}
						return
					}
					fake.Attempt(key, body, time.Now(), 0)
				},
				redelivered: func() int { return fake.Resent },
			}
		},
		func(t *testing.T, gatewayURL string) redeliverCase {
			const key, secret, destination = "pdl_live_apikey_e2e", "pdl_ntfset_e2e_secret_0123456789", "ntfset_01hv6scjn6ex5bej5bdy4w9ax3"
			fake := providertest.NewPaddle(t, key, destination, secret)
			fake.Deliver = providertest.Post(gatewayURL)
			return redeliverCase{
				provider: "paddle", source: fmt.Sprintf("    secrets: [%q]\n", secret),
				reconcile: fmt.Sprintf("      credentials: %q\n      hook: %s\n", key, destination), api: fake.URL,
				send: func(i int, delivered bool) {
					id, data := fmt.Sprintf("evt_01hv97getvqznt2h5h9ew%03d", i), []byte(fmt.Sprintf(`{"id":"txn_%03d","status":"completed"}`, i))
					if delivered {
						if status := fake.Send(id, "transaction.completed", data, time.Now(), "needs_retry"); status != 200 {
							t.Fatalf("paddle event %d: %d", i, status)
						}
						return
					}
					fake.Notify(id, "transaction.completed", data, time.Now(), "failed")
				},
				redelivered: func() int { return fake.Replayed },
			}
		},
		func(t *testing.T, gatewayURL string) redeliverCase {
			p, _ := verify.Lookup("paypal")
			webhookID, signingKey, err := verify.GenerateKeys(p)
			if err != nil {
				t.Fatal(err)
			}
			signer, err := verify.SignerFor(p)
			if err != nil {
				t.Fatal(err)
			}
			fake := providertest.NewPayPal(t, "AeE2EClientID", "e2e-client-secret")
			fake.Deliver = providertest.Post(gatewayURL)
			fake.Sign = func(body []byte) http.Header {
				h, err := signer.Sign(signingKey, verify.Message{Body: body, Time: time.Now()})
				if err != nil {
					t.Error(err)
				}
				return h
			}
			var opts strings.Builder
			for k, v := range verify.TestKeyOptions(signingKey) {
				fmt.Fprintf(&opts, "      %s: %q\n", k, v)
			}
			return redeliverCase{
				provider: "paypal", source: fmt.Sprintf("    secrets: [%q]\n    provider_options:\n%s", webhookID, opts.String()),
				reconcile: "      credentials: \"AeE2EClientID:e2e-client-secret\"\n", api: fake.URL,
				send: func(i int, delivered bool) {
					body := fake.Event(fmt.Sprintf("WH-%03dE2E-0NR76654JE622505K", i), "PAYMENT.CAPTURE.COMPLETED", time.Now())
					if delivered {
						if status := fake.Send(body); status != 200 {
							t.Fatalf("paypal event %d: %d", i, status)
						}
					}
				},
				redelivered: func() int { return fake.Resent },
			}
		},
	}
	for _, makeCase := range cases {
		up := newRecorder(t, "", nil)
		passthrough := newRecorder(t, "", nil)
		dir, port, admin := newGatewayDir(t, "", passthrough.addr)
		c := makeCase(t, fmt.Sprintf("http://127.0.0.1:%d/hooks/source", port))
		t.Run(c.provider, func(t *testing.T) {
			routes := fmt.Sprintf("upstreams:\n  app:\n    url: http://%s\nsources:\n  %s:\n    path: /hooks/source\n    provider: %s\n    default: [app]\n%s",
				up.addr, c.provider, c.provider, c.source)
			writeFile(t, filepath.Join(dir, "routes.yaml"), routes)
			g := startGateway(t, dir, port, admin)
			for i := range 10 {
				c.send(i, !lost[i])
			}
			waitFor(t, "the 8 events delivered", 30*time.Second, func() bool { return len(up.all()) >= 8 })
			g.kill()
			writeFile(t, filepath.Join(dir, "routes.yaml"), routes+"    reconcile:\n"+c.reconcile+"      api_base: "+c.api()+"\n")
			started := time.Now()
			g = startGateway(t, dir, port, admin)
			waitFor(t, "the 2 lost events redelivered", 60*time.Second, func() bool { return len(up.all()) >= 10 })
			took := time.Since(started)
			time.Sleep(500 * time.Millisecond)
			events, origins := map[string]int{}, map[string]int{}
			for _, r := range up.all() {
				events[r.Header.Get("Hookgate-Event-Id")]++
				origins[r.Header.Get("Hookgate-Origin")]++
			}
			if len(up.all()) != 10 || len(events) != 10 || c.redelivered() != 2 {
				t.Fatalf("%d deliveries of %d events, %d redeliveries asked; want 10, 10 and 2", len(up.all()), len(events), c.redelivered())
			}
			if origins["webhook"] != 8 || origins["redelivery"] != 2 {
				t.Fatalf("deliveries by Hookgate-Origin: %v, want 8 webhook and 2 redelivery", origins)
			}
			out, err := g.cli("reconcile", "--source", c.provider, "--since", "1h", "--dry-run")
			if err != nil || !strings.Contains(out, "listed 10, stored 0, duplicates 10, redeliveries 0") {
				t.Fatalf("dry run: %v\n%s", err, out)
			}
			t.Logf("%s: 2 lost of 10, both redelivered %s after the start", c.provider, took.Round(time.Millisecond))
		})
	}
}

// squareScenario is a gateway whose Square source reconciles with a fake
// Square API holding n events created while the gateway was down.
type squareScenario struct {
	fake     *providertest.Square
	webhooks [][]byte
	up       *recorder
	dir      string
	port     int
	admin    int
}

const squareKey, squareToken = "sq-e2e-signature-key-0123456789", "EAAAl-e2e-personal-token"

func newSquareScenario(t *testing.T, n int) *squareScenario {
	s := &squareScenario{fake: providertest.NewSquare(t, squareToken), up: newRecorder(t, "", nil)}
	now := time.Now()
	for i := range n {
		s.webhooks = append(s.webhooks, s.fake.Event(fmt.Sprintf("%08d-0aba-424f-b862-583d44efe7c8", i), "payment.updated", now.Add(-3*time.Hour+time.Duration(i)*20*time.Second)))
	}
	passthrough := newRecorder(t, "", nil)
	s.dir, s.port, s.admin = newGatewayDir(t, "", passthrough.addr)
	writeFile(t, filepath.Join(s.dir, "routes.yaml"), fmt.Sprintf(`upstreams:
  app:
    url: http://%s
sources:
  square:
    path: /hooks/square
    public_url: http://127.0.0.1:%d/hooks/square
    provider: square
    secrets: [%q]
    default: [app]
    reconcile:
      credentials: %q
      lookback: 4h
      api_base: %s
`, s.up.addr, s.port, squareKey, squareToken, s.fake.URL()))
	return s
}

// stored counts the square events in the gateway's store and their
// distinct dedup keys.
func (s *squareScenario) stored(t *testing.T, g *gateway) (events, keys int) {
	t.Helper()
	status, body := g.adminRaw("GET", "/hookgate/events?source=square&limit=1000")
	var list struct {
		Events []struct {
			DedupKey string `json:"dedup_key"`
		} `json:"events"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("listing the store: %d %s", status, body)
	}
	distinct := map[string]bool{}
	for _, e := range list.Events {
		distinct[e.DedupKey] = true
	}
	return len(list.Events), len(distinct)
}

// TestReconcileSquareAfterDowntime: 230 Square events made while the
// gateway was down are fetched over 3 pages, the API's first two answers
// being 429 with Retry-After; each reaches the upstream once, marked
// reconcile, with the body its webhook carries; Square's webhook of one,
// arriving later, is a duplicate.
func TestReconcileSquareAfterDowntime(t *testing.T) {
	s := newSquareScenario(t, 230)
	s.fake.Throttle(2)
	started := time.Now()
	g := startGateway(t, s.dir, s.port, s.admin)
	waitFor(t, "the 230 missed events delivered", 60*time.Second, func() bool { return len(s.up.all()) >= 230 })
	took := time.Since(started)
	if took < 2*time.Second {
		t.Fatalf("the run took %s: the two 429s asked for a second each", took)
	}
	requests := s.fake.Requests()
	if requests != 3+2 {
		t.Fatalf("%d requests to Square, want 3 pages and the 2 refused", requests)
	}
	want := map[string][]byte{}
	for _, b := range s.webhooks {
		var e struct {
			EventID string `json:"event_id"`
		}
		_ = json.Unmarshal(b, &e)
		want[e.EventID] = b
	}
	seen := map[string]bool{}
	for _, r := range s.up.all() {
		var e struct {
			EventID string `json:"event_id"`
		}
		_ = json.Unmarshal(r.Body, &e)
		var got, webhook any
		if json.Unmarshal(r.Body, &got) != nil || json.Unmarshal(want[e.EventID], &webhook) != nil || fmt.Sprint(got) != fmt.Sprint(webhook) {
			t.Fatalf("event %s delivered as %s, not as its webhook %s", e.EventID, r.Body, want[e.EventID])
		}
		if seen[e.EventID] || r.Header.Get("Hookgate-Origin") != "reconcile" {
			t.Fatalf("event %s delivered twice or with Hookgate-Origin %q", e.EventID, r.Header.Get("Hookgate-Origin"))
		}
		seen[e.EventID] = true
	}
	p, _ := verify.Lookup("square")
	scheme, err := verify.New(p.Spec, []string{squareKey})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/hooks/square", s.port)
	h, err := scheme.Sign(squareKey, verify.Message{Body: s.webhooks[17], URL: url, Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	h.Set("Content-Type", "application/json")
	if status, hdr, body := g.post("/hooks/square", h, s.webhooks[17]); status != 200 || hdr.Get("Hookgate-Duplicate") != "true" {
		t.Fatalf("Square's webhook of a reconciled event: %d duplicate=%q %s", status, hdr.Get("Hookgate-Duplicate"), body)
	}
	if n := len(s.up.all()); n != 230 {
		t.Fatalf("%d deliveries after the duplicate webhook", n)
	}
	t.Logf("230 missed events over 3 pages, 2 answers 429 with Retry-After 1: %d requests, all delivered %s after the start", requests, took.Round(time.Millisecond))
}

// TestReconcileCrashInTheMiddle: the gateway is killed (SIGKILL) while a
// run over 230 Square events is between its pages; started again, the
// run begins again from the cursor, which had not moved: the events stored
// before the crash are duplicates, the others are stored, and the store
// holds each of the 230 once.
func TestReconcileCrashInTheMiddle(t *testing.T) {
	s := newSquareScenario(t, 230)
	s.fake.Slow(2 * time.Second)
	g := startGateway(t, s.dir, s.port, s.admin)
	waitFor(t, "the first page stored", 30*time.Second, func() bool {
		n, _ := s.stored(t, g)
		return n >= 100
	})
	g.kill9()
	reader := startGatewayWithoutReconcile(t, s)
	crashed, _ := s.stored(t, reader)
	reader.kill()
	if crashed < 100 || crashed >= 230 {
		t.Fatalf("%d events stored when the run was cut, want the first page or two", crashed)
	}
	s.fake.Slow(0)
	g = startGateway(t, s.dir, s.port, s.admin)
	waitFor(t, "the run after the crash", 30*time.Second, func() bool {
		n, _ := s.stored(t, g)
		return n >= 230
	})
	out, err := g.cli("reconcile", "--source", "square", "--since", "4h", "--dry-run")
	if err != nil || !strings.Contains(out, "listed 230") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	events, keys := s.stored(t, g)
	if events != 230 || keys != 230 {
		t.Fatalf("after the crash and the run again: %d events with %d dedup keys, want each of 230 once", events, keys)
	}
	waitFor(t, "every event delivered", 30*time.Second, func() bool { return len(s.up.byEvent()) >= 230 })
	deliveries := len(s.up.all())
	t.Logf("killed with %d of 230 events stored; after the restart the store holds 230 events, 230 dedup keys; the upstream got %d deliveries of %d events", crashed, deliveries, len(s.up.byEvent()))
}

// startGatewayWithoutReconcile starts the scenario's gateway with its
// source's reconcile block removed, to read the store as the crash left it.
func startGatewayWithoutReconcile(t *testing.T, s *squareScenario) *gateway {
	path := filepath.Join(s.dir, "routes.yaml")
	full := readFile(t, path)
	writeFile(t, path, full[:strings.Index(full, "    reconcile:")])
	defer writeFile(t, path, full)
	return startGateway(t, s.dir, s.port, s.admin)
}

// TestInspectorShowsReconciliation: in a real browser, the inspector
// shows each reconciling source's last run and outcome, and an event
// fetched by reconciliation shows its origin.
func TestInspectorShowsReconciliation(t *testing.T) {
	ctx := newBrowser(t)
	s := newSquareScenario(t, 3)
	g := startGateway(t, s.dir, s.port, s.admin)
	waitFor(t, "the 3 events fetched", 30*time.Second, func() bool { return len(s.up.all()) >= 3 })
	waitFor(t, "the run recorded", 10*time.Second, func() bool {
		_, stats := g.admin("GET", "/hookgate/stats")
		r, _ := stats["reconcile"].(map[string]any)
		sq, _ := r["square"].(map[string]any)
		return sq["outcome"] == "ok"
	})
	id := s.up.all()[0].Header.Get("Hookgate-Event-Id")
	inspectPort := freePort(t)
	startInspector(t, g.adminPort, inspectPort)
	page := fmt.Sprintf("http://127.0.0.1:%d/hookgate/ui/", inspectPort)
	row := chromedp.CSS(`#reconcile tr[data-source="square"]`)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(row)); err != nil {
		t.Fatalf("the reconciliation panel: %v", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(row))
	if err != nil || !strings.Contains(text, "square") || !strings.Contains(text, "ok") || strings.Contains(text, "not yet") {
		t.Fatalf("the panel's row reads %q (%v)", text, err)
	}
	event := chromedp.CSS(fmt.Sprintf(`tr[data-id="%s"]`, id))
	// Filtered by origin: the fetched events are reconcile's, none a webhook's.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(event), chromedp.SetValue(chromedp.CSS("#origin"), "webhook"), chromedp.Click(chromedp.CSS("#filters button")),
		chromedp.WaitNotPresent(event)); err != nil {
		t.Fatalf("filtering by origin webhook: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#origin"), "reconcile"), chromedp.Click(chromedp.CSS("#filters button")),
		chromedp.WaitVisible(event), chromedp.Click(event), chromedp.WaitVisible(chromedp.CSS("#detail"))); err != nil {
		t.Fatalf("opening the event: %v", err)
	}
	var request string
	waitFor(t, "the event's request shown", 10*time.Second, func() bool {
		request, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#request")))
		return strings.Contains(request, "Origin:")
	})
	if !strings.Contains(request, "Origin: reconcile") {
		t.Fatalf("the fetched event's detail reads:\n%s", request)
	}
}

// TestAlertOnReconcileFailed: a run refused by the provider (a revoked
// token) raises one reconcile_failed alert naming the source and the
// answer, never the credentials, and the stats show the failure.
func TestAlertOnReconcileFailed(t *testing.T) {
	s := newSquareScenario(t, 3)
	alerts := newRecorder(t, "", nil)
	path := filepath.Join(s.dir, "routes.yaml")
	// The credentials come from a placeholder, as the docs recommend: a
	// literal would be in Caddy's DEBUG log of the adapted configuration.
	t.Setenv("HOOKGATE_E2E_SQUARE_TOKEN", "EAAAl-revoked-token")
	routes := strings.Replace(readFile(t, path), fmt.Sprintf("%q", squareToken), `"{env.HOOKGATE_E2E_SQUARE_TOKEN}"`, 1)
	t.Setenv("HOOKGATE_E2E_ALERT_TOKEN", "alert-e2e-token")
	pagerduty, opsgenie := newRecorder(t, "", nil), newRecorder(t, "", nil)
	writeFile(t, path, routes+fmt.Sprintf("alerts:\n  - name: ops\n    to: http://%s/alerts\n    headers: {Authorization: \"Bearer {env.HOOKGATE_E2E_ALERT_TOKEN}\"}\n    on: {reconcile_failed: true}\n"+
		"  - name: pager\n    to: http://%s/v2/enqueue\n    format: pagerduty\n    routing_key: R0UT1NGKEY\n    on: {reconcile_failed: true}\n"+
		"  - name: genie\n    to: http://%s\n    format: opsgenie\n    headers: {Authorization: GenieKey e2e-genie}\n    on: {reconcile_failed: true}\n", alerts.addr, pagerduty.addr, opsgenie.addr))
	g := startGateway(t, s.dir, s.port, s.admin)
	waitFor(t, "the alert", 20*time.Second, func() bool { return len(alerts.all()) >= 1 })
	var a struct {
		Alert, Source, Message string
	}
	if err := json.Unmarshal(alerts.all()[0].Body, &a); err != nil || a.Alert != "reconcile_failed" || a.Source != "square" || !strings.Contains(a.Message, "401") {
		t.Fatalf("alert %s (%v)", alerts.all()[0].Body, err)
	}
	if got := alerts.all()[0].Header.Get("Authorization"); got != "Bearer alert-e2e-token" {
		t.Fatalf("the alert request's Authorization is %q, want the target's headers", got)
	}
	if strings.Contains(string(alerts.all()[0].Body), "revoked") {
		t.Fatalf("the alert carries the credentials: %s", alerts.all()[0].Body)
	}
	if !strings.Contains(g.log.String(), "reconciliation failed") || strings.Contains(g.log.String(), "EAAAl-revoked-token") {
		t.Fatal("the gateway's log lacks the failed run, or carries the credentials")
	}
	_, stats := g.admin("GET", "/hookgate/stats")
	sq, _ := stats["reconcile"].(map[string]any)["square"].(map[string]any)
	if outcome, _ := sq["outcome"].(string); !strings.HasPrefix(outcome, "failed: ") || len(s.up.all()) != 0 {
		t.Fatalf("stats after a refused run: %v; %d deliveries", sq, len(s.up.all()))
	}

	// A good token, a reload: the run after it succeeds, and the alert
	// resolves, with the same id.
	writeFile(t, path, strings.Replace(readFile(t, path), `"{env.HOOKGATE_E2E_SQUARE_TOKEN}"`, fmt.Sprintf("%q", squareToken), 1))
	if status, resp := g.load(readFile(t, filepath.Join(s.dir, "Caddyfile"))); status != 200 {
		t.Fatalf("reload: %d %s", status, resp)
	}
	waitFor(t, "the resolved alert", 20*time.Second, func() bool { return len(alerts.all()) >= 2 })
	var fired, resolved struct{ ID, Alert, State, Message string }
	json.Unmarshal(alerts.all()[0].Body, &fired)
	json.Unmarshal(alerts.all()[1].Body, &resolved)
	if fired.State != "firing" || resolved.State != "resolved" || resolved.Alert != "reconcile_failed" || resolved.ID != fired.ID || fired.ID == "" {
		t.Fatalf("after the fix: %+v then %+v", fired, resolved)
	}
	waitFor(t, "the 3 events fetched once the token works", 20*time.Second, func() bool { return len(s.up.all()) >= 3 })

	// PagerDuty: a trigger, then a resolve with its dedup key, which closes
	// the incident; Opsgenie: an alert, then its close by alias.
	waitFor(t, "PagerDuty's and Opsgenie's two calls each", 20*time.Second, func() bool { return len(pagerduty.all()) >= 2 && len(opsgenie.all()) >= 2 })
	var trigger, resolve struct {
		RoutingKey  string `json:"routing_key"`
		EventAction string `json:"event_action"`
		DedupKey    string `json:"dedup_key"`
	}
	json.Unmarshal(pagerduty.all()[0].Body, &trigger)
	json.Unmarshal(pagerduty.all()[1].Body, &resolve)
	if pagerduty.all()[0].URI != "/v2/enqueue" || trigger.RoutingKey != "R0UT1NGKEY" || trigger.EventAction != "trigger" || resolve.EventAction != "resolve" ||
		resolve.DedupKey != trigger.DedupKey || trigger.DedupKey != fired.ID {
		t.Fatalf("pagerduty got %s then %s", pagerduty.all()[0].Body, pagerduty.all()[1].Body)
	}
	create, closing := opsgenie.all()[0], opsgenie.all()[1]
	if create.URI != "/v2/alerts" || closing.URI != "/v2/alerts/"+fired.ID+"/close?identifierType=alias" || create.Header.Get("Authorization") != "GenieKey e2e-genie" ||
		!strings.Contains(string(create.Body), `"alias":"`+fired.ID+`"`) {
		t.Fatalf("opsgenie got %s %s then %s", create.URI, create.Body, closing.URI)
	}
}

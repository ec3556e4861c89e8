package ingest_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
	"github.com/hookgate/hookgate/internal/natstest"
	"github.com/hookgate/hookgate/internal/store"
	"github.com/hookgate/hookgate/internal/store/bolt"
	natsstore "github.com/hookgate/hookgate/internal/store/jetstream"
)

// asanaRoutes is a configuration with one Asana source at /asana, whose
// extra lines (learn_secret, public_url) are given.
func asanaRoutes(extra string) string {
	return "upstreams:\n  legacy:\n    url: http://127.0.0.1:1\nsources:\n  asana:\n    path: /asana\n    provider: asana\n    default: [legacy]\n" + extra
}

// learningWindow opens the learning window for an hour after testNow.
var learningWindow = "    public_url: https://hooks.example.com/asana\n    learn_secret: {until: \"" + testNow.Add(time.Hour).UTC().Format(time.RFC3339) + "\"}\n"

var asanaBody = []byte(`{"events":[{"action":"changed","resource":{"gid":"1","resource_type":"task"}}]}`)

func asanaSigned(secret string) http.Header {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(asanaBody)
	return http.Header{"X-Hook-Signature": {hex.EncodeToString(mac.Sum(nil))}, "Content-Type": {"application/json"}}
}

func asanaHandshake(secret string) http.Header { return http.Header{"X-Hook-Secret": {secret}} }

// outcomes counts what a pipeline reports to its observer.
type outcomes struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *outcomes) Observe(_, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[outcome]++
}

func (o *outcomes) get(outcome string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[outcome]
}

// pipelineOn compiles routes and attaches the pipeline to st.
func pipelineOn(t testing.TB, routes string, st store.Store, log *zap.Logger) *harness {
	t.Helper()
	cfg, err := config.Parse("routes.yaml", []byte(routes), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.Attach(st, log, func() time.Time { return testNow })
	h := &harness{p: p}
	if b, ok := st.(*bolt.Store); ok {
		h.store = b
	}
	return h
}

// raceHandshakes sends n handshakes at once, each planting its own secret,
// spread over the pipelines, and returns the secrets answered 200.
func raceHandshakes(t *testing.T, n int, pipelines ...*harness) []string {
	t.Helper()
	var mu sync.Mutex
	var won []string
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			secret := fmt.Sprintf("attacker-%d", i)
			rec := pipelines[i%len(pipelines)].do("POST", "/asana", asanaHandshake(secret), nil)
			switch rec.Code {
			case 200:
				if rec.Header().Get("X-Hook-Secret") != secret {
					t.Errorf("200 echoes %q, want %q", rec.Header().Get("X-Hook-Secret"), secret)
				}
				mu.Lock()
				won = append(won, secret)
				mu.Unlock()
			case 403:
			default:
				t.Errorf("handshake %d: %d %s", i, rec.Code, rec.Body)
			}
		}()
	}
	wg.Wait()
	return won
}

// checkOnlySecretVerifies sends one event signed with each planted secret:
// only want's is accepted.
func checkOnlySecretVerifies(t *testing.T, h *harness, n int, want string) {
	t.Helper()
	for i := range n {
		secret := fmt.Sprintf("attacker-%d", i)
		code := h.do("POST", "/asana", asanaSigned(secret), asanaBody).Code
		if secret == want && code != 200 {
			t.Fatalf("event signed with the established secret %s: %d", secret, code)
		}
		if secret != want && code != 401 {
			t.Fatalf("event signed with refused secret %s: %d", secret, code)
		}
	}
}

// TestAsanaHandshakeRaceOnBolt plants 20 secrets at once on a new source:
// exactly one handshake is answered 200 and only its secret verifies, then
// and after a restart; the outcomes are counted and logged.
func TestAsanaHandshakeRaceOnBolt(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "hookgate.db")
	st, err := bolt.Open(dbPath, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	h := pipelineOn(t, asanaRoutes(learningWindow), st, zap.New(core))
	seen := &outcomes{}
	h.p.SetObserver(seen)
	if rec := h.do("POST", "/asana", asanaSigned("anything"), asanaBody); rec.Code != 401 {
		t.Fatalf("event before any handshake: %d", rec.Code)
	}
	won := raceHandshakes(t, 20, h)
	if len(won) != 1 {
		t.Fatalf("%d of 20 handshakes answered 200: %v", len(won), won)
	}
	checkOnlySecretVerifies(t, h, 20, won[0])
	if seen.get("handshake") != 1 || seen.get("rejected_handshake") != 19 {
		t.Fatalf("outcomes: %v", seen.n)
	}
	established := logs.FilterMessage("secret established by handshake").All()
	refused := logs.FilterMessage("handshake refused").All()
	if len(established) != 1 || len(refused) != 10 { // refusals are sampled: the first 10 a second
		t.Fatalf("logged %d established, %d refused", len(established), len(refused))
	}
	for _, e := range append(established, refused...) {
		m := e.ContextMap()
		if e.Level != zap.InfoLevel || m["source"] != "asana" || m["client_ip"] != "192.0.2.1" || m["outcome"] == nil {
			t.Fatalf("log line: %s %v", e.Message, m)
		}
		for k, v := range m {
			if strings.Contains(fmt.Sprint(v), "attacker-") {
				t.Fatalf("log line %q carries a secret in %s", e.Message, k)
			}
		}
	}
	if refused[0].ContextMap()["reason"] != "secret_exists" {
		t.Fatalf("refusal reason: %v", refused[0].ContextMap())
	}
	st.Close()

	st2, err := bolt.Open(dbPath, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	h2 := pipelineOn(t, asanaRoutes(learningWindow), st2, nil)
	checkOnlySecretVerifies(t, h2, 20, won[0])
	if rec := h2.do("POST", "/asana", asanaHandshake("after-restart"), nil); rec.Code != 403 {
		t.Fatalf("handshake after a restart: %d", rec.Code)
	}
}

// TestAsanaHandshakeRaceOnJetStream races the handshakes over two instances
// sharing one JetStream store: one wins across both, the other instance
// refuses the next handshake and verifies the winner's events, and a revoke
// stops the secret verifying on both at once.
func TestAsanaHandshakeRaceOnJetStream(t *testing.T) {
	cluster, err := natstest.Start(1, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	open := func() *natsstore.Store {
		s, err := natsstore.Open(natsstore.Options{URL: cluster.URLs(), Stream: "LEARN"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	stA, stB := open(), open()
	a := pipelineOn(t, asanaRoutes(learningWindow), stA, nil)
	b := pipelineOn(t, asanaRoutes(learningWindow), stB, nil)

	won := raceHandshakes(t, 20, a, b)
	if len(won) != 1 {
		t.Fatalf("%d of 20 handshakes answered 200: %v", len(won), won)
	}
	for _, h := range []*harness{a, b} {
		if rec := h.do("POST", "/asana", asanaHandshake("late"), nil); rec.Code != 403 {
			t.Fatalf("a later handshake: %d", rec.Code)
		}
		checkOnlySecretVerifies(t, h, 20, won[0])
	}

	if found, err := stA.RevokeSecret(context.Background(), ingest.SecretScope("asana", "/asana", "https://hooks.example.com/asana")); !found || err != nil {
		t.Fatalf("revoke: %v %v", found, err)
	}
	for _, h := range []*harness{a, b} {
		if rec := h.do("POST", "/asana", asanaSigned(won[0]), asanaBody); rec.Code != 401 {
			t.Fatalf("event signed with a revoked secret: %d", rec.Code)
		}
	}
	if rec := b.do("POST", "/asana", asanaHandshake("fresh"), nil); rec.Code != 200 {
		t.Fatalf("handshake after the revoke: %d", rec.Code)
	}
	if rec := a.do("POST", "/asana", asanaSigned("fresh"), asanaBody); rec.Code != 200 {
		t.Fatalf("the other instance, with the new secret: %d", rec.Code)
	}
}

// TestLearnedSecretsAreScoped runs two sites on one store, each with a
// source named asana at /asana: a secret one learns never verifies on the
// other, and each learns its own.
func TestLearnedSecretsAreScoped(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "hookgate.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	window := func(url string) string {
		return strings.Replace(learningWindow, "https://hooks.example.com/asana", url, 1)
	}
	a := pipelineOn(t, asanaRoutes(window("https://a.example.com/asana")), st, nil)
	b := pipelineOn(t, asanaRoutes(window("https://b.example.com/asana")), st, nil)
	if rec := a.do("POST", "/asana", asanaHandshake("secret-a"), nil); rec.Code != 200 {
		t.Fatalf("site a's handshake: %d", rec.Code)
	}
	if rec := b.do("POST", "/asana", asanaSigned("secret-a"), asanaBody); rec.Code != 401 {
		t.Fatalf("site a's secret on site b: %d", rec.Code)
	}
	if rec := b.do("POST", "/asana", asanaHandshake("secret-b"), nil); rec.Code != 200 {
		t.Fatalf("site b's handshake: %d", rec.Code)
	}
	if a.do("POST", "/asana", asanaSigned("secret-b"), asanaBody).Code != 401 || a.do("POST", "/asana", asanaSigned("secret-a"), asanaBody).Code != 200 {
		t.Fatal("site a verifies with the wrong secret")
	}

	// Without a public URL the path tells sources apart.
	if ingest.SecretScope("asana", "/one", "") == ingest.SecretScope("asana", "/two", "") || ingest.SecretScope("asana", "/Asana/", "") != ingest.SecretScope("asana", "/asana", "") {
		t.Fatal("scopes by path")
	}
	if ingest.SecretScope("asana", "/x", "HTTPS://A.example.com/Asana") != ingest.SecretScope("asana", "/y", "https://a.example.com/asana/") {
		t.Fatal("spellings of one public URL differ")
	}
	list, err := st.LearnedSecrets()
	if err != nil || len(list) != 2 || list[0].Scope != "asana https://a.example.com/asana" || list[0].Source != "asana" {
		t.Fatalf("stored: %+v %v", list, err)
	}
}

// TestLearningWindow refuses a handshake, with nothing stored, when no
// window is configured or the window has closed.
func TestLearningWindow(t *testing.T) {
	past := "    public_url: https://hooks.example.com/asana\n    learn_secret: {until: \"" + testNow.Add(-time.Second).UTC().Format(time.RFC3339) + "\"}\n"
	for name, extra := range map[string]string{"no window": "", "closed window": past} {
		st, err := bolt.Open(filepath.Join(t.TempDir(), "hookgate.db"), bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		seen := &outcomes{}
		h := pipelineOn(t, asanaRoutes(extra), st, nil)
		h.p.SetObserver(seen)
		if rec := h.do("POST", "/asana", asanaHandshake("s3cret"), nil); rec.Code != 403 || rec.Header().Get("X-Hook-Secret") != "" {
			t.Fatalf("%s: handshake answered %d %v", name, rec.Code, rec.Header())
		}
		if list, _ := st.LearnedSecrets(); len(list) != 0 || seen.get("rejected_handshake") != 1 {
			t.Fatalf("%s: stored %v, outcomes %v", name, list, seen.n)
		}
		if rec := h.do("POST", "/asana", asanaSigned("s3cret"), asanaBody); rec.Code != 401 {
			t.Fatalf("%s: event: %d", name, rec.Code)
		}
		st.Close()
	}
}

// TestLearnSecretConfigErrors points at learn_secret when it cannot apply.
func TestLearnSecretConfigErrors(t *testing.T) {
	window := "    learn_secret: {until: \"2030-01-02T15:04:05Z\"}\n"
	cases := map[string]string{
		"    provider: github\n    secrets: [s-0123456789abcdef]\n    public_url: https://h.example/x\n" + window: "routes.yaml:11:5: source s: learn_secret: this source's scheme does not learn",
		"    provider: asana\n" + window:                                    "routes.yaml:9:5: source s: learn_secret needs public_url",
		"    provider: asana\n    public_url: /relative\n" + window:         "routes.yaml:10:5: source s: learn_secret needs public_url",
		"    provider: asana\n    secrets: [s-0123456789abcdef]\n" + window: "routes.yaml:10:5: source s: learn_secret and secrets exclude each other",
		"    provider: asana\n    learn_secret: {until: tomorrow}\n":        "routes.yaml:9:27: source s.learn_secret.until: want an RFC 3339 time",
		"    provider: asana\n    learn_secret: {}\n":                       "routes.yaml:9:19: source s.learn_secret: until is required",
		"    provider: asana\n    learn_secret: {until: x, for: 1h}\n":      `routes.yaml:9:30: source s.learn_secret: unknown key "for"`,
	}
	for src, want := range cases {
		yaml := "upstreams:\n  legacy:\n    url: http://x\nsources:\n  s:\n    path: /h\n    default: [legacy]\n" + src
		cfg, err := config.Parse("routes.yaml", []byte(yaml), config.Options{})
		if err == nil {
			_, err = compile(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %q", src, err, want)
		}
	}
}

package assemble_test

import (
	"testing"
	"time"

	"github.com/hookgate/hookgate/internal/alert"
	"github.com/hookgate/hookgate/internal/assemble"
	"github.com/hookgate/hookgate/internal/config"
	"github.com/hookgate/hookgate/internal/ingest"
)

// TestAlertTargetsBecomeUpstreams: each alert target is a rule and an
// internal upstream with its URL as it is and the default retry policy.
func TestAlertTargetsBecomeUpstreams(t *testing.T) {
	doc := "upstreams:\n  legacy:\n    url: http://x\nsources:\n  s:\n    path: /h\n    provider: github\n    secrets: [s-0123456789abcdef]\n    default: [legacy]\n" +
		"alerts:\n  - name: ops\n    to: https://hooks.slack.com/services/T0/B0/x\n    format: slack\n    on: {dead: true, rejected: {ratio: 0.5}}\n    repeat: 10m\n"
	cfg, err := config.Parse("routes.yaml", []byte(doc), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := assemble.Config(cfg, ingest.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts.Alerts) != 1 {
		t.Fatalf("rules %+v", parts.Alerts)
	}
	r := parts.Alerts[0]
	if r.Name != "ops" || r.Format != alert.FormatSlack || !r.Dead || r.BreakerOpen || r.Repeat != 10*time.Minute ||
		r.Rejected == nil || *r.Rejected != (alert.Rejected{Ratio: 0.5, Min: config.DefaultRejectedMin, Window: config.DefaultRejectedWindow}) {
		t.Errorf("rule %+v", r)
	}
	up, ok := parts.Upstreams["alert:ops"]
	if !ok || !up.ExactURL || up.URL.String() != "https://hooks.slack.com/services/T0/B0/x" ||
		up.Retry.MaxAttempts != config.DefaultMaxAttempts || up.Timeout != config.DefaultTimeout || up.Breaker.FailureRatio != 0 {
		t.Errorf("upstream %+v", up)
	}
	if _, ok := parts.Upstreams["legacy"]; !ok {
		t.Error("the configured upstream is gone")
	}
}

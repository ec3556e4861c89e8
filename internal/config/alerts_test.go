package config

import (
	"strings"
	"testing"
	"time"
)

const alertsBase = "upstreams:\n  legacy:\n    url: http://127.0.0.1:9000\n" +
	"sources:\n  s:\n    path: /hook\n    provider: github\n    secrets: [x-0123456789abcdef]\n    default: [legacy]\n"

func TestParseAlerts(t *testing.T) {
	doc := alertsBase + `alerts:
  - name: ops
    to: "{env.ALERT_WEBHOOK_URL}"
    format: slack
    on:
      dead: true
      breaker_open: true
      oldest_pending: 15m
      rejected: {ratio: 0.5, min: 20, window: 5m}
    repeat: 1h
  - name: audit
    to: https://audit.example.com/hook
    on: {rejected: {ratio: 1}}
`
	cfg, err := Parse("routes.yaml", []byte(doc), expandEnv(map[string]string{"ALERT_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/x"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Alerts) != 2 {
		t.Fatalf("%d alerts", len(cfg.Alerts))
	}
	ops, audit := cfg.Alerts[0], cfg.Alerts[1]
	if ops.Name != "ops" || ops.To.String() != "https://hooks.slack.com/services/T0/B0/x" || ops.Format != AlertFormatSlack || ops.Repeat.Std() != time.Hour {
		t.Errorf("ops: %+v", ops)
	}
	want := AlertOn{Dead: true, BreakerOpen: true, OldestPending: Duration(15 * time.Minute), Rejected: &AlertRejected{Ratio: 0.5, Min: 20, Window: Duration(5 * time.Minute)}}
	if on := ops.On; on.Dead != want.Dead || on.BreakerOpen != want.BreakerOpen || on.OldestPending != want.OldestPending || !sameRejected(on.Rejected, want.Rejected) {
		t.Errorf("ops.on: %+v %+v", on, on.Rejected)
	}
	// Defaults: json, repeat 1h, rejected min 20 over 5m.
	if audit.Format != AlertFormatJSON || audit.Repeat.Std() != DefaultAlertRepeat || audit.On.Dead ||
		!sameRejected(audit.On.Rejected, &AlertRejected{Ratio: 1, Min: DefaultRejectedMin, Window: Duration(DefaultRejectedWindow)}) {
		t.Errorf("audit: %+v %+v", audit, audit.On.Rejected)
	}
}

func TestParseAlertErrors(t *testing.T) {
	alert := func(body string) string { return alertsBase + "alerts:\n  - name: ops\n" + body }
	const to = "    to: https://alerts.example.com/x\n"
	const on = "    on: {dead: true}\n"
	cases := []struct{ name, yaml, want string }{
		{"missing to", alert(on), "routes.yaml:11:5: alert \"ops\": to is required"},
		{"unset placeholder", alert("    to: \"{env.NOPE}\"\n" + on), "routes.yaml:12:9: alerts[0].to is empty"},
		{"relative to", alert("    to: /alerts\n" + on), "routes.yaml:12:9: alerts[0].to: scheme must be http or https"},
		{"no host", alert("    to: http://\n" + on), "alerts[0].to: the URL has no host"},
		{"unknown format", alert(to + on + "    format: sms\n"), "routes.yaml:14:13: alerts[0].format must be one of json, slack, pagerduty, opsgenie, teams, email, got \"sms\""},
		{"email to a web URL", alert(to + on + "    format: email\n    email: {from: a@example.com, to: [b@example.com]}\n"), "alert \"ops\".to: format email sends to a mail server"},
		{"smtp without email", alert("    to: smtp://mail.example.com:587\n" + on), "alert \"ops\".to: an smtp URL needs format email"},
		{"email without addresses", alert("    to: smtp://mail.example.com\n    format: email\n" + on), "format email needs email: {from: …, to: [...]}"},
		{"email with a bad sender", alert("    to: smtps://mail.example.com\n    format: email\n    email: {from: \"Ops <ops@example.com>\", to: [b@example.com]}\n" + on), "email.from: \"Ops <ops@example.com>\": want a bare address"},
		{"email with a path", alert("    to: smtp://mail.example.com/x\n    format: email\n    email: {from: a@example.com, to: [b@example.com]}\n" + on), "without a path or query"},
		{"store_size without max_size", alert(to + "    on: {store_size: 0.8}\n"), "alerts[0].on.store_size is a share of storage.max_size: set max_size"},
		{"pagerduty without its key", alert(to + on + "    format: pagerduty\n"), "routes.yaml:11:5: alerts[0]: format pagerduty needs routing_key"},
		{"routing key elsewhere", alert(to + on + "    routing_key: abc\n"), "routes.yaml:14:5: alerts[0]: routing_key is for format pagerduty"},
		{"bad duration", alert(to + "    on: {oldest_pending: 15 minutes}\n"), "routes.yaml:13:26: alerts[0].on.oldest_pending: invalid duration"},
		{"zero repeat", alert(to + on + "    repeat: 0s\n"), "alerts[0].repeat must be more than zero"},
		{"ratio above 1", alert(to + "    on: {rejected: {ratio: 1.5}}\n"), "routes.yaml:13:28: alerts[0].on.rejected.ratio must be a number in (0, 1]"},
		{"ratio zero", alert(to + "    on: {rejected: {ratio: 0}}\n"), "alerts[0].on.rejected.ratio must be a number in (0, 1]"},
		{"ratio missing", alert(to + "    on: {rejected: {min: 5}}\n"), "alerts[0].on.rejected: ratio is required"},
		{"min zero", alert(to + "    on: {rejected: {ratio: 0.5, min: 0}}\n"), "alerts[0].on.rejected.min must be at least 1"},
		{"nothing on", alert(to + "    on: {dead: false}\n"), "alert \"ops\": on must turn on at least one of"},
		{"no on", alert(to), "alert \"ops\": on must turn on at least one of"},
		{"unknown trigger", alert(to + "    on: {deadd: true}\n"), "alerts[0].on: unknown key \"deadd\""},
		{"duplicate name", alert(to+on) + "  - name: ops\n" + to + on, "routes.yaml:14:5: alert \"ops\" is defined twice"},
		{"missing name", alertsBase + "alerts:\n  - to: https://x\n" + on, "alerts[0]: name is required"},
		{"bad name", alertsBase + "alerts:\n  - name: a.b\n" + to + on, "alerts[0].name: \"a.b\" must be 1-32 letters"},
		{"reserved source", strings.Replace(alertsBase, "  s:\n", "  hookgate-alerts:\n", 1), "source hookgate-alerts: the name is reserved"},
		{"reserved upstream", strings.Replace(alertsBase, "  legacy:\n", "  alert:x:\n", 1), "upstream alert:x: names starting with \"alert:\" are reserved"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("routes.yaml", []byte(c.yaml), expandEnv(nil))
			if err == nil {
				t.Fatalf("accepted:\n%s", c.yaml)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, c.want)
			}
		})
	}
}

// TestAlertURLIsNotEchoed: a to: URL may carry a token; errors name the
// key, not the value.
func TestAlertURLIsNotEchoed(t *testing.T) {
	doc := alertsBase + "alerts:\n  - name: ops\n    to: \"ftp://hooks.example/T0/s3cr3t-token\"\n    on: {dead: true}\n"
	_, err := Parse("routes.yaml", []byte(doc), Options{})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error %v", err)
	}
}

func TestAlertsJSON(t *testing.T) {
	doc := `{"upstreams":{"legacy":{"url":"http://127.0.0.1:9000"}},` +
		`"sources":{"s":{"path":"/hook","provider":"github","secrets":["x-0123456789abcdef"],"default":["legacy"]}},` +
		`"alerts":[{"name":"ops","to":"https://alerts.example.com/x","on":{"rejected":{"ratio":2}}}]}`
	_, err := ParseJSON("webhook_gateway routes", []byte(doc), Options{})
	if err == nil || !strings.Contains(err.Error(), "webhook_gateway routes: alerts[0].on.rejected.ratio must be a number") {
		t.Fatalf("error %v", err)
	}
}

func sameRejected(a, b *AlertRejected) bool {
	return a != nil && b != nil && a.Ratio == b.Ratio && a.Min == b.Min && a.Window == b.Window
}

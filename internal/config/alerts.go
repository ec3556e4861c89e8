package config

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hookgate/hookgate/internal/alert"
)

// Alert defaults.
const (
	// DefaultAlertRepeat is how often the same alert may be sent again.
	DefaultAlertRepeat = time.Hour
	// DefaultRejectedMin and DefaultRejectedWindow complete a rejected
	// trigger that sets only its ratio.
	DefaultRejectedMin    = 20
	DefaultRejectedWindow = 5 * time.Minute
)

// Names the configuration may not use: alerts are stored as events of the
// source AlertSource and delivered to upstreams named AlertUpstreamPrefix
// followed by the alert's name.
const (
	AlertSource         = alert.Source
	AlertUpstreamPrefix = alert.UpstreamPrefix
)

// Alert formats.
const (
	AlertFormatJSON  = alert.FormatJSON
	AlertFormatSlack = alert.FormatSlack
)

// Alert is one alert target: where alerts go, in which format, on which
// conditions, and how often the same one may repeat.
type Alert struct {
	Located
	// Name names the target: 1-32 letters, digits, - or _. Required.
	Name string `json:"name" yaml:"name"`
	// To is the http(s) URL alerts are POSTed to, placeholders expanded;
	// it is a credential (a Slack webhook's path is its token). For format
	// email it is the mail server: smtp://[user:password@]host[:port]
	// (STARTTLS when offered, port 587 by default) or smtps://… (TLS, port
	// 465). Required.
	To SecretURL `json:"to" yaml:"to"`
	// Format is json (an event per alert), slack (an incoming-webhook
	// message), pagerduty (Events API v2, to
	// https://events.pagerduty.com/v2/enqueue, with routing_key), opsgenie
	// (Alert API, to https://api.opsgenie.com with headers: {Authorization:
	// "GenieKey …"}), teams (a Workflows webhook's Adaptive Card) or
	// email (a plain-text message over SMTP, with email). Default json.
	Format string `json:"format,omitzero" yaml:"format,omitempty" enum:"json,slack,pagerduty,opsgenie,teams,email"`
	// Email are the addresses of format email's messages. Required for
	// format email.
	Email *AlertEmail `json:"email,omitzero" yaml:"email,omitempty"`
	// RoutingKey is the PagerDuty integration's routing key; required for
	// format pagerduty, and a credential.
	RoutingKey Secret `json:"routing_key,omitzero" yaml:"routing_key,omitempty" example:"\"{env.PAGERDUTY_ROUTING_KEY}\""`
	// On says which conditions raise an alert; at least one. Required.
	On AlertOn `json:"on" yaml:"on"`
	// InspectorURL is the event inspector's address as the target's readers
	// reach it (hookgate inspect, or a site in front of it): every alert
	// links to its event there (#/events/<id>), or to the inspector.
	// Default: no link.
	InspectorURL URL `json:"inspector_url,omitzero" yaml:"inspector_url,omitempty" example:"https://ops.example.com/hookgate/ui/"`
	// Headers are set on every alert request, placeholders expanded, never
	// logged: an Authorization for a webhook that needs one.
	Headers DeliveryHeaders `json:"headers,omitzero" yaml:"headers,omitempty" example:"{Authorization: \"Bearer {env.ALERT_TOKEN}\"}"`
	// Repeat is the least time between two alerts of one kind about one
	// source or upstream. Default 1h.
	Repeat Duration `json:"repeat,omitzero" yaml:"repeat,omitempty" positive:"true"`
}

// AlertEmail addresses an e-mail alert target's messages.
type AlertEmail struct {
	Located
	// From is the sender's address, envelope and header. Required.
	From string `json:"from" yaml:"from" example:"hookgate@example.com"`
	// To are the recipients' addresses. Required.
	To []string `json:"to" yaml:"to" example:"[ops@example.com]"`
}

func (e *AlertEmail) check(d *decoder, n *yaml.Node, what string) {
	if !e.Has("from") {
		d.errorf(n, "%s: from is required (the sender's address)", what)
	} else if err := alert.CheckAddress(e.From); err != nil {
		d.errorAt(e.ValuePos("from"), "%s.from: %v", what, err)
	}
	if len(e.To) == 0 && !e.Failed("to") {
		d.errorf(n, "%s: to is required (the recipients' addresses)", what)
	}
	for _, to := range e.To {
		if err := alert.CheckAddress(to); err != nil {
			d.errorAt(e.ValuePos("to"), "%s.to: %v", what, err)
		}
	}
}

// AlertOn lists the conditions an alert target hears about.
type AlertOn struct {
	// Dead alerts when a delivery goes dead.
	Dead bool `json:"dead,omitzero" yaml:"dead,omitempty"`
	// BreakerOpen alerts when an upstream's breaker opens.
	BreakerOpen bool `json:"breaker_open,omitzero" yaml:"breaker_open,omitempty"`
	// OldestPending alerts when an upstream's oldest pending delivery is
	// older than this. Default: off.
	OldestPending Duration `json:"oldest_pending,omitzero" yaml:"oldest_pending,omitempty" positive:"true"`
	// Rejected alerts when a source refuses too large a share of its
	// requests. Default: off.
	Rejected *AlertRejected `json:"rejected,omitzero" yaml:"rejected,omitempty"`
	// ReconcileFailed alerts when a source's reconciliation run fails.
	ReconcileFailed bool `json:"reconcile_failed,omitzero" yaml:"reconcile_failed,omitempty"`
	// Missed alerts when a source whose provider never retries (GitHub,
	// Gitea, WooCommerce, …) and that does not reconcile was answered
	// 503: the events it sent then may be lost. The message says how to
	// recover them.
	Missed bool `json:"missed,omitzero" yaml:"missed,omitempty"`
	// StoreUnavailable alerts when the store could not take an event
	// (a full disk, an unwritable file, JetStream without its quorum). The
	// alert is posted to the target directly, not through the store, tried
	// again in memory until it is taken, and recorded once the store is
	// back.
	StoreUnavailable bool `json:"store_unavailable,omitzero" yaml:"store_unavailable,omitempty"`
	// StoreSize alerts when the store passes this share of
	// storage.max_size, in (0, 1], and resolves when it is back under;
	// it needs max_size. Default: off.
	StoreSize Ratio `json:"store_size,omitzero" yaml:"store_size,omitempty" example:"0.8"`
}

// AlertRejected is the rejected condition: at least Ratio of a source's
// requests over the last Window refused, once Min requests arrived in it.
type AlertRejected struct {
	Located
	// Ratio is the share of requests refused, in (0, 1]. Required.
	Ratio Ratio `json:"ratio" yaml:"ratio"`
	// Min is the requests a window needs before it can alert. Default 20.
	Min int `json:"min,omitzero" yaml:"min,omitempty" min:"1"`
	// Window is the time the ratio is taken over. Default 5m.
	Window Duration `json:"window,omitzero" yaml:"window,omitempty" positive:"true"`
}

func (a *Alert) setDefaults() { a.Format, a.Repeat = AlertFormatJSON, Duration(DefaultAlertRepeat) }

// alertName keeps alert names usable as upstream names in every store
// (JetStream subjects and consumer names included).
var alertName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

func (a *Alert) check(d *decoder, n *yaml.Node, what string) {
	if a.Name != "" && !alertName.MatchString(a.Name) {
		d.errorAt(a.ValuePos("name"), "%s.name: %q must be 1-32 letters, digits, - or _", what, a.Name)
	}
	if !slices.Contains(alert.Formats, a.Format) {
		d.errorAt(a.ValuePos("format"), "%s.format must be one of %s, got %q", what, strings.Join(alert.Formats, ", "), a.Format)
	}
	switch {
	case a.Format == alert.FormatPagerDuty && a.RoutingKey == "":
		d.errorf(n, "%s: format pagerduty needs routing_key (the integration's routing key)", what)
	case a.Format != alert.FormatPagerDuty && a.RoutingKey != "":
		d.errorAt(a.KeyPos("routing_key"), "%s: routing_key is for format pagerduty", what)
	}
	if a.Name != "" {
		what = fmt.Sprintf("alert %q", a.Name)
	}
	mail := a.To.URL.URL != nil && (a.To.URL.Scheme == "smtp" || a.To.URL.Scheme == "smtps")
	unresolved := a.To.URL.URL != nil && a.To.URL.Host == unresolvedHost // a check without secrets
	switch {
	case a.Format == alert.FormatEmail && a.To.URL.URL != nil && !mail && !unresolved:
		d.errorAt(a.ValuePos("to"), "%s.to: format email sends to a mail server, smtp://host:port or smtps://host:port", what)
	case a.Format != alert.FormatEmail && mail:
		d.errorAt(a.ValuePos("to"), "%s.to: an smtp URL needs format email", what)
	case a.Format == alert.FormatEmail && a.Email == nil:
		d.errorf(n, "%s: format email needs email: {from: …, to: [...]}", what)
	case a.Format != alert.FormatEmail && a.Email != nil:
		d.errorAt(a.KeyPos("email"), "%s: email is for format email", what)
	}
	if !a.Has("name") {
		d.errorf(n, "%s: name is required", what)
	}
	if !a.Has("to") {
		d.errorf(n, "%s: to is required (the URL alerts are posted to)", what)
	}
	if !a.On.isSet() && !a.Failed("on") {
		d.errorf(n, "%s: on must turn on at least one of dead, breaker_open, oldest_pending, rejected, reconcile_failed, missed, store_unavailable, store_size", what)
	}
}

func (o AlertOn) isSet() bool {
	return o.Dead || o.BreakerOpen || o.OldestPending > 0 || o.Rejected != nil || o.ReconcileFailed || o.Missed || o.StoreUnavailable || o.StoreSize > 0
}

func (r *AlertRejected) setDefaults() {
	r.Min, r.Window = DefaultRejectedMin, Duration(DefaultRejectedWindow)
}

func (r *AlertRejected) check(d *decoder, n *yaml.Node, what string) {
	if !r.Has("ratio") {
		d.errorf(n, "%s: ratio is required (the share of requests refused, such as 0.5)", what)
	}
}

// unresolvedHost stands for a credential URL's host in a check without
// secrets.
const unresolvedHost = "unresolved.invalid"

// SecretURL is a URL that is also a credential: noted when written out
// rather than as a placeholder.
type SecretURL struct{ URL }

func (u *SecretURL) decodeNode(d *decoder, n *yaml.Node, what string) {
	d.literal(n, what)
	if d.noSecrets && n.Kind == yaml.ScalarNode && hasPlaceholder(n.Value) {
		// Checked, not resolved: alerts are not sent from a check.
		if d.credential(n, what) != "" {
			u.URL.URL = &url.URL{Scheme: "https", Host: unresolvedHost, Path: "/"}
		}
		return
	}
	raw := d.expanded(n, what)
	// A mail server, for format email (Alert.check pairs them).
	if strings.HasPrefix(raw, "smtp://") || strings.HasPrefix(raw, "smtps://") {
		parsed, err := url.Parse(raw)
		switch {
		case err != nil:
			d.errorf(n, "%s is not a URL", what)
		case parsed.Hostname() == "":
			d.errorf(n, "%s: the URL has no host", what)
		case parsed.Path != "" && parsed.Path != "/" || parsed.RawQuery != "":
			d.errorf(n, "%s: a mail server's URL is smtp://[user:password@]host[:port], without a path or query", what)
		default:
			u.URL.URL = parsed
		}
		return
	}
	u.URL.parse(d, n, what, raw)
}

// Alerts are the alert targets in file order; a name is used once.
type Alerts []*Alert

func (l *Alerts) decodeNode(d *decoder, n *yaml.Node, what string) {
	*l = nil
	seen := map[string]bool{}
	for i, item := range d.listNodes(n, what) {
		a := &Alert{}
		d.decode(item, reflect.ValueOf(a), fmt.Sprintf("%s[%d]", what, i))
		if a.Name == "" {
			continue
		}
		if seen[a.Name] {
			d.errorf(item, "alert %q is defined twice", a.Name)
			continue
		}
		seen[a.Name] = true
		*l = append(*l, a)
	}
}

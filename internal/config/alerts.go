package config

import (
	"fmt"
	"maps"
	"net/url"
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

// Alert is one alert target (alerts:): where alerts go, in which format,
// on which conditions, and how often the same one may repeat.
type Alert struct {
	// Name names the target; its deliveries go to the upstream
	// AlertUpstreamPrefix+Name.
	Name string
	// URL is where alerts are POSTed (to:, placeholders expanded).
	URL *url.URL
	// Format is AlertFormatJSON or AlertFormatSlack.
	Format string
	// On says which conditions raise an alert.
	On AlertOn
	// Repeat is the least time between two alerts of the same kind about
	// the same source or upstream.
	Repeat time.Duration
	Pos    Pos
}

// AlertOn lists the conditions an alert target hears about.
type AlertOn struct {
	// Dead raises an alert when a delivery goes dead.
	Dead bool
	// BreakerOpen raises an alert when an upstream's breaker opens.
	BreakerOpen bool
	// OldestPending, when set, raises an alert when an upstream's oldest
	// pending delivery is older than this.
	OldestPending time.Duration
	// Rejected, when set, raises an alert when a source refuses too large a
	// share of its requests.
	Rejected *AlertRejected
}

// AlertRejected is the rejected condition: at least Ratio of a source's
// requests over the last Window refused, once Min requests arrived in it.
type AlertRejected struct {
	Ratio  float64
	Min    int
	Window time.Duration
}

// alertName keeps alert names usable as upstream names in every store
// (JetStream subjects and consumer names included).
var alertName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

func (p *parser) alerts(n *yaml.Node) {
	seen := map[string]bool{}
	for i, item := range p.listNodes(n, "alerts") {
		a := p.alert(item, fmt.Sprintf("alerts[%d]", i))
		if a.Name == "" {
			continue
		}
		if seen[a.Name] {
			p.errorf(item, "alert %q is defined twice", a.Name)
			continue
		}
		seen[a.Name] = true
		p.cfg.Alerts = append(p.cfg.Alerts, a)
	}
}

func (p *parser) alert(n *yaml.Node, what string) *Alert {
	a := &Alert{Pos: pos(n), Format: AlertFormatJSON, Repeat: DefaultAlertRepeat}
	onErrs := -1 // errors before on: was read; -1 while it is not
	p.fields(n, what, handlers{
		"name": func(_, v *yaml.Node) {
			a.Name = p.str(v, what+".name")
			if a.Name != "" && !alertName.MatchString(a.Name) {
				p.errorf(v, "%s.name: %q must be 1-32 letters, digits, - or _", what, a.Name)
			}
		},
		"to": func(_, v *yaml.Node) { a.URL = p.alertURL(v, what+".to"); p.literal(v, what+".to", "") },
		"format": func(_, v *yaml.Node) {
			a.Format = p.str(v, what+".format")
			if a.Format != AlertFormatJSON && a.Format != AlertFormatSlack {
				p.errorf(v, "%s.format must be slack or json, got %q", what, a.Format)
			}
		},
		"on": func(_, v *yaml.Node) {
			onErrs = len(p.errs)
			a.On = p.alertOn(v, what+".on")
			if len(p.errs) > onErrs {
				onErrs = -2 // reported already
			}
		},
		"repeat": func(_, v *yaml.Node) { a.Repeat = p.positive(v, what+".repeat") },
	})
	if a.Name != "" {
		what = fmt.Sprintf("alert %q", a.Name)
	}
	if n.Kind != yaml.MappingNode {
		return a
	}
	if field(n, "name") == nil {
		p.errorf(n, "%s: name is required", what)
	}
	if field(n, "to") == nil {
		p.errorf(n, "%s: to is required (the URL alerts are posted to)", what)
	}
	if onErrs != -2 && a.On == (AlertOn{}) {
		p.errorf(n, "%s: on must turn on at least one of dead, breaker_open, oldest_pending, rejected", what)
	}
	return a
}

// alertURL reads to: after placeholder expansion, an absolute http(s) URL.
func (p *parser) alertURL(n *yaml.Node, what string) *url.URL {
	raw := p.expanded(n, what)
	if raw == "" {
		p.errorf(n, "%s is empty (an unset placeholder?)", what)
		return nil
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// The URL may carry a token (a Slack webhook's path): name the
		// problem, not the value.
		p.errorf(n, "%s is not a URL", what)
	case u.Scheme != "http" && u.Scheme != "https":
		p.errorf(n, "%s: scheme must be http or https", what)
	case u.Host == "":
		p.errorf(n, "%s: the URL has no host", what)
	default:
		return u
	}
	return nil
}

func (p *parser) alertOn(n *yaml.Node, what string) AlertOn {
	var on AlertOn
	p.fields(n, what, handlers{
		"dead":           func(_, v *yaml.Node) { on.Dead = p.boolean(v, what+".dead") },
		"breaker_open":   func(_, v *yaml.Node) { on.BreakerOpen = p.boolean(v, what+".breaker_open") },
		"oldest_pending": func(_, v *yaml.Node) { on.OldestPending = p.positive(v, what+".oldest_pending") },
		"rejected":       func(_, v *yaml.Node) { on.Rejected = p.alertRejected(v, what+".rejected") },
	})
	return on
}

func (p *parser) alertRejected(n *yaml.Node, what string) *AlertRejected {
	r := &AlertRejected{Min: DefaultRejectedMin, Window: DefaultRejectedWindow}
	p.fields(n, what, handlers{
		"ratio": func(_, v *yaml.Node) {
			if v.Kind != yaml.ScalarNode || v.Decode(&r.Ratio) != nil || r.Ratio <= 0 || r.Ratio > 1 {
				p.errorf(v, "%s.ratio must be a number in (0, 1]", what)
			}
		},
		"min":    func(_, v *yaml.Node) { r.Min = p.integer(v, what+".min", 1) },
		"window": func(_, v *yaml.Node) { r.Window = p.positive(v, what+".window") },
	})
	if n.Kind == yaml.MappingNode && field(n, "ratio") == nil {
		p.errorf(n, "%s: ratio is required (the share of requests refused, such as 0.5)", what)
	}
	return r
}

// positive reads a duration that must be more than zero.
func (p *parser) positive(n *yaml.Node, what string) time.Duration {
	errs := len(p.errs)
	d := p.duration(n, what)
	if d == 0 && len(p.errs) == errs {
		p.errorf(n, "%s must be more than zero", what)
	}
	return d
}

// checkReserved refuses the names alerts use for themselves.
func (p *parser) checkReserved() {
	for _, src := range p.cfg.Sources {
		if src.Name == AlertSource {
			p.errorAt(src.Pos, "source %s: the name is reserved for the gateway's alerts", src.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.cfg.Upstreams)) {
		if up := p.cfg.Upstreams[name]; strings.HasPrefix(name, AlertUpstreamPrefix) {
			p.errorAt(up.Pos, "upstream %s: names starting with %q are reserved for alert targets", name, AlertUpstreamPrefix)
		}
	}
}

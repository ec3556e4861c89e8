// Package alert raises operators' alerts: a dead delivery, an upstream's
// breaker opening, an upstream whose oldest pending delivery is too old, a
// source refusing too large a share of its requests.
//
// An alert is not sent from where it is noticed. It is stored as an event of
// the reserved source Source, whose body is the alert as its target wants it
// (JSON or Slack), with one delivery to the target's internal upstream
// (Upstream(name)). The delivery engine then sends it like any other event:
// retries, the dead state, replay and the admin listing apply unchanged, and
// no request or delivery path waits for it. An alert carries ids, names and
// reasons only: never a body, a header, a secret or a signature.
package alert

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Source is the reserved source alerts are stored under; no configuration
// may name a source so.
const Source = "hookgate-alerts"

// UpstreamPrefix starts the name of every alert target's internal upstream;
// no configuration may name an upstream so.
const UpstreamPrefix = "alert:"

// Upstream names the internal upstream that delivers the alerts of target name.
func Upstream(name string) string { return UpstreamPrefix + name }

// Internal reports whether an upstream is an alert target's: its own dead
// deliveries and breaker raise no alerts, so a broken alert target cannot
// feed itself.
func Internal(upstream string) bool { return strings.HasPrefix(upstream, UpstreamPrefix) }

// Kind is what an alert is about.
type Kind string

// Alert kinds, as the configuration's on: keys name them.
const (
	KindDead          Kind = "dead"
	KindBreakerOpen   Kind = "breaker_open"
	KindOldestPending Kind = "oldest_pending"
	KindRejected      Kind = "rejected"
	// KindReconcileFailed is a source's reconciliation run that failed.
	KindReconcileFailed Kind = "reconcile_failed"
	// KindMissed is a source whose provider never retries, answered 503
	// and not reconciling: the events it sent then may be lost.
	KindMissed Kind = "missed"
	// KindStoreSize is a store past a share of its max_size.
	KindStoreSize Kind = "store_size"
	// KindStoreUnavailable is a store that could not take an event: it is
	// sent directly, since the store it would be written to is the one
	// that failed.
	KindStoreUnavailable Kind = "store_unavailable"
)

// Formats of an alert's body.
const (
	FormatJSON  = "json"
	FormatSlack = "slack"
)

// Rule is one alert target as it runs: its name, format, conditions and
// how often the same alert may repeat.
type Rule struct {
	// Name names the target; its alerts go to Upstream(Name).
	Name string
	// Format is FormatJSON or FormatSlack.
	Format string
	// Dead and BreakerOpen turn those conditions on.
	Dead, BreakerOpen bool
	// OldestPending, when set, is the age past which an upstream's oldest
	// pending delivery raises an alert.
	OldestPending time.Duration
	// Rejected, when set, is the refused share of a source's requests that
	// raises an alert.
	Rejected *Rejected
	// ReconcileFailed turns on alerts for failed reconciliation runs.
	ReconcileFailed bool
	// Missed, when set, names the sources whose provider never retries
	// and that do not reconcile, each with how to recover its events; a
	// 503 to one of them raises a missed alert.
	Missed map[string]string
	// StoreUnavailable turns on store_unavailable alerts, which go to URL
	// directly rather than through the store.
	StoreUnavailable bool
	// StoreSize, when set, is the share of the store's max_size past which
	// a store_size alert is raised.
	StoreSize float64
	// URL is where the target's alerts are posted, for those sent
	// directly; Headers are set on each of those requests.
	URL     string
	Headers map[string]string
	// RoutingKey is the PagerDuty integration's routing key, for
	// FormatPagerDuty.
	RoutingKey string
	// InspectorURL, when set, is the inspector's address as the target's
	// readers reach it: every alert links to its event there.
	InspectorURL string
	// Repeat is the least time between two alerts of the same kind about
	// the same source and upstream.
	Repeat time.Duration
	// Mailer sends the alerts of FormatEmail.
	Mailer *Mailer
}

// Rejected is the rejected condition: at least Ratio of a source's requests
// in the last Window refused, once at least Min requests arrived in it.
type Rejected struct {
	Ratio  float64
	Min    int
	Window time.Duration
}

// Alert is one alert, as the json format posts it.
type Alert struct {
	// ID names the condition (its kind, source and upstream), the same for
	// its firing and its resolved message, so a receiver can pair them.
	ID       string `json:"id"`
	Kind     Kind   `json:"alert"`
	State    string `json:"state"`
	Source   string `json:"source,omitempty"`
	Upstream string `json:"upstream,omitempty"`
	EventID  string `json:"event_id,omitempty"`
	Message  string `json:"message"`
	// Link is the inspector's page for the event (#/events/<id>), or the
	// inspector, when the target names its address.
	Link string    `json:"link,omitempty"`
	At   time.Time `json:"at"`
}

// States of an alert.
const (
	StateFiring   = "firing"
	StateResolved = "resolved"
)

// Conditions are the kinds that can clear, and send a resolved message
// when they do: a dead delivery or a missed event is a fact, not a
// condition.
var conditions = map[Kind]bool{KindBreakerOpen: true, KindOldestPending: true, KindRejected: true, KindReconcileFailed: true, KindStoreUnavailable: true, KindStoreSize: true}

// linked gives the alert its inspector link for rule r.
func (a Alert) linked(r Rule) Alert {
	if r.InspectorURL == "" {
		return a
	}
	a.Link = strings.TrimSuffix(r.InspectorURL, "/") + "/"
	if a.EventID != "" {
		a.Link += "#/events/" + a.EventID
	}
	return a
}

// stamp gives the alert its id and state.
func (a Alert) stamp(state string) Alert {
	sum := sha256.Sum256([]byte(string(a.Kind) + "\x00" + a.Source + "\x00" + a.Upstream))
	a.ID, a.State = hex.EncodeToString(sum[:8]), state
	return a
}

// Body is the alert as format posts it: the Alert itself for json, a
// readable one-liner in {"text": …} for slack.
func (a Alert) Body(format string) []byte {
	var v any = a
	if format == FormatSlack {
		prefix := "Hookgate "
		if a.State == StateResolved {
			prefix = "Hookgate resolved, "
		}
		text := prefix + strings.ReplaceAll(string(a.Kind), "_", " ") + ": " + a.Message
		if a.Link != "" {
			text += " <" + a.Link + "|inspect>"
		}
		v = struct {
			Text string `json:"text"`
		}{text}
	}
	b, _ := json.Marshal(v) // strings and a time: it cannot fail
	return b
}

// key is what repeat suppression tells alerts apart by.
func (a Alert) key(rule string) string {
	return rule + "\x00" + string(a.Kind) + "\x00" + a.Source + "\x00" + a.Upstream
}

func deadAlert(upstream, source, eventID, reason string, at time.Time) Alert {
	msg := fmt.Sprintf("delivery of event %s from source %s to upstream %s is dead", eventID, source, upstream)
	if reason != "" {
		msg += ": " + reason
	}
	return Alert{Kind: KindDead, Source: source, Upstream: upstream, EventID: eventID, Message: msg, At: at}
}

func breakerAlert(upstream string, at time.Time) Alert {
	return Alert{Kind: KindBreakerOpen, Upstream: upstream, At: at,
		Message: fmt.Sprintf("the circuit breaker of upstream %s opened: its deliveries wait until it recovers", upstream)}
}

func oldestAlert(upstream string, age, limit time.Duration, at time.Time) Alert {
	return Alert{Kind: KindOldestPending, Upstream: upstream, At: at,
		Message: fmt.Sprintf("the oldest pending delivery to upstream %s is %s old (alert past %s)", upstream, age.Round(time.Second), limit)}
}

func rejectedAlert(source string, refused, total int, window time.Duration, at time.Time) Alert {
	return Alert{Kind: KindRejected, Source: source, At: at,
		Message: fmt.Sprintf("source %s refused %d of %d requests (%.0f%%) in the last %s", source, refused, total, 100*float64(refused)/float64(total), window)}
}

func reconcileFailedAlert(source, reason string, at time.Time) Alert {
	return Alert{Kind: KindReconcileFailed, Source: source, At: at,
		Message: fmt.Sprintf("reconciling source %s with its provider failed: %s; its cursor stays, so the next run lists the same events again", source, reason)}
}

func missedAlert(source, recover string, at time.Time) Alert {
	msg := fmt.Sprintf("source %s answered 503 (the store could not take the event) and its provider does not retry: events it sent then may be lost", source)
	if recover != "" {
		msg += "; to recover them: " + recover
	}
	return Alert{Kind: KindMissed, Source: source, At: at, Message: msg}
}

// storeUnavailableAlert is one per store (no Source, so repeat holds back
// the other sources' refusals of the same outage); its message names the
// source whose event was refused first.
func storeUnavailableAlert(store, source string, at time.Time) Alert {
	return Alert{Kind: KindStoreUnavailable, At: at,
		Message: fmt.Sprintf("store %s is unavailable: it could not take an event of source %s, which was answered 503 (providers that retry send it again); check its disk and the gateway's log", store, source)}
}

func breakerClosedAlert(upstream string, at time.Time) Alert {
	return Alert{Kind: KindBreakerOpen, Upstream: upstream, At: at,
		Message: fmt.Sprintf("the circuit breaker of upstream %s closed: a probe succeeded and deliveries go on", upstream)}
}

func oldestClearedAlert(upstream string, limit time.Duration, at time.Time) Alert {
	return Alert{Kind: KindOldestPending, Upstream: upstream, At: at,
		Message: fmt.Sprintf("the oldest pending delivery to upstream %s is back under %s", upstream, limit)}
}

func rejectedClearedAlert(source string, window time.Duration, at time.Time) Alert {
	return Alert{Kind: KindRejected, Source: source, At: at,
		Message: fmt.Sprintf("source %s refuses few of its requests again over the last %s", source, window)}
}

func reconcileRecoveredAlert(source string, at time.Time) Alert {
	return Alert{Kind: KindReconcileFailed, Source: source, At: at,
		Message: fmt.Sprintf("reconciling source %s succeeded again", source)}
}

func storeAvailableAlert(store string, at time.Time) Alert {
	return Alert{Kind: KindStoreUnavailable, At: at,
		Message: fmt.Sprintf("store %s takes events again", store)}
}

func storeSizeAlert(store string, used, limit int64, share float64, at time.Time) Alert {
	return Alert{Kind: KindStoreSize, At: at,
		Message: fmt.Sprintf("store %s takes %d MiB, %.0f%% of its max_size of %d MiB (alert past %.0f%%): past max_size new events are answered 503", store, used>>20, 100*float64(used)/float64(limit), limit>>20, 100*share)}
}

func storeSizeClearedAlert(store string, share float64, at time.Time) Alert {
	return Alert{Kind: KindStoreSize, At: at, Message: fmt.Sprintf("store %s is back under %.0f%% of its max_size", store, 100*share)}
}

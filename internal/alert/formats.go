package alert

import (
	"encoding/json"
	"net/url"
	"strings"
)

// More formats of an alert's body, each the payload its service documents.
const (
	// FormatPagerDuty is PagerDuty's Events API v2 (POST
	// https://events.pagerduty.com/v2/enqueue): a trigger, and a resolve
	// with the same dedup_key (the alert's id) that closes the incident.
	FormatPagerDuty = "pagerduty"
	// FormatOpsgenie is Opsgenie's Alert API (to: https://api.opsgenie.com,
	// or api.eu.opsgenie.com; headers: {Authorization: "GenieKey …"}):
	// POST /v2/alerts with the id as alias, and POST
	// /v2/alerts/{alias}/close?identifierType=alias to resolve.
	FormatOpsgenie = "opsgenie"
	// FormatTeams is a Microsoft Teams Workflows webhook: a message with
	// one Adaptive Card.
	FormatTeams = "teams"
)

// Formats lists every format an alert target may name.
var Formats = []string{FormatJSON, FormatSlack, FormatPagerDuty, FormatOpsgenie, FormatTeams, FormatEmail}

// severity is how urgent an alert kind is, for the services that rank.
func (a Alert) severity() string {
	switch a.Kind {
	case KindStoreUnavailable, KindMissed:
		return "critical"
	case KindDead, KindBreakerOpen, KindReconcileFailed:
		return "error"
	}
	return "warning"
}

func (a Alert) title() string {
	t := "Hookgate " + strings.ReplaceAll(string(a.Kind), "_", " ")
	if a.State == StateResolved {
		t = "Hookgate resolved, " + strings.ReplaceAll(string(a.Kind), "_", " ")
	}
	return t
}

// details are the alert's fields for a service's free-form part.
func (a Alert) details() map[string]string {
	d := map[string]string{"alert": string(a.Kind), "state": a.State}
	for k, v := range map[string]string{"source": a.Source, "upstream": a.Upstream, "event_id": a.EventID, "link": a.Link} {
		if v != "" {
			d[k] = v
		}
	}
	return d
}

// For is the alert as rule r's target wants it: the body, and the path
// and query to post it to below the target's URL (Opsgenie closes an
// alert at its own path), empty for the others.
func (a Alert) For(r Rule) (body []byte, path, query string) {
	var v any
	switch r.Format {
	case FormatPagerDuty:
		if a.State == StateResolved {
			v = map[string]any{"routing_key": r.RoutingKey, "event_action": "resolve", "dedup_key": a.ID}
			break
		}
		component := a.Upstream
		if component == "" {
			component = a.Source
		}
		event := map[string]any{"routing_key": r.RoutingKey, "event_action": "trigger", "dedup_key": a.ID, "payload": map[string]any{
			"summary": truncate(a.title()+": "+a.Message, 1024), "source": "hookgate", "severity": a.severity(),
			"timestamp": a.At.UTC().Format("2006-01-02T15:04:05.000Z"), "component": component, "class": string(a.Kind), "custom_details": a.details(),
		}}
		if a.Link != "" {
			event["links"] = []map[string]string{{"href": a.Link, "text": "Hookgate inspector"}}
		}
		v = event
	case FormatOpsgenie:
		if a.State == StateResolved {
			return mustJSON(map[string]string{"source": "hookgate", "note": a.Message}), "/v2/alerts/" + url.PathEscape(a.ID) + "/close", "identifierType=alias"
		}
		priority := map[string]string{"critical": "P1", "error": "P2", "warning": "P3"}[a.severity()]
		v = map[string]any{"message": truncate(a.title()+": "+a.Message, 130), "alias": a.ID, "description": truncate(a.Message, 15000),
			"priority": priority, "source": "hookgate", "tags": []string{"hookgate", string(a.Kind)}, "details": a.details()}
		return mustJSON(v), "/v2/alerts", ""
	case FormatEmail:
		if r.Mailer != nil {
			return r.Mailer.message(a), "", ""
		}
	case FormatTeams:
		color := "attention"
		if a.State == StateResolved {
			color = "good"
		}
		v = map[string]any{"type": "message", "attachments": []map[string]any{{
			"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": nil,
			"content": map[string]any{
				"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard", "version": "1.4",
				"body": []map[string]any{
					{"type": "TextBlock", "text": a.title(), "weight": "Bolder", "size": "Medium", "color": color, "wrap": true},
					{"type": "TextBlock", "text": a.Message, "wrap": true},
				},
				"actions": teamsActions(a),
			},
		}}}
	default:
		return a.Body(r.Format), "", ""
	}
	return mustJSON(v), "", ""
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v) // maps of strings: it cannot fail
	return b
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func teamsActions(a Alert) []map[string]string {
	if a.Link == "" {
		return []map[string]string{}
	}
	return []map[string]string{{"type": "Action.OpenUrl", "title": "Inspect", "url": a.Link}}
}

package verify

import "time"

// Providers that send with a shared scheme: Standard Webhooks or Svix
// under the provider's name, with the provider's own dedup key and
// delivery facts where they differ.

// svixRetries is Svix's documented schedule, which every Svix sender keeps.
var svixRetries = Delivery{
	Retries:     "immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h",
	RetryWindow: Span(27*time.Hour + 35*time.Minute + 5*time.Second),
	Timeout:     Span(15 * time.Second),
	Redeliver:   "Svix app portal: Resend, Recover failed messages",
	Docs:        "https://docs.svix.com/retries",
}

// alias is a shared scheme's preset under a provider's name.
func alias(p Preset, delivery Delivery) Preset {
	p.Delivery = delivery
	return p
}

func init() {
	register(
		alias(standardWebhooks("anthropic", "Anthropic: Standard Webhooks (webhook-id/-timestamp/-signature v1,…), HMAC-SHA256 base64, whsec_ key", "webhook",
			"https://platform.claude.com/docs/en/build-with-claude/webhooks", "sdk: @anthropic-ai/sdk@1.15.0"),
			Delivery{Retries: "up to 3 attempts with jittered backoff of 5 s to 2 min, then dropped", Docs: "https://platform.claude.com/docs/en/build-with-claude/webhooks"}),
		alias(standardWebhooks("incident-io", "incident.io: Standard Webhooks through Svix (webhook-id/-timestamp/-signature v1,…), HMAC-SHA256 base64, whsec_ key", "webhook",
			"https://docs.incident.io/api-reference/webhooks", "sdk: svix@2.5.0"),
			Delivery{Retries: "exponential backoff for 24 h; the endpoint is disabled after 5 days of failures", RetryWindow: Span(24 * time.Hour),
				Redeliver: "Svix app portal: Resend", Docs: "https://docs.incident.io/api-reference/webhooks"}),
		alias(standardWebhooks("brex", "Brex: Webhook-Id/-Timestamp/-Signature v1,… over id.timestamp.body, HMAC-SHA256 base64; secrets from /v1/webhooks/secrets", "webhook",
			"https://developer.brex.com/docs/webhooks", "docs"),
			Delivery{Docs: "https://developer.brex.com/docs/webhooks"}),
		alias(svixProvider("stytch", "Stytch", "https://stytch.com/docs/b2b/guides/webhooks", "sdk: svix@2.5.0"), svixRetries),
		polarPreset("polar", "Polar: Standard Webhooks (webhook-id/-timestamp/-signature v1,…), HMAC-SHA256 base64; whsec_ secrets from before 2026-09-08 MAC with their raw bytes",
			"https://polar.sh/docs/integrate/webhooks/delivery", "sdk: standardwebhooks@1.1.1",
			Delivery{Retries: "up to 10 attempts, exponential backoff capped at 20 min; disabled after 10 failures in a row", Timeout: Span(10 * time.Second),
				Redeliver: "dashboard: Redeliver", Docs: "https://polar.sh/docs/integrate/webhooks/delivery"}),
		polarPreset("whop", "Whop: Standard Webhooks (webhook-id/-timestamp/-signature v1,…), HMAC-SHA256 base64; the secret MACs as written or decoded",
			"https://docs.whop.com/developer/guides/webhooks", "docs", Delivery{Docs: "https://docs.whop.com/developer/guides/webhooks"}),
	)
}

// polarPreset is Standard Webhooks with a secret that may be used as its
// raw bytes (whsec-or-raw): Polar's older secrets and Whop's.
func polarPreset(name, description, docs, checked string, delivery Delivery) Preset {
	p := standardWebhooks(name, description, "webhook", docs, checked)
	p.Spec.SecretEncoding = "whsec-or-raw"
	p.Delivery = delivery
	return p
}

package verify

import (
	"errors"
	"slices"
	"time"
)

// Providers of developer platforms and clouds: identity, queues, CI,
// hosting, feature flags, AI APIs, and the clouds' own push deliveries.

// googleJWT is a Pub/Sub push subscription's OIDC token: RS256 from
// Google's keys, for the audience the subscription names (by default the
// push URL), issued to a service account the source lists in secrets.
var googleJWT = bearerConfig{
	header: "Authorization", prefix: "Bearer ", alg: "RS256", jwksURL: "https://www.googleapis.com/oauth2/v3/certs",
	issuers: []string{"accounts.google.com", "https://accounts.google.com"}, audienceOption: "audience", audienceFromURL: true, requireExp: true, maxExpiry: 24 * time.Hour,
	check: func(claims map[string]any, secrets []string, _ Options) error {
		if verified, _ := claims["email_verified"].(bool); !verified || !slices.Contains(secrets, claimString(claims, "email")) {
			return errors.New("the token is not for a listed service account")
		}
		return nil
	},
	sign: func(msg Message, subject string) map[string]any {
		return map[string]any{"iss": "https://accounts.google.com", "aud": msg.URL, "email": subject, "email_verified": true, "sub": "1" + randomHex(10),
			"azp": "1" + randomHex(10), "iat": msg.Time.Unix(), "exp": msg.Time.Add(time.Hour).Unix()}
	},
}

// eventGridApp is the Entra ID application Event Grid delivers as.
const eventGridApp = "4962773b-9cdb-44cf-a8bf-237846a00ab7"

// entraJWT is an Event Grid delivery's Entra ID token: RS256 from the
// tenant's keys, for the audience the source names, issued to Event Grid's
// application. Secrets are tenant ids.
var entraJWT = bearerConfig{
	header: "Authorization", prefix: "Bearer ", alg: "RS256", audienceOption: "audience", requireExp: true, maxExpiry: 24 * time.Hour, tenantClaim: "tid",
	jwksFor: func(tenant string) string {
		return "https://login.microsoftonline.com/" + tenant + "/discovery/v2.0/keys"
	},
	issuersFor: func(tenant string) []string {
		return []string{"https://sts.windows.net/" + tenant + "/", "https://login.microsoftonline.com/" + tenant + "/v2.0"}
	},
	check: func(claims map[string]any, _ []string, _ Options) error {
		if claimString(claims, "appid") != eventGridApp && claimString(claims, "azp") != eventGridApp {
			return errors.New("the token is not Event Grid's")
		}
		return nil
	},
	sign: func(msg Message, tenant string) map[string]any {
		return map[string]any{"iss": "https://sts.windows.net/" + tenant + "/", "aud": testAudience, "tid": tenant, "appid": eventGridApp,
			"roles": []string{"AzureEventGridSecureWebhookSubscriber"}, "nbf": msg.Time.Unix(), "iat": msg.Time.Unix(), "exp": msg.Time.Add(time.Hour).Unix()}
	},
}

// qstashJWT is QStash's Upstash-Signature: HS256 with the current or next
// signing key, for the URL it delivers to, with the body's SHA-256.
var qstashJWT = bearerConfig{
	header: "Upstash-Signature", alg: "HS256", issuers: []string{"Upstash"}, subjectIsURL: true, requireExp: true,
	bodyClaim: "body", bodyEncoding: "base64url",
	sign: func(msg Message, _ string) map[string]any {
		return map[string]any{"iss": "Upstash", "sub": msg.URL, "exp": msg.Time.Add(5 * time.Minute).Unix(), "nbf": msg.Time.Unix(), "iat": msg.Time.Unix(),
			"jti": "jwt_" + randomHex(10), "body": bodyDigest(msg.Body, "base64url")}
	},
}

// netlifyJWT is Netlify's X-Webhook-Signature: HS256 with the JWS secret,
// iss netlify, with the body's hex SHA-256. It carries no time.
var netlifyJWT = bearerConfig{
	header: "X-Webhook-Signature", alg: "HS256", issuers: []string{"netlify"}, bodyClaim: "sha256", bodyEncoding: "hex",
	sign: func(msg Message, _ string) map[string]any {
		return map[string]any{"iss": "netlify", "sha256": sha256Hex(msg.Body)}
	},
}

func init() {
	register(
		Preset{
			Name:        "workos",
			Checked:     "sdk: @workos-inc/node@12.3.0",
			Description: "WorkOS: WorkOS-Signature t=…, v1=… over t.body, HMAC-SHA256 hex, millisecond timestamp",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "WorkOS-Signature", SignatureKey: "v1", TimestampKey: "t", Encoding: "hex",
				Content: "{timestamp}.{body}", TimestampUnit: "ms", Tolerance: 3 * time.Minute,
			},
			Docs:  "https://workos.com/docs/events/data-syncing/webhooks",
			Dedup: Dedup{Key: `body.id`},
			Delivery: Delivery{Retries: "up to 6 retries with exponential backoff over 3 days", RetryWindow: Span(72 * time.Hour),
				Redeliver: "dashboard: Retry", IPRanges: []string{"workos"}, Docs: "https://workos.com/docs/events/data-syncing/webhooks"},
		},
		Preset{
			Name:        "qstash",
			Checked:     "sdk: @upstash/qstash@2.12.0",
			Description: "Upstash QStash: Upstash-Signature JWT HS256 (current or next signing key) for the delivery URL, with the body's SHA-256 (set public_url)",
			Docs:        "https://upstash.com/docs/qstash/howto/signature",
			Bespoke: Bespoke{
				Build:          qstashJWT.build,
				Describe:       "JWT HS256 in Upstash-Signature, iss Upstash, sub = {url}, exp and nbf, body = base64url sha256 of the body",
				Headers:        []string{"Upstash-Signature"},
				SignsFreshness: true,
				SignsURL:       true,
				Signer:         &bearerJWT{bearerConfig: qstashJWT},
			},
			Dedup: Dedup{Key: `headers["upstash-message-id"]`},
			Keys:  Keys{Describe: "signing keys (current and next)"},
			Trust: Trust{Unsigned: []string{`Upstash-Message-Id: not in the token; a capture replayed with another id inside the token's 5 minutes is one more delivery of a genuine message`}},
			Delivery: Delivery{Retries: "3 retries by default, after e^(2.5n) s: 12 s, 2.5 min, 30 min, then the DLQ", RetryWindow: Span(33 * time.Minute),
				Redeliver: "console or API: retry from the DLQ", Docs: "https://upstash.com/docs/qstash/features/retry"},
		},
		alias(standardWebhooks("replicate", "Replicate: Standard Webhooks (webhook-id/-timestamp/-signature v1,…), HMAC-SHA256 base64, whsec_ key", "webhook",
			"https://replicate.com/docs/topics/webhooks/verify-webhook", "sdk: replicate@1.4.0"),
			Delivery{Retries: "only terminal events (succeeded, failed, canceled), a few times with exponential backoff", Docs: "https://replicate.com/docs/topics/webhooks/receive-webhook"}),
		openAI(),
		Preset{
			Name:        "heroku",
			Checked:     "docs",
			Description: "Heroku app webhooks: Heroku-Webhook-Hmac-SHA256 over the body, HMAC-SHA256 base64",
			Spec:        bodyHMAC("hmac-sha256", "Heroku-Webhook-Hmac-SHA256", "", "base64"),
			Docs:        "https://devcenter.heroku.com/articles/app-webhooks#securing-webhook-requests",
			// Each attempt's body carries its own attempt id, so the event
			// id, not the body's digest, names one.
			Dedup:    Dedup{Key: `body.id`},
			Delivery: Delivery{Retries: "sync level: retried for up to 72 h; notify level: one attempt", RetryWindow: Span(72 * time.Hour), Docs: "https://devcenter.heroku.com/articles/app-webhooks"},
		},
		Preset{
			Name:        "circleci",
			Checked:     "vector",
			Description: "CircleCI: circleci-signature v1=… over the body, HMAC-SHA256 hex",
			Spec:        Spec{Algorithm: "hmac-sha256", Header: "circleci-signature", SignatureKey: "v1", Encoding: "hex"},
			Docs:        "https://circleci.com/docs/webhooks/#validate-webhooks",
			Dedup:       Dedup{Key: `body.id`},
			Delivery:    Delivery{Retries: "retried later when unacknowledged", Timeout: Span(10 * time.Second), Docs: "https://circleci.com/docs/webhooks/"},
		},
		Preset{
			Name:        "buildkite",
			Checked:     "docs",
			Description: "Buildkite: X-Buildkite-Signature timestamp=…,signature=… over timestamp.body, HMAC-SHA256 hex",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "X-Buildkite-Signature", SignatureKey: "signature", TimestampKey: "timestamp", Encoding: "hex",
				Content: "{timestamp}.{body}", Tolerance: 5 * time.Minute,
			},
			Docs:     "https://buildkite.com/docs/apis/webhooks/pipelines#webhook-signature",
			Dedup:    Dedup{Key: `body.event + ":" + (body.build?.id ?? body.job?.id ?? body.agent?.id ?? "") + ":" + (body.build?.state ?? body.job?.state ?? body.agent?.connection_state ?? "")`},
			Delivery: Delivery{Retries: "not documented; the last 20 requests are kept", Docs: "https://buildkite.com/docs/apis/webhooks/pipelines"},
		},
		Preset{
			Name:        "gitea",
			Checked:     "docs",
			Description: "Gitea (and Forgejo): X-Gitea-Signature over the body, HMAC-SHA256 hex",
			Spec:        bodyHMAC("hmac-sha256", "X-Gitea-Signature", "", "hex"),
			Docs:        "https://docs.gitea.com/usage/webhooks",
			Dedup:       Dedup{Key: `headers["x-gitea-delivery"]`},
			Trust:       Trust{Unsigned: []string{`X-Gitea-Delivery: not signed; the body's digest is a second key (Replayable), which also merges a manual redelivery (a new id, the same body)`}},
			Delivery:    Delivery{Retries: "none: a failed delivery is recorded", Timeout: Span(5 * time.Second), Redeliver: "UI: Redeliver", Docs: "https://docs.gitea.com/usage/webhooks"},
		},
		Preset{
			Name:        "netlify",
			Checked:     "docs",
			Description: "Netlify deploy notifications: X-Webhook-Signature JWS HS256, iss netlify, whose sha256 claim is the body's hex SHA-256",
			Docs:        "https://docs.netlify.com/deploy/deploy-notifications/#payload-signature",
			Bespoke: Bespoke{
				Build:    netlifyJWT.build,
				Describe: "JWS HS256 in X-Webhook-Signature, iss netlify, sha256 = hex sha256 of the body",
				Headers:  []string{"X-Webhook-Signature"},
				Signer:   &bearerJWT{bearerConfig: netlifyJWT},
			},
			// The body's id is the deploy's, shared by its events.
			Dedup:    Dedup{Key: `body.id + ":" + body.state + ":" + (body.updated_at ?? "")`},
			Delivery: Delivery{Retries: "not documented", Docs: "https://docs.netlify.com/deploy/deploy-notifications/"},
		},
		Preset{
			Name:        "terraform-cloud",
			Checked:     "docs",
			Description: "HCP Terraform notifications: X-TFE-Notification-Signature over the body, HMAC-SHA512 hex; the verification request answered",
			Spec:        bodyHMAC("hmac-sha512", "X-TFE-Notification-Signature", "", "hex"),
			Handshakes:  []*Handshake{terraformVerification},
			Docs:        "https://developer.hashicorp.com/terraform/cloud-docs/api-docs/notification-configurations#notification-authenticity",
			Dedup:       Dedup{Key: `body.notification_configuration_id + ":" + (body.run_id ?? "") + ":" + join(map(body.notifications ?? [], {.trigger + "@" + (.run_updated_at ?? "")}), ",")`},
			Delivery: Delivery{Retries: "not documented; the last response is kept",
				Docs: "https://developer.hashicorp.com/terraform/cloud-docs/workspaces/settings/notifications"},
		},
		Preset{
			Name:        "launchdarkly",
			Checked:     "docs",
			Description: "LaunchDarkly: X-LD-Signature over the body, HMAC-SHA256 hex",
			Spec:        bodyHMAC("hmac-sha256", "X-LD-Signature", "", "hex"),
			Docs:        "https://launchdarkly.com/docs/home/infrastructure/webhooks",
			Dedup:       Dedup{Key: `body._id`},
			Delivery:    Delivery{Retries: "one retry on a non-2xx answer", Docs: "https://launchdarkly.com/docs/home/infrastructure/webhooks"},
		},
		Preset{
			Name:        "doppler",
			Checked:     "docs",
			Description: "Doppler: X-Doppler-Signature sha256=… over the body, HMAC-SHA256 hex",
			Spec:        bodyHMAC("hmac-sha256", "X-Doppler-Signature", "sha256=", "hex"),
			Docs:        "https://docs.doppler.com/docs/webhooks",
			Delivery:    Delivery{Retries: "up to 5 retries", Docs: "https://docs.doppler.com/docs/webhooks"},
		},
		Preset{
			Name:        "frame-io",
			Checked:     "docs",
			Description: "Frame.io: X-Frameio-Signature v0=… over v0:timestamp:body, HMAC-SHA256 hex",
			Spec: Spec{
				Algorithm: "hmac-sha256", Header: "X-Frameio-Signature", Prefix: "v0=", Encoding: "hex", Content: "v0:{timestamp}:{body}",
				TimestampHeader: "X-Frameio-Request-Timestamp", Tolerance: 5 * time.Minute,
			},
			Docs:     "https://next.developer.frame.io/platform/docs/guides/webhooks",
			Delivery: Delivery{Retries: "retried on failure", Docs: "https://next.developer.frame.io/platform/docs/guides/webhooks"},
		},
		Preset{
			Name:        "google-pubsub",
			Checked:     "sdk: google-auth-library@11.3.4",
			Description: "Google Cloud Pub/Sub push (also Google Play, Gmail): Authorization Bearer OIDC token RS256 from Google's keys, for the audience and a listed service account; the body is not signed",
			Docs:        "https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions",
			Bespoke: Bespoke{
				Build: googleJWT.build,
				Describe: "OIDC JWT RS256 in Authorization: Bearer, keys from www.googleapis.com/oauth2/v3/certs by kid (cached), iss accounts.google.com, " +
					"aud = provider_options audience (default {url}), email among the secrets and email_verified",
				Headers:        []string{"Authorization"},
				SignsFreshness: true,
				// Without an audience option, the token is for the push URL.
				SignsURL: true,
				Signer:   &bearerJWT{bearerConfig: googleJWT},
				NewKeys:  func() (string, string, error) { return newRSATestKey("push@hookgate-test.iam.gserviceaccount.com", "") },
			},
			// One message fans out to each subscription with one id.
			Dedup: Dedup{Key: `body.subscription + ":" + body.message.messageId`},
			Keys: Keys{
				Describe: "service account e-mail of the push subscription",
				Kind:     SecretToken,
				Public:   true,
				Options: []ProviderOption{
					{Name: "audience", Doc: "the audience the subscription's token names (default: the push URL)", Example: "https://hooks.example.com/hooks/pubsub"},
					{Name: "keys", Doc: "a JWKS to verify with instead of Google's (tests, `hookgate keys new`)", Example: `{"keys":[]}`},
				},
			},
			Trust: Trust{BodyUnsigned: true},
			Delivery: Delivery{Retries: "redelivered with backoff (up to 600 s) until acknowledged or the retention period ends (7 days by default)", RetryWindow: Span(7 * 24 * time.Hour),
				Timeout: Span(10 * time.Second), Redeliver: "seek the subscription to a time or snapshot", Docs: "https://cloud.google.com/pubsub/docs/push"},
		},
		Preset{
			Name:        "azure-event-grid",
			Checked:     "docs",
			Description: "Azure Event Grid: Authorization Bearer Entra ID token RS256 from the tenant's keys, issued to Event Grid; validation and CloudEvents OPTIONS answered; the body is not signed",
			Docs:        "https://learn.microsoft.com/azure/event-grid/secure-webhook-delivery",
			Bespoke: Bespoke{
				Build: entraJWT.build,
				Describe: "Entra ID JWT RS256 in Authorization: Bearer, keys from login.microsoftonline.com/{tenant}/discovery/v2.0/keys by kid (cached), " +
					"tid among the secrets with its issuer, aud = provider_options audience, appid or azp Event Grid's",
				Headers:        []string{"Authorization"},
				SignsFreshness: true,
				Signer:         &bearerJWT{bearerConfig: entraJWT},
				NewKeys: func() (string, string, error) {
					return newRSATestKey("00000000-0000-4000-8000-"+randomHex(6), testAudience)
				},
			},
			Handshakes: []*Handshake{eventGridValidation, cloudEventsOptions},
			Dedup:      Dedup{Key: `type(body) == "array" ? join(map(body, {(.topic ?? .source ?? "") + ":" + .id}), ",") : (body.source ?? "") + ":" + body.id`},
			Keys: Keys{
				Describe: "Entra ID tenant id",
				Kind:     SecretToken,
				Public:   true,
				Options: []ProviderOption{
					{Name: "audience", Doc: "the application id or URI the subscription's token is for (required)", Example: "api://hookgate"},
					{Name: "keys", Doc: "a JWKS to verify with instead of the tenant's (tests, `hookgate keys new`)", Example: `{"keys":[]}`},
				},
			},
			Trust: Trust{BodyUnsigned: true},
			Delivery: Delivery{Retries: "after 10 s, 30 s, 1 min, 5 min, 10 min, 30 min, 1 h, then hourly: 30 attempts within 24 h", RetryWindow: Span(24 * time.Hour),
				Timeout: Span(30 * time.Second), Docs: "https://learn.microsoft.com/azure/event-grid/delivery-and-retry"},
		},
		Preset{
			Name:        "apple-app-store",
			Checked:     "sdk: @apple/app-store-server-library@3.1.0",
			Description: "Apple App Store Server Notifications v2: signedPayload ES256 JWS whose x5c chain leads to Apple Root CA - G3; secrets are bundle ids",
			Docs:        "https://developer.apple.com/documentation/appstoreservernotifications/responding-to-app-store-server-notifications",
			Bespoke: Bespoke{
				Build: newAppleStore,
				Describe: "ES256 JWS in the body's signedPayload; x5c leaf and intermediate checked against the pinned root (Apple Root CA - G3, or provider_options root) " +
					"at signedDate, with Apple's marker OIDs; bundleId among the secrets",
				NewKeys: appleKeys,
			},
			Dedup: Dedup{Scheme: "the signed notificationUUID, the same on every retry"},
			Keys: Keys{
				Describe: "the app's bundle id",
				Kind:     SecretToken,
				Public:   true,
				Options: []ProviderOption{
					{Name: "environment", Doc: "Production or Sandbox: refuse notifications of the other", Example: "Production"},
					{Name: "root", Doc: "a PEM root to pin instead of Apple Root CA - G3 (tests, `hookgate keys new`)", Example: "{file./etc/hookgate/test-root.pem}"},
				},
			},
			Trust: Trust{SecretFields: []string{"signedPayload"}},
			Delivery: Delivery{Retries: "production only: 5 retries, 1, 12, 24, 48 and 72 h after the previous attempt", RetryWindow: Span(157 * time.Hour),
				Redeliver: "App Store Server API: Get Notification History", IPRanges: []string{"apple-app-store"},
				Docs: "https://developer.apple.com/documentation/appstoreservernotifications/responding-to-app-store-server-notifications"},
		},
	)
}

// openAI is Standard Webhooks as OpenAI sends it; a secret without whsec_
// is used as written, as OpenAI's SDK does.
func openAI() Preset {
	p := standardWebhooks("openai", "OpenAI: Standard Webhooks (webhook-id/-timestamp/-signature v1,…), HMAC-SHA256 base64, whsec_ key", "webhook",
		"https://platform.openai.com/docs/guides/webhooks", "sdk: openai@7.59.0")
	p.Spec.SecretEncoding = "whsec-or-raw"
	p.Delivery = Delivery{Retries: "exponential backoff for up to 72 h", RetryWindow: Span(72 * time.Hour), Docs: "https://platform.openai.com/docs/guides/webhooks"}
	return p
}

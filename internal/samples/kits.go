package samples

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hookgate/hookgate/internal/verify"
)

func init() {
	register("standard-webhooks-ed25519", Kit{
		New:   standardWebhooksHeaders{prefix: "webhook"}.sample,
		Sends: standardWebhooksHeaders{prefix: "webhook"}.sends(),
	})
	register("slack", Kit{
		New: func(in Input) (Sample, error) {
			// A mention in channel Object, then a reaction to it.
			event := obj{"type": "app_mention", "user": "U061F7AUR", "text": "<@U0LAN0Z89> is it everything a river should be?", "ts": "1700000000.000200", "channel": "C" + in.Object}
			if in.Step > 0 {
				event = obj{"type": "reaction_added", "user": "U061F7AUR", "reaction": "thumbsup", "item": obj{"type": "message", "channel": "C" + in.Object, "ts": "1700000000.000200"}, "event_ts": strconv.FormatInt(in.Now.Unix(), 10) + ".000300"}
			}
			return jsonSample(obj{"token": "sample", "team_id": "T061EG9R6", "api_app_id": "A0PNCHHK2", "type": "event_callback", "event_id": "Ev" + in.ID, "event_time": in.Now.Unix(), "event": event},
				"User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Slack-Signature", "X-Slack-Request-Timestamp"},
	})
	register("shopify", Kit{
		New: func(in Input) (Sample, error) {
			// @shopify/shopify-api refuses a webhook without its topic, shop
			// domain, API version or webhook id.
			return jsonSample(shopifyOrder(in),
				"User-Agent", shopifyUserAgent, "X-Shopify-Topic", in.pick("orders/create", "orders/updated"), "X-Shopify-Shop-Domain", "example.myshopify.com", "X-Shopify-API-Version", shopifyAPIVersion,
				"X-Shopify-Webhook-Id", uuid(), "X-Shopify-Event-Id", uuid(), "X-Shopify-Triggered-At", shopifyTime(in))
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Shopify-Topic", "X-Shopify-Hmac-Sha256", "X-Shopify-Shop-Domain", "X-Shopify-API-Version",
			"X-Shopify-Webhook-Id", "X-Shopify-Event-Id", "X-Shopify-Triggered-At"},
	})
	register("shopify-events", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(shopifyOrder(in),
				"User-Agent", shopifyUserAgent, "shopify-topic", in.pick("orders/create", "orders/updated"), "shopify-shop-domain", "example.myshopify.com", "shopify-api-version", shopifyAPIVersion,
				"shopify-webhook-id", uuid(), "shopify-handle", "hookgate-orders", "shopify-action", in.pick("create", "update"), "shopify-triggered-at", shopifyTime(in))
		},
		Sends: []string{"Content-Type", "User-Agent", "shopify-topic", "shopify-hmac-sha256", "shopify-shop-domain", "shopify-api-version",
			"shopify-webhook-id", "shopify-handle", "shopify-action", "shopify-triggered-at"},
	})
	register("twilio", Kit{
		New: func(in Input) (Sample, error) {
			// Message Object's status callbacks: sent, then delivered.
			sid := "SM" + in.Object + "00000000"
			form := url.Values{"MessageSid": {sid}, "SmsSid": {sid}, "SmsMessageSid": {sid}, "AccountSid": {"AC5ef8732a3c49700934481addd5ce1659"}, "From": {"+14158675309"}, "To": {"+18005551212"},
				"MessageStatus": {in.pick("sent", "delivered")}, "SmsStatus": {in.pick("sent", "delivered")}, "ApiVersion": {"2010-04-01"}}
			return Sample{Body: []byte(form.Encode()), Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "User-Agent": {"TwilioProxy/1.1"},
				"I-Twilio-Idempotency-Token": {uuid()}, "X-Home-Region": {"us1"}}}, nil
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Twilio-Signature", "I-Twilio-Idempotency-Token", "X-Home-Region"},
	})
	register("sendgrid", Kit{
		New: func(in Input) (Sample, error) {
			body := append(mustJSON([]obj{{"email": "jane@example.com", "event": in.pick("delivered", "open"), "sg_event_id": in.ID, "sg_message_id": "msg." + in.Object, "timestamp": in.Now.Unix()}}), '\r', '\n')
			return Sample{Body: body, Header: http.Header{"Content-Type": {"application/json"}, "User-Agent": {"SendGrid Event API"}}}, nil
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Twilio-Email-Event-Webhook-Signature", "X-Twilio-Email-Event-Webhook-Timestamp"},
	})
	register("discord", Kit{
		New: func(in Input) (Sample, error) {
			// A command in channel Object, then a click on its button.
			data := obj{"name": "hookgate"}
			if in.Step > 0 {
				data = obj{"custom_id": "approve", "component_type": 2}
			}
			return jsonSample(obj{"id": strconv.FormatInt(in.EventNumber(), 10), "application_id": "1", "type": 2 + in.Step, "channel_id": strconv.FormatInt(in.ObjectNumber(), 10), "data": data, "token": in.ID, "version": 1},
				"User-Agent", discordUserAgent)
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Signature-Ed25519", "X-Signature-Timestamp"},
	})
	register("discord-events", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"version": 1, "application_id": "1", "type": 1, "event": obj{"type": in.pick("APPLICATION_AUTHORIZED", "ENTITLEMENT_CREATE"), "timestamp": in.RFC3339(),
				"data": obj{"user": obj{"id": strconv.FormatInt(in.ObjectNumber(), 10)}}}},
				"User-Agent", discordUserAgent)
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Signature-Ed25519", "X-Signature-Timestamp"},
	})
	register("square", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"merchant_id": "MLEFBHHSJGVHD", "type": in.pick("payment.created", "payment.updated"), "event_id": uuid(), "created_at": in.RFC3339(), "data": obj{"type": "payment", "id": in.Object}},
				"square-environment", "Sandbox", "square-initial-delivery-timestamp", in.RFC3339())
		},
		Sends: []string{"Content-Type", "x-square-hmacsha256-signature", "square-environment", "square-initial-delivery-timestamp"},
	})
	register("paddle", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"event_id": "evt_" + in.ID, "event_type": in.pick("transaction.paid", "transaction.completed"), "occurred_at": in.RFC3339(), "notification_id": "ntf_" + in.ID,
				"data": obj{"id": "txn_" + in.Object, "status": in.pick("paid", "completed"), "currency_code": "USD", "origin": "web", "collection_mode": "automatic", "items": []any{}, "payments": []any{},
					"created_at": in.RFC3339(), "updated_at": in.RFC3339(), "billed_at": in.RFC3339()}})
		},
		Sends: []string{"Content-Type", "Paddle-Signature"},
	})
	register("zoom", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"event": in.pick("meeting.started", "meeting.ended"), "event_ts": in.Now.UnixMilli(), "payload": obj{"account_id": "AAAAAA", "object": obj{"id": in.Object}}},
				"Content-Type", "application/json; charset=utf-8", "User-Agent", "Zoom Marketplace/1.0a", "clientid", "hookgateClientID",
				"x-zm-trackingid", "v=2.0;clid=aws;rid="+in.ID)
		},
		Sends: []string{"Content-Type", "User-Agent", "clientid", "x-zm-trackingid", "x-zm-signature", "x-zm-request-timestamp"},
	})
	register("linear", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"action": in.pick("create", "update"), "type": "Issue", "data": obj{"id": uuidOf(in.Object), "title": in.pick("Hookgate sample", "Hookgate sample, renamed")}, "webhookTimestamp": in.Now.UnixMilli(), "webhookId": uuid()},
				"Content-Type", "application/json; charset=utf-8", "User-Agent", "Linear-Webhook", "Linear-Delivery", uuid(), "Linear-Event", "Issue")
		},
		Signer: verify.SpecSigner(linearSpec),
		Sends:  []string{"Content-Type", "User-Agent", "Linear-Delivery", "Linear-Event", "Linear-Signature"},
	})
	register("intercom", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"type": "notification_event", "id": "notif_" + in.ID, "topic": in.pick("conversation.user.created", "conversation.user.replied"), "created_at": in.Now.Unix(),
				"data": obj{"item": obj{"type": "conversation", "id": in.Object}}})
		},
		Sends: []string{"Content-Type", "X-Hub-Signature"},
	})
	register("mailgun", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"signature": verify.MailgunSignature(in.Key, randomHex(25), in.Now), "event-data": obj{"id": in.ID, "event": in.pick("delivered", "opened"), "timestamp": in.Now.Unix(), "recipient": "jane@example.com",
				"message": obj{"headers": obj{"message-id": in.Object + "@example.com"}}}})
		},
		Signer: inBody{},
		Sends:  []string{"Content-Type"},
	})
	register("bitbucket", Kit{
		New: func(in Input) (Sample, error) {
			// Two pushes to repository Object.
			change := obj{"new": obj{"type": "branch", "name": "main", "target": obj{"type": "commit", "hash": in.ID}}, "created": false, "forced": false}
			return jsonSample(obj{"repository": obj{"type": "repository", "full_name": "team/repo", "uuid": "{" + uuidOf(in.Object) + "}"}, "actor": obj{"type": "user", "nickname": "jane"}, "push": obj{"changes": []obj{change}}},
				"User-Agent", "Bitbucket-Webhooks/2.0", "X-Event-Key", "repo:push", "X-Request-UUID", uuid(), "X-Hook-UUID", uuid(), "X-Attempt-Number", "1")
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Event-Key", "X-Hook-UUID", "X-Request-UUID", "X-Attempt-Number", "X-Hub-Signature"},
	})
	register("gitlab", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"object_kind": "push", "event_name": "push", "ref": "refs/heads/main", "checkout_sha": in.ID, "project": obj{"id": in.ObjectNumber(), "path_with_namespace": "group/project", "web_url": "https://gitlab.com/group/project"}},
				"User-Agent", "GitLab/18.6.0", "X-Gitlab-Event", "Push Hook", "X-Gitlab-Instance", "https://gitlab.com", "X-Gitlab-Webhook-UUID", uuid(),
				"Idempotency-Key", uuid(), "X-Gitlab-Event-UUID", uuid())
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Gitlab-Event", "X-Gitlab-Token", "X-Gitlab-Instance", "X-Gitlab-Webhook-UUID", "X-Gitlab-Event-UUID", "Idempotency-Key"},
	})
	register("twitch", Kit{
		New: func(in Input) (Sample, error) {
			s, err := jsonSample(obj{"subscription": obj{"id": uuidOf(in.Object), "type": "channel.follow", "version": "2", "status": "enabled"},
				"event": obj{"user_id": in.pick("1337", "1338"), "user_login": in.pick("hookgate", "hookgate2"), "broadcaster_user_id": "12826", "followed_at": in.RFC3339()}},
				"Twitch-Eventsub-Message-Type", "notification", "Twitch-Eventsub-Message-Retry", "0",
				"Twitch-Eventsub-Subscription-Type", "channel.follow", "Twitch-Eventsub-Subscription-Version", "2")
			s.ID = uuid()
			return s, err
		},
		Sends: []string{"Content-Type", "Twitch-Eventsub-Message-Id", "Twitch-Eventsub-Message-Retry", "Twitch-Eventsub-Message-Type", "Twitch-Eventsub-Message-Signature",
			"Twitch-Eventsub-Message-Timestamp", "Twitch-Eventsub-Subscription-Type", "Twitch-Eventsub-Subscription-Version"},
	})
	register("typeform", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"event_id": in.ID, "event_type": "form_response", "form_response": obj{"form_id": in.Object, "token": in.ID, "submitted_at": in.RFC3339()}},
				"User-Agent", "Typeform Webhooks")
		},
		Sends: []string{"Content-Type", "User-Agent", "Typeform-Signature"},
	})
	register("calendly", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"event": in.pick("invitee.created", "invitee.canceled"), "created_at": in.RFC3339(), "payload": obj{"uri": "https://api.calendly.com/scheduled_events/" + in.Object + "/invitees/1", "email": "jane@example.com"}})
		},
		Sends: []string{"Content-Type", "Calendly-Webhook-Signature"},
	})
	register("hubspot-v1", Kit{
		New:   hubspotSample("v1"),
		Sends: []string{"Content-Type", "X-HubSpot-Signature", "X-HubSpot-Signature-Version"},
	})
	register("hubspot-v2", Kit{
		New:   hubspotSample("v2"),
		Sends: []string{"Content-Type", "X-HubSpot-Signature", "X-HubSpot-Signature-Version"},
	})
	register("hubspot-v3", Kit{
		New:   hubspotSample(""),
		Sends: []string{"Content-Type", "X-HubSpot-Signature-v3", "X-HubSpot-Request-Timestamp"},
	})
	register("adyen", Kit{
		New:    adyenSample,
		Signer: inBody{},
		Sends:  []string{"Content-Type"},
	})
	register("vercel", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": "evt_" + in.ID, "type": in.pick("deployment.created", "deployment.succeeded"), "createdAt": in.Now.UnixMilli(), "payload": obj{"deployment": obj{"id": "dpl_" + in.Object}}})
		},
		Sends: []string{"Content-Type", "x-vercel-signature"},
	})
	register("sentry", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"action": in.pick("created", "resolved"), "installation": obj{"uuid": uuid()}, "data": obj{"issue": obj{"id": in.Object}}},
				"Sentry-Hook-Resource", "issue", "Sentry-Hook-Timestamp", strconv.FormatInt(in.Now.Unix(), 10), "Request-ID", uuid())
		},
		Sends: []string{"Content-Type", "Request-ID", "Sentry-Hook-Resource", "Sentry-Hook-Timestamp", "Sentry-Hook-Signature"},
	})
	register("postmark", Kit{
		New:   postmarkSample,
		Sends: []string{"Content-Type", "Authorization"},
	})
	register("basic-auth", Kit{
		New:   postmarkSample,
		Sends: []string{"Content-Type", "Authorization"},
	})
	register("woocommerce", Kit{
		New: func(in Input) (Sample, error) {
			// The headers WC_Webhook::deliver sets; the topic is the
			// resource and event.
			// WC_Webhook's delivery id is a hash of the webhook id and
			// the current second: two events in one second share it.
			return jsonSample(obj{"id": in.ObjectNumber(), "status": in.pick("processing", "completed"), "currency": "USD", "total": "29.35",
				"date_created_gmt": in.Now.UTC().Format("2006-01-02T15:04:05"), "date_modified_gmt": in.Now.UTC().Format("2006-01-02T15:04:05")},
				"User-Agent", "WooCommerce/10.3.0 Hookshot (WordPress/6.8.3)", "X-WC-Webhook-Source", "https://shop.example.com/",
				"X-WC-Webhook-Topic", in.pick("order.created", "order.updated"), "X-WC-Webhook-Resource", "order", "X-WC-Webhook-Event", in.pick("created", "updated"),
				"X-WC-Webhook-ID", "42", "X-WC-Webhook-Delivery-ID", wooCommerceDeliveryID("42", in.Now))
		},
		Sends: []string{"Content-Type", "User-Agent", "X-WC-Webhook-Source", "X-WC-Webhook-Topic", "X-WC-Webhook-Resource", "X-WC-Webhook-Event",
			"X-WC-Webhook-Signature", "X-WC-Webhook-ID", "X-WC-Webhook-Delivery-ID"},
	})
	register("mux", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"type": in.pick("video.asset.created", "video.asset.ready"), "id": uuid(), "created_at": in.RFC3339(), "object": obj{"type": "asset", "id": in.Object},
				"data": obj{"id": in.Object, "status": in.pick("preparing", "ready")}})
		},
		Sends: []string{"Content-Type", "Mux-Signature"},
	})
	register("lemonsqueezy", Kit{
		New: func(in Input) (Sample, error) {
			event := in.pick("order_created", "order_refunded")
			return jsonSample(obj{"meta": obj{"event_name": event, "test_mode": true}, "data": obj{"type": "orders", "id": in.Object, "attributes": obj{"updated_at": in.RFC3339()}}},
				"X-Event-Name", event)
		},
		Sends: []string{"Content-Type", "X-Event-Name", "X-Signature"},
	})
	register("coinbase-commerce", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": uuid(), "scheduled_for": in.RFC3339(), "attempt_number": 1, "event": obj{"id": uuid(), "resource": "event", "type": in.pick("charge:created", "charge:confirmed"), "api_version": "2018-03-22", "created_at": in.RFC3339(),
				"data": obj{"id": uuidOf(in.Object), "code": "HOOKGATE", "resource": "charge"}}})
		},
		Sends: []string{"Content-Type", "X-CC-Webhook-Signature"},
	})
	register("contentful", Kit{
		New: func(in Input) (Sample, error) {
			// Contentful's own Content-Type; the signature covers it.
			return jsonSample(obj{"sys": obj{"type": "Entry", "id": in.Object, "revision": 1 + in.Step, "space": obj{"sys": obj{"type": "Link", "linkType": "Space", "id": "hookgatespace"}}}, "fields": obj{"title": obj{"en-US": "Hookgate"}}},
				"Content-Type", "application/vnd.contentful.management.v1+json", "X-Contentful-Topic", in.pick("ContentManagement.Entry.publish", "ContentManagement.Entry.unpublish"),
				"X-Contentful-Webhook-Name", "Hookgate", "X-Contentful-Idempotency-Key", randomHex(32))
		},
		Sends: []string{"Content-Type", "X-Contentful-Topic", "X-Contentful-Webhook-Name", "x-contentful-signature", "x-contentful-signed-headers", "x-contentful-timestamp"},
	})
	register("jira", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"timestamp": in.Now.UnixMilli(), "webhookEvent": in.pick("jira:issue_created", "jira:issue_updated"), "issue_event_type_name": in.pick("issue_created", "issue_updated"), "issue": obj{"id": in.Object, "key": "HG-1"}},
				"User-Agent", "Atlassian Webhook HTTP Client", "X-Atlassian-Webhook-Identifier", in.ID)
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Atlassian-Webhook-Identifier", "X-Hub-Signature"},
	})
	register("asana", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"events": []obj{{"action": in.pick("added", "changed"), "created_at": in.RFC3339(), "resource": obj{"gid": strconv.FormatInt(in.ObjectNumber(), 10), "resource_type": "task"}, "user": obj{"gid": "1"}}}})
		},
		Learn: func(secret string) (http.Header, []byte) {
			return http.Header{"X-Hook-Secret": {secret}}, nil
		},
		Sends: []string{"Content-Type", "X-Hook-Signature"},
	})
	register("okta", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"eventType": "com.okta.event_hook", "eventTypeVersion": "1.0", "cloudEventsVersion": "0.1", "source": "https://example.okta.com/api/v1/eventHooks/who" + in.ID[:8],
				"eventId": uuid(), "eventTime": in.RFC3339(), "contentType": "application/json", "data": obj{"events": []obj{{"uuid": uuid(), "eventType": in.pick("user.session.start", "user.session.end"),
					"actor": obj{"id": "00u" + in.Object, "type": "User"}}}}},
				"Accept", "application/json")
		},
		Sends: []string{"Content-Type", "Accept", "Authorization"},
	})
	register("microsoft-graph", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"value": []obj{{"subscriptionId": uuid(), "subscriptionExpirationDateTime": in.Now.Add(72 * time.Hour).UTC().Format(time.RFC3339), "clientState": in.Key,
				"changeType": in.pick("created", "updated"), "resource": "Users/" + in.Object + "/Messages/1", "tenantId": uuid()}}}, "Content-Type", "application/json; charset=utf-8")
		},
		Signer: inBody{},
		Sends:  []string{"Content-Type"},
	})
	register("meta", Kit{
		New:    whatsappSample,
		Signer: metaSigner,
		Sends:  []string{"Content-Type", "User-Agent", "X-Hub-Signature-256", "X-Hub-Signature"},
	})
	register("whatsapp", Kit{
		New:    whatsappSample,
		Signer: metaSigner,
		Sends:  []string{"Content-Type", "User-Agent", "X-Hub-Signature-256", "X-Hub-Signature"},
	})
	register("pagerduty", Kit{
		New: func(in Input) (Sample, error) {
			// X-Webhook-Id is the event's id; X-Webhook-Subscription the
			// subscription in its agent.
			subscription := "PSUB" + strings.ToUpper(in.ID[:3])
			return jsonSample(obj{"event": obj{"id": in.ID, "event_type": in.pick("incident.triggered", "incident.acknowledged"), "resource_type": "incident", "occurred_at": in.RFC3339(),
				"agent": obj{"id": subscription, "type": "webhook_subscription_reference"}, "data": obj{"id": "Q" + in.Object, "type": "incident"}}},
				"User-Agent", "PagerDuty-Webhook/V3.0", "X-Webhook-Id", in.ID, "X-Webhook-Subscription", subscription)
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Webhook-Id", "X-Webhook-Subscription", "X-PagerDuty-Signature"},
	})
	register("aws-sns", Kit{
		New:    snsSample,
		Signer: inBody{},
		// https://docs.aws.amazon.com/sns/latest/dg/SendMessageToHttp.prepare.html
		Sends: []string{"Content-Type", "User-Agent", "X-Amz-Sns-Message-Type", "X-Amz-Sns-Message-Id", "X-Amz-Sns-Topic-Arn"},
	})
	register("x", Kit{
		New: func(in Input) (Sample, error) {
			// Two likes of post Object.
			return jsonSample(obj{"for_user_id": "2244994945", "favorite_events": []obj{{"id": in.ID, "created_at": in.Now.UTC().Format(time.RubyDate),
				"timestamp_ms": in.Now.UnixMilli(), "favorited_status": obj{"id_str": strconv.FormatInt(in.ObjectNumber(), 10), "text": "Hookgate sample"},
				"user": obj{"id_str": in.pick("2244994945", "783214"), "screen_name": in.pick("XDevelopers", "X")}}}})
		},
		Sends: []string{"Content-Type", "X-Twitter-Webhooks-Signature"},
	})
	register("plaid", Kit{
		New: func(in Input) (Sample, error) {
			// Two updates of item Object, byte for byte alike, as Plaid
			// sends them: only the signed token tells them apart.
			return jsonSample(obj{"environment": "sandbox", "error": nil, "item_id": in.Object, "new_transactions": 3, "webhook_code": "DEFAULT_UPDATE", "webhook_type": "TRANSACTIONS"})
		},
		Signer: bespokeSigner("plaid"),
		Sends:  []string{"Content-Type", "Plaid-Verification"},
	})
	register("stripe", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": "evt_test_" + in.ID, "object": "event", "api_version": "2024-06-20", "created": in.Now.Unix(), "livemode": false,
				"type": in.pick("payment_intent.created", "payment_intent.succeeded"),
				"data": obj{"object": obj{"id": "pi_test_" + in.Object, "object": "payment_intent", "amount": 2000, "currency": "usd", "status": in.pick("requires_payment_method", "succeeded")}}},
				"Content-Type", "application/json; charset=utf-8", "User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
				"Accept", "*/*; q=0.5, application/xml", "Cache-Control", "no-cache")
		},
		Sends: []string{"Content-Type", "User-Agent", "Accept", "Cache-Control", "Stripe-Signature"},
	})
	register("github", Kit{
		New: func(in Input) (Sample, error) {
			// A repository webhook's ping, then a push to the repository:
			// the hook and its target in the headers are the ones in the
			// body.
			hookID, repo := in.Now.Unix(), in.ObjectNumber()
			body := obj{"zen": "Keep it logically awesome.", "hook_id": hookID,
				"hook":       obj{"type": "Repository", "id": hookID, "name": "web", "active": true, "events": []string{"push"}, "config": obj{"content_type": "json", "insecure_ssl": "0"}},
				"repository": obj{"id": repo, "full_name": "octocat/Hello-World"}, "sender": obj{"login": "octocat"}}
			if in.Step > 0 {
				body = obj{"ref": "refs/heads/main", "before": in.Object, "after": in.ID, "repository": obj{"id": repo, "full_name": "octocat/Hello-World"}, "pusher": obj{"name": "octocat"}, "sender": obj{"login": "octocat"}}
			}
			return jsonSample(body,
				"User-Agent", "GitHub-Hookshot/"+in.ID[:7], "X-GitHub-Event", in.pick("ping", "push"), "X-GitHub-Delivery", uuid(), "X-GitHub-Hook-ID", strconv.FormatInt(hookID, 10),
				"X-GitHub-Hook-Installation-Target-Type", "repository", "X-GitHub-Hook-Installation-Target-ID", strconv.FormatInt(repo, 10))
		},
		// GitHub sends the SHA-1 X-Hub-Signature beside the SHA-256 one
		// whenever the webhook has a secret.
		Signer: signers{verify.SpecSigner(githubSpec), verify.SpecSigner(hubSpec("X-Hub-Signature", "sha1=", "hmac-sha1"))},
		Sends: []string{"Content-Type", "User-Agent", "X-GitHub-Event", "X-GitHub-Delivery", "X-GitHub-Hook-ID",
			"X-GitHub-Hook-Installation-Target-Type", "X-GitHub-Hook-Installation-Target-ID", "X-Hub-Signature", "X-Hub-Signature-256"},
	})
	for _, sw := range []struct{ preset, prefix string }{
		{"standard-webhooks", "webhook"}, {"svix", "svix"}, {"clerk", "svix"}, {"resend", "svix"},
	} {
		h := standardWebhooksHeaders{prefix: sw.prefix}
		register(sw.preset, Kit{New: h.sample, Sends: h.sends()})
	}
}

// Specs the sample signers sign with beside the presets' own.
var (
	linearSpec = verify.Spec{Algorithm: "hmac-sha256", Header: "Linear-Signature", Encoding: "hex"}
	githubSpec = verify.Spec{Algorithm: "hmac-sha256", Header: "X-Hub-Signature-256", Prefix: "sha256=", Encoding: "hex"}
)

// hubSpec is the common "X-Hub-Signature: sha256=<hex>" scheme.
func hubSpec(header, prefix, algorithm string) verify.Spec {
	return verify.Spec{Algorithm: algorithm, Header: header, Prefix: prefix, Encoding: "hex"}
}

// bespokeSigner is a bespoke preset's own signer.
func bespokeSigner(name string) verify.Signer {
	p, _ := verify.Lookup(name)
	s, err := verify.SignerFor(p)
	if err != nil {
		panic(err)
	}
	return s
}

// Values the samples share.
const (
	shopifyUserAgent  = "Shopify-Captain-Hook"
	shopifyAPIVersion = "2026-01"
	discordUserAgent  = "Discord-Interactions/1.0 (+https://discord.com)"
)

// shopifyOrder is an orders/create body.
func shopifyOrder(in Input) obj {
	id := in.ObjectNumber()
	return obj{"id": id, "admin_graphql_api_id": "gid://shopify/Order/" + strconv.FormatInt(id, 10), "email": "jon@example.com", "created_at": in.RFC3339(), "updated_at": in.RFC3339(),
		"total_price": "10.00", "currency": "USD", "financial_status": in.pick("paid", "refunded")}
}

// wooCommerceDeliveryID is X-WC-Webhook-Delivery-ID as WC_Webhook makes
// it: wp_hash (an HMAC-MD5 under the site's salt) of the webhook id and
// the current Unix second.
func wooCommerceDeliveryID(webhookID string, now time.Time) string {
	mac := hmac.New(md5.New, []byte("hookgate-sample-site-salt"))
	mac.Write([]byte(webhookID + strconv.FormatInt(now.Unix(), 10)))
	return hex.EncodeToString(mac.Sum(nil))
}

// shopifyTime is X-Shopify-Triggered-At: UTC with nanoseconds.
func shopifyTime(in Input) string { return in.Now.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// adyenSample signs its one notification item with the hex HMAC key.
func adyenSample(in Input) (Sample, error) {
	// The authorisation of payment Object, then its capture, which has a
	// reference of its own and names the payment's as the original.
	item := &verify.AdyenItem{PspReference: "PSP" + in.Object, MerchantAccountCode: "HookgateECOM", MerchantReference: "order-" + in.Object, EventCode: "AUTHORISATION", Success: "true"}
	if in.Step > 0 {
		item.PspReference, item.OriginalReference, item.EventCode = "PSP"+in.ID, "PSP"+in.Object, "CAPTURE"
	}
	item.Amount.Value, item.Amount.Currency = json.Number("1000"), "EUR"
	sig, err := verify.AdyenSignature(in.Key, item)
	if err != nil {
		return Sample{}, fmt.Errorf("adyen key: %w", err)
	}
	item.AdditionalData = map[string]string{"hmacSignature": sig}
	return jsonSample(obj{"live": "false", "notificationItems": []obj{{"NotificationRequestItem": item}}})
}

// snsSample is a signed Notification to the signing key's topic.
func snsSample(in Input) (Sample, error) {
	var key struct {
		TopicArn string `json:"topic_arn"`
	}
	if err := json.Unmarshal([]byte(in.Key), &key); err != nil || key.TopicArn == "" {
		return Sample{}, fmt.Errorf("aws-sns signing key must be the JSON hookgate keys --provider aws-sns prints")
	}
	id := uuid()
	msg := map[string]string{
		"Type": "Notification", "MessageId": id, "TopicArn": key.TopicArn, "Subject": "Hookgate sample",
		"Message":        string(mustJSON(obj{"order_id": in.Object, "status": in.pick("shipped", "delivered")})),
		"Timestamp":      in.Now.UTC().Format("2006-01-02T15:04:05.000Z"),
		"UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=" + key.TopicArn + ":" + uuid(),
	}
	body, err := verify.SignSNSMessage(in.Key, msg, "2")
	if err != nil {
		return Sample{}, err
	}
	return Sample{Body: body, Header: http.Header{
		"Content-Type":               {"text/plain; charset=UTF-8"},
		"User-Agent":                 {"Amazon Simple Notification Service Agent"},
		"X-Amz-Sns-Message-Type":     {"Notification"},
		"X-Amz-Sns-Message-Id":       {id},
		"X-Amz-Sns-Topic-Arn":        {key.TopicArn},
		"X-Amz-Sns-Subscription-Arn": {key.TopicArn + ":" + uuid()},
	}}, nil
}

package samples

import (
	"encoding/base64"
	"strconv"

	"github.com/hookgate/hookgate/internal/verify"
)

// Kits of the developer-platform and cloud presets.

func init() {
	register("workos", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": "event_" + in.ID, "event": in.pick("dsync.user.created", "dsync.user.updated"), "created_at": in.RFC3339(),
				"data": obj{"id": "directory_user_" + in.Object, "directory_id": "directory_01ECAZ4NV9QMV47GW873HDCX74", "state": in.pick("active", "inactive"), "emails": []obj{{"primary": true, "value": "jane@example.com"}}}})
		},
		Sends: []string{"Content-Type", "WorkOS-Signature"},
	})
	register("qstash", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"build": "bld_" + in.Object, "status": in.pick("started", "finished")},
				"User-Agent", "Upstash-QStash", "Upstash-Message-Id", "msg_"+in.ID, "Upstash-Retried", "0")
		},
		Sends: []string{"Content-Type", "User-Agent", "Upstash-Signature", "Upstash-Message-Id", "Upstash-Retried"},
	})
	register("replicate", swKit("webhook", func(in Input) obj {
		return obj{"id": in.Object, "version": "5c7d5dc6dd8bf75c1acaa8565735e7986bc5b66206b55cca93cb72c9bf15ccaa", "status": in.pick("starting", "succeeded"),
			"created_at": in.RFC3339(), "input": obj{"prompt": "an astronaut riding a horse"}, "urls": obj{"get": "https://api.replicate.com/v1/predictions/" + in.Object}}
	}))
	register("openai", swKit("webhook", func(in Input) obj {
		return obj{"id": "evt_" + in.ID, "object": "event", "created_at": in.Now.Unix(), "type": in.pick("response.completed", "response.cancelled"), "data": obj{"id": "resp_" + in.Object}}
	}, "User-Agent", "OpenAI/1.0 (+https://platform.openai.com/docs/webhooks)"))
	register("heroku", Kit{
		New: func(in Input) (Sample, error) {
			meta := obj{"attempt": obj{"id": uuid()}, "delivery": obj{"id": uuid()}, "event": obj{"id": uuidOf(in.ID), "include": "api:build"}, "webhook": obj{"id": "0ed1a2c4-3b3e-4c4e-9d4f-1c1e2a3b4c5d"}}
			return jsonSample(obj{"action": in.pick("create", "update"), "actor": obj{"email": "dev@example.com"}, "created_at": in.RFC3339(), "id": uuidOf(in.ID),
				"data": obj{"app": obj{"name": "sample-app"}, "id": uuidOf(in.Object), "status": in.pick("pending", "succeeded")}, "resource": "build", "version": "application/vnd.heroku+json; version=3",
				"webhook_metadata": meta})
		},
		Sends: []string{"Content-Type", "Heroku-Webhook-Hmac-SHA256"},
	})
	register("circleci", Kit{
		New: func(in Input) (Sample, error) {
			kind := in.pick("job-completed", "workflow-completed")
			return jsonSample(obj{"id": uuidOf(in.ID), "type": kind, "happened_at": in.RFC3339(), "webhook": obj{"id": "cf8c4fdd-0587-4da1-b4ca-4846e9640af9", "name": "gw"},
				"project": obj{"slug": "github/acme/webhook-service"}, "pipeline": obj{"id": uuidOf(in.Object), "number": 42}}, "User-Agent", "CircleCI-Webhook/1.0", "circleci-event-type", kind)
		},
		Sends: []string{"Content-Type", "User-Agent", "circleci-event-type", "circleci-signature"},
	})
	register("buildkite", Kit{
		New: func(in Input) (Sample, error) {
			state := in.pick("running", "passed")
			return jsonSample(obj{"event": "build." + in.pick("running", "finished"), "build": obj{"id": uuidOf(in.Object), "number": 15, "state": state, "branch": "main", "commit": in.ID},
				"pipeline": obj{"slug": "app"}, "sender": obj{"name": "Jane"}}, "X-Buildkite-Event", "build."+in.pick("running", "finished"))
		},
		Sends: []string{"Content-Type", "X-Buildkite-Event", "X-Buildkite-Signature"},
	})
	register("gitea", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"action": in.pick("opened", "closed"), "number": 1, "issue": obj{"id": in.ObjectNumber(), "title": "Bug", "state": in.pick("open", "closed")},
				"repository": obj{"full_name": "acme/app"}, "sender": obj{"login": "jane"}},
				"X-Gitea-Delivery", uuid(), "X-Gitea-Event", "issues", "X-Gitea-Event-Type", "issues")
		},
		Sends: []string{"Content-Type", "X-Gitea-Delivery", "X-Gitea-Event", "X-Gitea-Event-Type", "X-Gitea-Signature"},
	})
	register("netlify", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": in.Object, "site_id": "fa4dd95a-994e-4f89-8a7a-2d9e9fc36a32", "build_id": in.ID, "state": in.pick("building", "ready"), "name": "my-site",
				"context": "production", "branch": "main", "created_at": in.RFC3339(), "updated_at": in.RFC3339()})
		},
		Sends: []string{"Content-Type", "X-Webhook-Signature"},
	})
	register("terraform-cloud", Kit{
		New: func(in Input) (Sample, error) {
			trigger := in.pick("run:created", "run:completed")
			return jsonSample(obj{"payload_version": 1, "notification_configuration_id": "nc-AeUQ2zfKZzW9TiGZ", "run_id": "run-" + in.Object, "run_message": "Add queue workers",
				"workspace_name": "my-workspace", "organization_name": "acme", "notifications": []obj{{"message": "Run " + trigger, "trigger": trigger, "run_status": in.pick("pending", "applied"),
					"run_updated_at": in.RFC3339(), "run_updated_by": "jane"}}})
		},
		Sends: []string{"Content-Type", "X-TFE-Notification-Signature"},
	})
	register("launchdarkly", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"_id": in.ID, "kind": "flag", "date": in.Now.UnixMilli(), "name": "new-checkout-" + in.Object, "description": in.pick("created the flag", "turned on the flag"),
				"accesses": []obj{{"action": in.pick("createFlag", "updateOn"), "resource": "proj/default:env/production:flag/new-checkout-" + in.Object}}})
		},
		Sends: []string{"Content-Type", "X-LD-Signature"},
	})
	register("doppler", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"type": "config.secrets.update", "config": obj{"name": "prd-" + in.Object, "root": true, "environment": "prd", "project": "backend"},
				"project": obj{"id": "backend"}, "workplace": obj{"id": "wp_123"}, "diff": obj{"added": []string{in.pick("NEW_FLAG", "OTHER_FLAG")}, "removed": []string{}, "updated": []string{}}})
		},
		Sends: []string{"Content-Type", "X-Doppler-Signature"},
	})
	register("frame-io", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"type": in.pick("file.ready", "comment.created"), "resource": obj{"type": in.pick("file", "comment"), "id": uuidOf(in.ID)},
				"account": obj{"id": "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"}, "project": obj{"id": uuidOf(in.Object)}})
		},
		Sends: []string{"Content-Type", "X-Frameio-Signature", "X-Frameio-Request-Timestamp"},
	})
	register("google-pubsub", Kit{
		New: func(in Input) (Sample, error) {
			data := base64.StdEncoding.EncodeToString(mustJSON(obj{"orderId": in.Object, "status": in.pick("created", "paid")}))
			id := strconv.FormatInt(in.EventNumber()%10000000000000000, 10)
			return jsonSample(obj{"message": obj{"attributes": obj{"type": in.pick("order.created", "order.paid"), "orderId": in.Object}, "data": data,
				"messageId": id, "message_id": id, "publishTime": in.Now.UTC().Format("2006-01-02T15:04:05.000Z"), "publish_time": in.Now.UTC().Format("2006-01-02T15:04:05.000Z")},
				"subscription": "projects/myproject/subscriptions/mysubscription"}, "User-Agent", "APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)")
		},
		Sends: []string{"Content-Type", "User-Agent", "Authorization"},
	})
	register("azure-event-grid", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample([]obj{{"id": uuidOf(in.ID), "eventTime": in.RFC3339(), "eventType": "Microsoft.Storage." + in.pick("BlobCreated", "BlobDeleted"), "dataVersion": "", "metadataVersion": "1",
				"topic": "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/acct", "subject": "/blobServices/default/containers/c/blobs/" + in.Object + ".txt",
				"data": obj{"api": in.pick("PutBlob", "DeleteBlob"), "url": "https://acct.blob.core.windows.net/c/" + in.Object + ".txt"}}},
				"aeg-event-type", "Notification", "aeg-subscription-name", "MYSUB", "aeg-delivery-count", "0", "aeg-data-version", "", "aeg-metadata-version", "1")
		},
		Sends: []string{"Content-Type", "Authorization", "aeg-event-type", "aeg-subscription-name", "aeg-delivery-count"},
	})
	register("apple-app-store", Kit{
		New: func(in Input) (Sample, error) {
			payload := obj{"notificationType": in.pick("SUBSCRIBED", "DID_RENEW"), "notificationUUID": uuidOf(in.ID), "version": "2.0", "signedDate": in.Now.UnixMilli(),
				"data": obj{"appAppleId": 1234, "bundleId": "com.example.hookgate", "environment": "Sandbox", "status": 1, "originalTransactionId": strconv.FormatInt(in.ObjectNumber(), 10)}}
			body, err := verify.SignAppleNotification(in.Key, payload)
			return Sample{Body: body, Header: jsonHeader()}, err
		},
		Signer: inBody{},
		Sends:  []string{"Content-Type"},
	})
}

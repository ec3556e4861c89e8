package samples

import (
	"net/http"
	"strconv"

	"github.com/hookgate/hookgate/internal/verify"
)

// Kits of the content, file and planning presets.

func init() {
	register("sanity", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"_id": "post-" + in.Object, "_type": "post", "_rev": in.ID, "title": in.pick("Hello", "Hello, world"), "_updatedAt": in.RFC3339()},
				"User-Agent", "Sanity.io webhook delivery", "idempotency-key", "idem_"+in.ID, "sanity-project-id", "abc123", "sanity-dataset", "production",
				"sanity-document-id", "post-"+in.Object, "sanity-operation", in.pick("create", "update"), "sanity-webhook-id", "wh_1")
		},
		Sends: []string{"Content-Type", "User-Agent", "sanity-webhook-signature", "idempotency-key", "sanity-project-id", "sanity-dataset", "sanity-document-id", "sanity-operation", "sanity-webhook-id"},
	})
	register("dropbox-sign", Kit{
		New: func(in Input) (Sample, error) {
			eventType := in.pick("signature_request_viewed", "signature_request_signed")
			eventTime := strconv.FormatInt(in.Now.Unix(), 10)
			return jsonSample(obj{"event": obj{"event_type": eventType, "event_time": eventTime, "event_hash": verify.DropboxSignHash(in.Key, eventTime, eventType),
				"event_metadata": obj{"related_signature_id": in.ID, "reported_for_account_id": "615266b89aeda4e8cd2f2a5d401dbc76f4fa"}},
				"signature_request": obj{"signature_request_id": in.Object, "title": "NDA", "is_complete": in.Step > 0}}, "User-Agent", "HelloSign API")
		},
		Signer: inBody{},
		Sends:  []string{"Content-Type", "User-Agent"},
	})
	register("box", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"type": "webhook_event", "id": uuidOf(in.ID), "created_at": in.RFC3339(), "trigger": in.pick("FILE.UPLOADED", "FILE.RENAMED"),
				"webhook": obj{"id": "53", "type": "webhook"}, "source": obj{"id": strconv.FormatInt(in.ObjectNumber(), 10), "type": "file", "name": "Report.pdf", "sequence_id": strconv.Itoa(in.Step)}},
				"User-Agent", "Box-WH-Client/0.1")
		},
		Sends: []string{"Content-Type", "User-Agent", "Box-Delivery-Id", "Box-Delivery-Timestamp", "Box-Signature-Primary", "Box-Signature-Secondary", "Box-Signature-Version", "Box-Signature-Algorithm"},
	})
	register("dropbox", Kit{
		New: func(in Input) (Sample, error) {
			users := []int64{in.ObjectNumber()}
			if in.Step > 0 {
				users = append(users, 23456789)
			}
			return jsonSample(obj{"list_folder": obj{"accounts": []string{"dbid:AAH4f99T0taONIb-" + in.Object}}, "delta": obj{"users": users}}, "User-Agent", "DropboxWebhooks/1.0")
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Dropbox-Signature"},
	})
	register("cloudinary", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"notification_type": in.pick("upload", "rename"), "timestamp": in.RFC3339(), "request_id": in.ID, "asset_id": in.Object, "public_id": "products/shoe",
				"version": in.Now.Unix(), "resource_type": "image", "type": "upload"})
		},
		Sends: []string{"Content-Type", "X-Cld-Signature", "X-Cld-Timestamp"},
	})
	register("imagekit", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"type": "video.transformation." + in.pick("accepted", "ready"), "id": uuidOf(in.ID), "created_at": in.RFC3339(),
				"request": obj{"x_request_id": uuidOf(in.Object), "url": "https://ik.imagekit.io/demo/v.mp4?tr=f-webm"}, "data": obj{"asset": obj{"url": "https://ik.imagekit.io/demo/" + in.Object + ".mp4"}}})
		},
		Sends: []string{"Content-Type", "x-ik-signature"},
	})
	register("notion", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": uuidOf(in.ID), "timestamp": in.RFC3339(), "workspace_id": "13950b26-c203-4f3b-b97d-93ec06319565", "subscription_id": "29d75c0d-5546-4414-8459-7b7a92f1fc4b",
				"type": in.pick("page.created", "page.properties_updated"), "attempt_number": 1, "api_version": "2025-09-03", "entity": obj{"id": uuidOf(in.Object), "type": "page"}})
		},
		Learn: func(secret string) (http.Header, []byte) {
			return jsonHeader(), mustJSON(obj{"verification_token": secret})
		},
		Sends: []string{"Content-Type", "X-Notion-Signature"},
	})
	register("trello", Kit{
		New: func(in Input) (Sample, error) {
			action := obj{"id": in.ID, "idMemberCreator": "4fc78a59a885233f4b349bd9", "type": in.pick("updateCard", "commentCard"), "date": in.RFC3339(),
				"data": obj{"card": obj{"id": in.Object, "name": "Webhooks"}, "board": obj{"id": "4d5ea62fd76aa1136000000c"}}}
			return jsonSample(obj{"action": action, "model": obj{"id": "4d5ea62fd76aa1136000000c", "name": "Trello Development"}}, "User-Agent", "Trello")
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Trello-Webhook"},
	})
	register("airtable", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"base": obj{"id": "appjRdIX59U4YEy4l"}, "webhook": obj{"id": "ach" + in.Object}, "timestamp": in.Now.Add(0).UTC().Format("2006-01-02T15:04:05.000Z")})
		},
		Sends: []string{"Content-Type", "X-Airtable-Content-MAC"},
	})
	register("monday", Kit{
		New: func(in Input) (Sample, error) {
			event := obj{"app": "monday", "type": in.pick("create_pulse", "update_column_value"), "triggerTime": in.RFC3339(), "subscriptionId": 73759690, "isRetry": false, "userId": 103892,
				"originalTriggerUuid": nil, "boardId": 224535, "pulseId": in.ObjectNumber(), "triggerUuid": in.ID}
			return jsonSample(obj{"event": event})
		},
		Sends: []string{"Content-Type", "Authorization"},
	})
	register("clickup", Kit{
		New: func(in Input) (Sample, error) {
			item := obj{"id": strconv.FormatInt(in.EventNumber(), 10), "type": 1, "date": strconv.FormatInt(in.Now.UnixMilli(), 10), "field": "status",
				"before": obj{"status": in.pick("", "to do")}, "after": obj{"status": in.pick("to do", "in progress")}}
			return jsonSample(obj{"event": in.pick("taskCreated", "taskStatusUpdated"), "history_items": []obj{item}, "task_id": in.Object, "webhook_id": "7fa3ec74-69a8-4530-a251-8a13730bd204"})
		},
		Sends: []string{"Content-Type", "X-Signature"},
	})
	register("webflow", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"triggerType": in.pick("collection_item_created", "collection_item_changed"), "payload": obj{"id": in.Object, "siteId": "65427cf400e02b306eaa049c",
				"lastUpdated": in.Now.UTC().Format("2006-01-02T15:04:05.000Z"), "fieldData": obj{"name": in.pick("Hello", "Hello, world"), "slug": "hello"}}})
		},
		Sends: []string{"Content-Type", "x-webflow-signature", "x-webflow-timestamp"},
	})
	register("figma", Kit{
		New: func(in Input) (Sample, error) {
			body := obj{"event_type": in.pick("FILE_UPDATE", "FILE_VERSION_UPDATE"), "file_key": in.Object, "file_name": "Design System", "passcode": in.Key,
				"timestamp": in.RFC3339(), "webhook_id": "123456"}
			if in.Step > 0 {
				body["version_id"] = in.ID
			}
			return jsonSample(body)
		},
		Signer: inBody{},
		Sends:  []string{"Content-Type"},
	})
}

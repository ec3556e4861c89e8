package samples

import (
	"fmt"
	"strconv"

	"github.com/hookgate/hookgate/internal/verify"
)

// Kits of the payment, billing and commerce presets.

func init() {
	register("razorpay", Kit{
		New: func(in Input) (Sample, error) {
			// Payment Object authorized, then captured.
			status := in.pick("authorized", "captured")
			payment := obj{"id": "pay_" + in.Object, "entity": "payment", "amount": 50000, "currency": "INR", "status": status, "order_id": "order_DESlLckIVRkHWj", "method": "card", "captured": in.Step > 0}
			return jsonSample(obj{"entity": "event", "account_id": "acc_BFQ7uQEaa7j2z7", "event": "payment." + status, "contains": []string{"payment"},
				"payload": obj{"payment": obj{"entity": payment}}, "created_at": in.Now.Unix()},
				"User-Agent", "Razorpay-Webhook/v1", "X-Razorpay-Event-Id", "E"+in.ID, "Request-Id", "E"+in.ID)
		},
		Sends: []string{"Content-Type", "User-Agent", "X-Razorpay-Signature", "X-Razorpay-Event-Id", "Request-Id"},
	})
	register("braintree", Kit{
		New: func(in Input) (Sample, error) {
			kind := in.pick("subscription_charged_successfully", "subscription_went_past_due")
			xml := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<notification><kind>%s</kind><timestamp type="datetime">%s</timestamp><subject><subscription><id>sub_%s</id><status>%s</status></subscription></subject></notification>`,
				kind, in.RFC3339(), in.Object, in.pick("Active", "Past Due"))
			body, err := verify.BraintreeForm(in.Key, []byte(xml))
			return Sample{Body: body, Header: formHeader.Clone()}, err
		},
		Signer: inBody{},
		Sends:  []string{"Content-Type"},
	})
	register("gocardless", Kit{
		New: func(in Input) (Sample, error) {
			action := in.pick("created", "confirmed")
			event := obj{"id": "EV" + in.ID[:12], "created_at": in.RFC3339(), "resource_type": "payments", "action": action, "links": obj{"payment": "PM" + in.Object},
				"details": obj{"origin": "gocardless", "cause": "payment_" + action, "description": "Payment " + action + "."}, "metadata": obj{}}
			return jsonSample(obj{"events": []obj{event}, "meta": obj{"webhook_id": "WB" + in.ID[:12]}},
				"User-Agent", "gocardless-webhook-service/1.2", "Origin", "https://api.gocardless.com")
		},
		Sends: []string{"Content-Type", "User-Agent", "Origin", "Webhook-Signature"},
	})
	register("recurly", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": in.Object, "object_type": "account", "site_id": "rjxwmwedwqug", "event_type": in.pick("created", "updated"),
				"event_time": in.Now.UTC().Format("2006-01-02T15:04:05Z"), "account_code": "acct-" + in.Object})
		},
		Sends: []string{"Content-Type", "recurly-signature"},
	})
	register("paypal", Kit{
		New: func(in Input) (Sample, error) {
			// Order Object approved, then its capture completed.
			event := in.pick("CHECKOUT.ORDER.APPROVED", "PAYMENT.CAPTURE.COMPLETED")
			return jsonSample(obj{"id": "WH-" + in.ID, "event_version": "1.0", "create_time": in.RFC3339(), "resource_type": in.pick("checkout-order", "capture"), "event_type": event,
				"summary": "An order has been " + in.pick("approved", "captured"), "resource": obj{"id": in.Object, "status": in.pick("APPROVED", "COMPLETED")}},
				"User-Agent", "PayPal/AUHD-214.0-58844410")
		},
		Sends: []string{"Content-Type", "User-Agent", "Paypal-Transmission-Id", "Paypal-Transmission-Time", "Paypal-Transmission-Sig", "Paypal-Cert-Url", "Paypal-Auth-Algo"},
	})
	register("checkout-com", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": "evt_" + in.ID, "type": in.pick("payment_approved", "payment_captured"), "version": "1.0.28", "created_on": in.RFC3339(),
				"data": obj{"id": "pay_" + in.Object, "action_id": "act_" + in.ID, "amount": 1000, "currency": "GBP", "status": in.pick("Authorized", "Captured")}})
		},
		Sends: []string{"Content-Type", "Cko-Signature"},
	})
	register("mollie", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"resource": "event", "id": "event_" + in.ID, "type": in.pick("sales-invoice.issued", "sales-invoice.paid"), "entityId": "invoice_" + in.Object, "createdAt": in.RFC3339()})
		},
		Sends: []string{"Content-Type", "X-Mollie-Signature"},
	})
	register("paystack", Kit{
		New: func(in Input) (Sample, error) {
			event, status := "charge.success", "success"
			if in.Step > 0 {
				event, status = "refund.processed", "processed"
			}
			return jsonSample(obj{"event": event, "data": obj{"id": in.ObjectNumber(), "reference": "ref_" + in.Object, "status": status, "amount": 50000, "currency": "NGN", "paid_at": in.RFC3339()}})
		},
		Sends: []string{"Content-Type", "x-paystack-signature"},
	})
	register("revolut", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"event": in.pick("ORDER_AUTHORISED", "ORDER_COMPLETED"), "order_id": uuidOf(in.Object), "merchant_order_ext_ref": "Order #" + in.ID[:6]})
		},
		Sends: []string{"Content-Type", "Revolut-Signature", "Revolut-Request-Timestamp"},
	})
	register("xero", Kit{
		New: func(in Input) (Sample, error) {
			event := obj{"resourceUrl": "https://api.xero.com/api.xro/2.0/Invoices/" + uuidOf(in.Object), "resourceId": uuidOf(in.Object), "eventDateUtc": in.Now.UTC().Format("2006-01-02T15:04:05.000"),
				"eventType": in.pick("CREATE", "UPDATE"), "eventCategory": "INVOICE", "tenantId": "c2cc9b6e-9458-4c7d-93cc-f02b81b0594f", "tenantType": "ORGANISATION"}
			return jsonSample(obj{"events": []obj{event}, "lastEventSequence": 2, "firstEventSequence": 1, "entropy": "S0m3r4Nd0mt3xt"})
		},
		Sends: []string{"Content-Type", "x-xero-signature"},
	})
	register("quickbooks", Kit{
		New: func(in Input) (Sample, error) {
			op := in.pick("created", "updated")
			return jsonSample([]obj{{"specversion": "1.0", "id": uuidOf(in.ID), "source": "intuit.qbo", "type": "qbo.invoice." + op + ".v1", "datacontenttype": "application/json",
				"time": in.RFC3339(), "intuitentityid": strconv.FormatInt(in.ObjectNumber(), 10), "intuitaccountid": "9341453172781234", "data": obj{}}})
		},
		Sends: []string{"Content-Type", "intuit-signature"},
	})
	register("orb", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": "evt_" + in.ID, "created_at": in.RFC3339(), "type": in.pick("invoice.issued", "invoice.payment_succeeded"), "properties": obj{},
				"invoice": obj{"id": "inv_" + in.Object, "amount_due": "120.00", "currency": "USD", "status": in.pick("issued", "paid")}})
		},
		Sends: []string{"Content-Type", "X-Orb-Signature", "X-Orb-Timestamp"},
	})
	register("lago", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"webhook_type": in.pick("invoice.created", "invoice.payment_status_updated"), "object_type": "invoice",
				"invoice": obj{"lago_id": uuidOf(in.Object), "number": "LAG-1234-001-002", "status": "finalized", "payment_status": in.pick("pending", "succeeded"), "currency": "EUR", "total_amount_cents": 12000}},
				"X-Lago-Signature-Algorithm", "hmac", "X-Lago-Unique-Key", uuidOf(in.ID))
		},
		Sends: []string{"Content-Type", "X-Lago-Signature", "X-Lago-Signature-Algorithm", "X-Lago-Unique-Key"},
	})
	register("chargebee", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": "ev_" + in.ID, "occurred_at": in.Now.Unix(), "source": "admin_console", "object": "event", "api_version": "v2",
				"event_type": in.pick("subscription_created", "subscription_renewed"), "content": obj{"subscription": obj{"id": in.Object, "status": "active"}}})
		},
		Sends: []string{"Content-Type", "Authorization"},
	})
	register("flutterwave", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"event": "charge.completed", "data": obj{"id": in.EventNumber() % 1000000000, "tx_ref": "tx-" + in.Object, "amount": 100, "currency": "NGN",
				"status": in.pick("pending", "successful"), "customer": obj{"email": "user@example.com"}}})
		},
		Sends: []string{"Content-Type", "flutterwave-signature"},
	})
	register("easypost", Kit{
		New: func(in Input) (Sample, error) {
			return jsonSample(obj{"id": "evt_" + in.ID, "object": "Event", "mode": "production", "description": "tracker.updated", "previous_attributes": obj{"status": in.pick("pre_transit", "in_transit")},
				"result": obj{"id": "trk_" + in.Object, "object": "Tracker", "status": in.pick("in_transit", "delivered"), "carrier": "USPS"}, "created_at": in.RFC3339()})
		},
		Sends: []string{"Content-Type", "X-Hmac-Signature"},
	})
	register("alchemy", Kit{
		New: func(in Input) (Sample, error) {
			activity := obj{"fromAddress": "0x503828976d22510aad0201ac7ec88293211d23da", "toAddress": "0x" + in.Object + "3f4b43db5eb49d1f48f53443", "value": 293.092129, "asset": "USDC", "category": "token",
				"hash": "0x" + in.ID + in.ID + in.ID}
			return jsonSample(obj{"webhookId": "wh_octjglnywaupz6th", "id": "whevt_" + in.ID, "createdAt": in.RFC3339(), "type": "ADDRESS_ACTIVITY",
				"event": obj{"network": "ETH_MAINNET", "activity": []obj{activity}}})
		},
		Sends: []string{"Content-Type", "X-Alchemy-Signature"},
	})
}

// Fixtures of the presets added in the third round (see README.md). Each is
// signed with node:crypto from the provider's documentation, an
// implementation independent of the gateway's; where the provider ships a
// Node SDK, that SDK must accept it ("node:crypto checked by …") or made it;
// where the provider or its SDK publishes a vector, it is reproduced
// ("published: …"). generate.mjs calls addRound3 with its helpers.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { strict as assert } from "node:assert";
import crypto, { createHash, createHmac, createPrivateKey, createPublicKey, sign as cryptoSign } from "node:crypto";

import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import Razorpay from "razorpay";
import { parse as gocardlessParse } from "gocardless-nodejs";
import { WebhookEventVerifier as OnfidoVerifier } from "@onfido/api";
import { verifyRequestSignature as cioVerify } from "customerio-node";
import Telnyx from "telnyx";
import plivo from "plivo";
import { verifySignature as vonageVerify } from "@vonage/jwt";
import Pusher from "pusher";
import { WebhookHandler as LiveblocksHandler } from "@liveblocks/node";
import { StreamChat } from "stream-chat";
import { WebhookReceiver as LiveKitReceiver } from "livekit-server-sdk";
import { validateSignature as lineValidate } from "@line/bot-sdk";
import { WorkOS } from "@workos-inc/node";
import { Receiver as QStashReceiver } from "@upstash/qstash";
import { validateWebhook as replicateValidate } from "replicate";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { verifyWebhookSignature as notionVerify } from "@notionhq/client";
import Orb from "orb-billing";
import EasyPostClient from "@easypost/api";
import braintree from "braintree";
import { isValidSignature as sanityValid } from "@sanity/webhook";
import { OAuth2Client } from "google-auth-library";
import { WebflowClient } from "webflow-api";
import { WebhooksManager as BoxWebhooks } from "box-node-sdk/managers";
import cloudinary from "cloudinary";
import ImageKit from "imagekit";
import { EventCallbackHelper, EventCallbackRequest } from "@dropbox/sign";
import { SignedDataVerifier, Environment as AppleEnvironment } from "@apple/app-store-server-library";

export async function addRound3(h) {
  const { fixtures, sdkVersion, at, TS, urlFor, keysDir } = h;
  const compact = (v) => JSON.stringify(v);
  const hmac = (alg, key, data, enc) => createHmac(alg, key).update(data).digest(enc);
  const b64u = (buf) => Buffer.from(buf).toString("base64url");
  const checkedBy = (pkg) => `node:crypto checked by ${sdkVersion(pkg)}`;
  const perDocs = (url) => `node:crypto per ${url}`;
  const push = (f) => fixtures.push({ timestamp: TS, ...f });
  const json = { "Content-Type": "application/json" };
  const iso = (s) => new Date(s * 1000).toISOString().replace(".000Z", "Z");

  // Standard Webhooks / Svix headers for a message, signed by the library.
  const swHeaders = (prefix, lib, secret, id, ts, payload) => {
    const sig = new lib(secret).sign(id, new Date(ts * 1000), payload);
    return { ...json, [`${prefix}-id`]: id, [`${prefix}-timestamp`]: String(ts), [`${prefix}-signature`]: sig };
  };
  const jwtHS256 = (secret, claims, header = { alg: "HS256", typ: "JWT" }) => {
    const signing = b64u(compact(header)) + "." + b64u(compact(claims));
    return signing + "." + hmac("sha256", secret, signing, "base64url");
  };

  // ------------------------------------------------------ shared schemes ---
  {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const anthropic = new Anthropic({ apiKey: "sk-ant-unused" });
    for (const [i, type] of ["session.status_idled", "session.status_terminated"].entries()) {
      const id = `whe_01HookgateAnthropic${i}`;
      const payload = compact({ type: "event", id, created_at: iso(TS), data: { type, id: "sesn_01Hookgate", organization_id: "org_01HG7", workspace_id: "wrkspc_01JQ" } });
      const headers = swHeaders("webhook", StandardWebhook, secret, id, TS, payload);
      await at(TS + 1, () => anthropic.beta.webhooks.unwrap(payload, { headers, key: secret }));
      push({ provider: "anthropic", sdk: checkedBy("@anthropic-ai/sdk"), secret, payload, headers, note: `Anthropic ${type}` });
    }
  }
  {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    for (const [i, cat] of ["triage", "fixing"].entries()) {
      const payload = compact({ event_type: "public_incident.incident_updated_v2", "public_incident.incident_updated_v2": { id: "01HOOKGATEINC", reference: "INC-123", incident_status: { category: cat } } });
      push({ provider: "incident-io", sdk: sdkVersion("svix"), secret, payload, headers: swHeaders("webhook", SvixWebhook, secret, `msg_incident${i}`, TS, payload), note: `incident.io incident ${cat}` });
    }
    for (const [i, action] of ["CREATE", "UPDATE"].entries()) {
      const payload = compact({ event_id: `event-live-hookgate-${i}`, project_id: "project-live-0a1b2c", action, object_type: "member", source: "DIRECT", id: "member-live-1", timestamp: iso(TS) });
      push({ provider: "stytch", sdk: sdkVersion("svix"), secret, payload, headers: swHeaders("svix", SvixWebhook, secret, `msg_stytch${i}`, TS, payload), note: `Stytch member ${action}` });
    }
    for (const [i, type] of ["TRANSFER_PROCESSED", "TRANSFER_FAILED"].entries()) {
      const payload = compact({ event_type: type, transfer_id: "dpt_hookgate1", company_id: "cuacc_01" });
      const sig = "v1," + hmac("sha256", Buffer.from(secret.slice(6), "base64"), `msg_brex${i}.${TS}.${payload}`, "base64");
      push({ provider: "brex", sdk: perDocs("https://developer.brex.com/docs/webhooks"), secret, payload,
        headers: { ...json, "Webhook-Id": `msg_brex${i}`, "Webhook-Timestamp": String(TS), "Webhook-Signature": sig }, note: `Brex ${type}` });
    }
    const liveblocks = new LiveblocksHandler(secret);
    for (const [i, type] of ["userEntered", "userLeft"].entries()) {
      const payload = compact({ data: { appId: "605a50b01a36d5ea7a2e9104", connectionId: 2196 + i, enteredAt: iso(TS), leftAt: iso(TS), numActiveUsers: 2, roomId: "hero-grid", userId: "iep", userInfo: null }, type });
      const headers = swHeaders("webhook", SvixWebhook, secret, `msg_liveblocks${i}`, TS, payload);
      await at(TS + 1, () => liveblocks.verifyRequest({ headers, rawBody: payload }));
      push({ provider: "liveblocks", sdk: checkedBy("@liveblocks/node"), secret, payload, headers, note: `Liveblocks ${type}` });
    }
    const openai = new OpenAI({ apiKey: "sk-unused" });
    for (const [i, type] of ["response.completed", "response.cancelled"].entries()) {
      const payload = compact({ id: `evt_hookgate${i}`, object: "event", created_at: TS, type, data: { id: "resp_hookgate" } });
      const headers = swHeaders("webhook", StandardWebhook, secret, `wh_hookgate${i}`, TS, payload);
      await at(TS + 1, () => openai.webhooks.verifySignature(payload, headers, secret));
      push({ provider: "openai", sdk: checkedBy("openai"), secret, payload, headers, note: `OpenAI ${type}` });
    }
    for (const [i, status] of ["starting", "succeeded"].entries()) {
      const payload = compact({ id: "ufawqhfynnddngldkgtslldrkq", status, created_at: iso(TS), input: { prompt: "an astronaut" } });
      const headers = swHeaders("webhook", StandardWebhook, secret, `msg_replicate${i}`, TS, payload);
      const ok = await replicateValidate({ id: headers["webhook-id"], timestamp: headers["webhook-timestamp"], signature: headers["webhook-signature"], body: payload, secret });
      assert.equal(ok, true);
      push({ provider: "replicate", sdk: checkedBy("replicate"), secret, payload, headers, note: `Replicate prediction ${status}` });
    }
    // Polar's secrets from before 2026-09-08 MAC with their raw bytes, as
    // its SDK passes base64(secret) to the Standard Webhooks library.
    const polarSecret = "whsec_polarLegacySecretTest123";
    for (const [i, type] of ["order.created", "order.paid"].entries()) {
      const payload = compact({ type, timestamp: iso(TS), data: { id: "8b4c0c1e-3f6a-4d2b-9f3e-1a2b3c4d5e6f", status: i ? "paid" : "pending" } });
      const headers = swHeaders("webhook", StandardWebhook, Buffer.from(polarSecret).toString("base64"), `msg_polar${i}`, TS, payload);
      push({ provider: "polar", sdk: sdkVersion("standardwebhooks"), secret: polarSecret, payload, headers: { ...headers, "User-Agent": "polar.sh webhooks" }, note: `Polar ${type}, a secret MACing with its raw bytes` });
    }
    for (const [i, type] of ["payment.created", "payment.succeeded"].entries()) {
      const payload = compact({ id: `msg_whop${i}`, api_version: "v1", type, timestamp: iso(TS), data: { id: "pay_hookgate" } });
      push({ provider: "whop", sdk: perDocs("https://docs.whop.com/developer/guides/webhooks"), secret, payload, headers: swHeaders("webhook", StandardWebhook, secret, `msg_whop${i}`, TS, payload), note: `Whop ${type}` });
    }
  }

  // ------------------------------------------------- plain body HMACs -----
  // [provider, header, prefix, algorithm, encoding, secret, docs, bodies, extra headers]
  const bodyHMACs = [
    ["persona", null],
    ["docusign", "X-DocuSign-Signature-1", "", "sha256", "base64", "1nbN+wFI9Qi/6Fq6mEy2Sm25pWwKV+yGrm1MD2dEH0w=", "https://developers.docusign.com/platform/webhooks/connect/validate",
      [{ event: "envelope-sent", generatedDateTime: "2026-01-01T00:00:00.0000000Z", retryCount: 0, data: { accountId: "a1", envelopeId: "93be49ab-0000-4000-8000-000000000001" } },
        { event: "envelope-completed", generatedDateTime: "2026-01-01T00:05:00.0000000Z", retryCount: 0, data: { accountId: "a1", envelopeId: "93be49ab-0000-4000-8000-000000000001" } }], { "X-Authorization-Digest": "HMACSHA256" }],
    ["segment", "X-Signature", "", "sha1", "hex", "segment-shared-secret", "https://segment.com/docs/connections/destinations/catalog/actions-webhook/",
      [{ type: "track", event: "Order Completed", messageId: "ajs-1" }, { type: "track", event: "Order Refunded", messageId: "ajs-2" }], {}],
    ["calcom", "X-Cal-Signature-256", "", "sha256", "hex", "calcom_whsec_test", "https://cal.com/docs/developing/guides/automation/webhooks",
      [{ triggerEvent: "BOOKING_CREATED", createdAt: "2026-01-01T00:00:00.000Z", payload: { uid: "bk_7Qz2x" } }, { triggerEvent: "BOOKING_CANCELLED", createdAt: "2026-01-01T00:10:00.000Z", payload: { uid: "bk_7Qz2x" } }], { "X-Cal-Webhook-Version": "2021-10-20" }],
    ["tally", "Tally-Signature", "", "sha256", "base64", "tally_signing_secret_test", "https://tally.so/help/webhooks",
      [{ eventId: "a4cb511e-0000-4000-8000-000000000001", eventType: "FORM_RESPONSE", data: { responseId: "2wgx4n", formId: "VwbNEw" } }, { eventId: "b4cb511e-0000-4000-8000-000000000002", eventType: "FORM_RESPONSE", data: { responseId: "3xyz5p", formId: "VwbNEw" } }], {}],
    ["patreon", "X-Patreon-Signature", "", "md5", "hex", "patreon_webhook_secret_test", "https://docs.patreon.com/#webhooks",
      [{ data: { type: "member", id: "03ca69c3-0000-4000-8000-000000000001", attributes: { patron_status: "active_patron" } } }, { data: { type: "member", id: "03ca69c3-0000-4000-8000-000000000001", attributes: { patron_status: "former_patron" } } }], { "X-Patreon-Event": "members:update" }],
    ["attio", "Attio-Signature", "", "sha256", "hex", "attio_wh_secret_test_ab12", "https://docs.attio.com/rest-api/guides/webhooks",
      [{ webhook_id: "1f9a7c2e", events: [{ event_type: "record.created", id: { record_id: "bf071e1f" } }] }, { webhook_id: "1f9a7c2e", events: [{ event_type: "record.updated", id: { record_id: "bf071e1f" } }] }], { "Idempotency-Key": "7b1e0b2c-7d3a-4bde-9a3c-2a1f8d6e5c4b" }],
    ["greenhouse", "Signature", "sha256 ", "sha256", "hex", "gh_secret_key_test_Zq9", "https://developers.greenhouse.io/webhooks.html",
      [{ action: "ping", payload: { web_hook_id: 4281 } }, { action: "candidate_stage_change", payload: { application: { id: 71980812 } } }], { "Greenhouse-Event-ID": "0c9f3b1e-5a2d-4f7e-8b6c-1d2e3f4a5b6c" }],
    ["ashby", "Ashby-Signature", "sha256=", "sha256", "hex", "ashby_secret_token_test_77", "https://developers.ashbyhq.com/docs/authenticating-webhooks",
      [{ action: "applicationSubmit", data: { application: { id: "0f8a1c2d" } } }, { action: "applicationUpdate", data: { application: { id: "0f8a1c2d" } } }], {}],
    ["checkout-com", "Cko-Signature", "", "sha256", "hex", "cko-signature-key-test-0123", "https://www.checkout.com/docs/developer-resources/event-notifications/receive-webhooks",
      [{ id: "evt_1", type: "payment_approved", data: { id: "pay_mbabizu24mvu3mela5njyhpit4" } }, { id: "evt_2", type: "payment_captured", data: { id: "pay_mbabizu24mvu3mela5njyhpit4" } }], {}],
    ["mollie", "X-Mollie-Signature", "sha256=", "sha256", "hex", "test_webhook_secret_0123456", "https://docs.mollie.com/reference/webhooks-new",
      [{ resource: "event", id: "event_1", type: "sales-invoice.issued", entityId: "invoice_4Y0eZitmBnQ5jsBYZIBw" }, { resource: "event", id: "event_2", type: "sales-invoice.paid", entityId: "invoice_4Y0eZitmBnQ5jsBYZIBw" }], {}],
    ["paystack", "x-paystack-signature", "", "sha512", "hex", "sk_test_0123456789abcdef0123456789abcdef01234567", "https://paystack.com/docs/payments/webhooks/",
      [{ event: "charge.success", data: { id: 302961, reference: "qTPrJoy9Bx", status: "success" } }, { event: "refund.processed", data: { id: 302961, reference: "qTPrJoy9Bx", status: "processed" } }], {}],
    ["xero", "x-xero-signature", "", "sha256", "base64", "Kd4wfp3pz8xR0J3uTOi8pOf+0ChYr0t1Ke6cWmMVFPb2IHRxfQIxPLbwxnu8Km0VqZ+n2C7kWj6PmHBSTxZ3Lg==", "https://developer.xero.com/documentation/webhooks/configuring-your-server",
      [{ events: [{ resourceId: "c2cc9b6e-0000-4000-8000-000000000001", eventDateUtc: "2026-01-01T00:00:00.000", eventType: "CREATE", eventCategory: "INVOICE", tenantId: "t1", tenantType: "ORGANISATION" }], lastEventSequence: 1, firstEventSequence: 1, entropy: "A" },
        { events: [], lastEventSequence: 0, firstEventSequence: 0, entropy: "YTTCHUDEKNKCNSYXDBGP" }], {}],
    ["quickbooks", "intuit-signature", "", "sha256", "base64", "intuit-verifier-token-0123456789", "https://developer.intuit.com/app/developer/qbo/docs/develop/webhooks",
      [[{ specversion: "1.0", id: "7a1c0000-0000-4000-8000-000000000001", source: "intuit.qbo", type: "qbo.invoice.created.v1", intuitentityid: "145", intuitaccountid: "9341453172781234", data: {} }],
        [{ specversion: "1.0", id: "7a1c0000-0000-4000-8000-000000000002", source: "intuit.qbo", type: "qbo.invoice.updated.v1", intuitentityid: "145", intuitaccountid: "9341453172781234", data: {} }]], {}],
    ["lago", "X-Lago-Signature", "", "sha256", "base64", "lago_hmac_key_test_c0ffee", "https://getlago.com/docs/api-reference/webhooks/format---signature",
      [{ webhook_type: "invoice.created", object_type: "invoice", invoice: { lago_id: "1a90" } }, { webhook_type: "invoice.payment_status_updated", object_type: "invoice", invoice: { lago_id: "1a90" } }], { "X-Lago-Signature-Algorithm": "hmac", "X-Lago-Unique-Key": "6f1c2a9e-3b7d-4c1e-9a2f-0d8e7b6a5c41" }],
    ["flutterwave", "flutterwave-signature", "", "sha256", "base64", "my_flw_secret_hash_2026", "https://developer.flutterwave.com/docs/webhooks",
      [{ event: "charge.completed", data: { id: 285959875, status: "pending" } }, { event: "charge.completed", data: { id: 285959875, status: "successful" } }], {}],
    ["alchemy", "X-Alchemy-Signature", "", "sha256", "hex", "whsec_alchemy_signing_key_test", "https://docs.alchemy.com/reference/notify-api-quickstart",
      [{ webhookId: "wh_octjglnywaupz6th", id: "whevt_1", type: "ADDRESS_ACTIVITY" }, { webhookId: "wh_octjglnywaupz6th", id: "whevt_2", type: "MINED_TRANSACTION" }], {}],
    ["ms-teams", "Authorization", "HMAC ", "sha256", "base64", "vqF0En+Z0ucuRTM/01o2GuhMH3hKKk/N2bOmlM31zaA=", "https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-outgoing-webhook",
      [{ type: "message", id: "1735689600000", text: "<at>Hook</at> hello" }, { type: "message", id: "1735689660000", replyToId: "1735689600000", text: "<at>Hook</at> status?" }], {}],
    ["nylas", "x-nylas-signature", "", "sha256", "hex", "nylas_webhook_secret_test_m8", "https://developer.nylas.com/docs/v3/notifications/webhooks/",
      [{ specversion: "1.0", type: "message.created", id: "mock-id-1a2b3c", data: { object: { id: "18f1b2c3d4e5f607" } } }, { specversion: "1.0", type: "message.updated", id: "mock-id-4d5e6f", data: { object: { id: "18f1b2c3d4e5f607" } } }], {}],
    ["mailersend", null],
    ["heroku", "Heroku-Webhook-Hmac-SHA256", "", "sha256", "base64", "heroku-test-secret-0123", "https://devcenter.heroku.com/articles/app-webhooks",
      [{ action: "create", id: "4273290b-193c-42fa-8931-7f2c92c5b28f", data: { id: "01234567-89ab", status: "pending" } }, { action: "update", id: "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f", data: { id: "01234567-89ab", status: "succeeded" } }], {}],
    ["gitea", "X-Gitea-Signature", "", "sha256", "hex", "gitea-test-secret-0123", "https://docs.gitea.com/usage/webhooks",
      [{ action: "opened", number: 1 }, { action: "closed", number: 1 }], { "X-Gitea-Delivery": "f6266f16-1bf3-46a5-9ea4-602e06ead473", "X-Gitea-Event": "issues" }],
    ["terraform-cloud", "X-TFE-Notification-Signature", "", "sha512", "hex", "tfc-test-token-0123456", "https://developer.hashicorp.com/terraform/cloud-docs/api-docs/notification-configurations#notification-authenticity",
      [{ payload_version: 1, notification_configuration_id: "nc-AeUQ2zfKZzW9TiGZ", run_id: "run-1", notifications: [{ trigger: "run:created", run_updated_at: "2026-01-01T00:00:00.000Z" }] },
        { payload_version: 1, notification_configuration_id: "nc-AeUQ2zfKZzW9TiGZ", run_id: null, notifications: [{ trigger: "verification", run_updated_at: null }] }], {}],
    ["launchdarkly", "X-LD-Signature", "", "sha256", "hex", "frobozz-launchdarkly-secret", "https://launchdarkly.com/docs/home/infrastructure/webhooks",
      [{ _id: "57c0a8e29969090743529965", kind: "flag" }, { _id: "57c0a8e29969090743529966", kind: "flag" }], {}],
    ["doppler", "X-Doppler-Signature", "sha256=", "sha256", "hex", "dp_webhook_secret_test_q4", "https://docs.doppler.com/docs/webhooks",
      [{ type: "config.secrets.update", config: { name: "prd" } }, { type: "config.secrets.update", config: { name: "stg" } }], {}],
    ["dropbox", "X-Dropbox-Signature", "", "sha256", "hex", "app-secret-0123456789", "https://www.dropbox.com/developers/reference/webhooks",
      [{ list_folder: { accounts: ["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"] }, delta: { users: [12345678] } }, { list_folder: { accounts: ["dbid:AAA-AdT84WzkyLw5s590DbYF1CsVmpZ8qdU"] }, delta: { users: [23456789] } }], {}],
    ["clickup", "X-Signature", "", "sha256", "hex", "clickup-secret-0123456", "https://developer.clickup.com/docs/webhooksignature",
      [{ webhook_id: "7689a169", event: "taskCreated", task_id: "c0j", history_items: [{ id: "1" }] }, { webhook_id: "7689a169", event: "taskStatusUpdated", task_id: "c0j", history_items: [{ id: "2" }] }], {}],
  ];
  for (const [provider, header, prefix, alg, enc, secret, docs, bodies, extra] of bodyHMACs) {
    if (!header) continue;
    for (const body of bodies) {
      const payload = compact(body);
      push({ provider, sdk: perDocs(docs), secret, payload, headers: { ...json, ...extra, [header]: prefix + hmac(alg, header === "Authorization" ? Buffer.from(secret, "base64") : secret, payload, enc) },
        note: `${provider} ${body.type ?? body.event ?? body.action ?? body.event_type ?? body.webhook_type ?? body.triggerEvent ?? "event"}` });
    }
  }
  // Airtable keys with the decoded macSecretBase64.
  {
    const secret = "c2VjcmV0LW1hYy1rZXktMzItYnl0ZXMtbG9uZyEhISE=";
    for (const ts of ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:07.512Z"]) {
      const payload = compact({ base: { id: "appjRdIX59U4YEy4l" }, webhook: { id: "achXH94CxHYGdUcje" }, timestamp: ts });
      push({ provider: "airtable", sdk: perDocs("https://airtable.com/developers/web/api/webhooks-overview"), secret, payload,
        headers: { ...json, "X-Airtable-Content-MAC": "hmac-sha256=" + hmac("sha256", Buffer.from(secret, "base64"), payload, "hex") }, note: `Airtable ping ${ts}` });
    }
  }
  // Trello signs the body followed by the callback URL.
  {
    const secret = "trello-oauth-secret-0123";
    const url = urlFor("trello", "?x=1");
    for (const [id, type] of [["51f9424bcd6e040f3c002412", "updateCard"], ["51f9424bcd6e040f3c002499", "commentCard"]]) {
      const payload = compact({ action: { id, type, data: { card: { id: "51a79e72dbb7e23c7c003778" } } }, model: { id: "4d5ea62fd76aa1136000000c" } });
      push({ provider: "trello", sdk: perDocs("https://developer.atlassian.com/cloud/trello/guides/rest-api/webhooks/"), secret, payload, url,
        headers: { ...json, "X-Trello-Webhook": hmac("sha1", secret, payload + url, "base64") }, note: `Trello ${type}` });
    }
  }

  // ----------------------------------------- timestamped HMACs, by docs ---
  const tsHMACs = [
    // provider, docs, secret, key bytes, header maker(ts, payload)
    ["persona", "https://docs.withpersona.com/docs/webhooks-best-practices", "wbhsec_test_new_fedcba9876543210", (s, ts, p) => ({ "Persona-Signature": `t=${ts},v1=${hmac("sha256", s, `${ts}.${p}`, "hex")} t=${ts},v1=${hmac("sha256", "wbhsec_test_old_0123456789abcdef", `${ts}.${p}`, "hex")}` }),
      [{ data: { type: "event", id: "evt_A1", attributes: { name: "inquiry.completed" } } }, { data: { type: "event", id: "evt_B2", attributes: { name: "inquiry.approved" } } }]],
    ["zendesk", "https://developer.zendesk.com/documentation/webhooks/verifying/", "dGhpc19zZWNyZXRfaXNfZm9yX3Rlc3Rpbmdfb25seQ==", (s, ts, p) => ({ "X-Zendesk-Webhook-Signature": hmac("sha256", s, iso(ts) + p, "base64"), "X-Zendesk-Webhook-Signature-Timestamp": iso(ts) }),
      [{ type: "zen:event-type:ticket.created", id: "1a2b3c4d-0000-4000-8000-000000000001", subject: "zen:ticket:5158" }, { type: "zen:event-type:ticket.status_changed", id: "1a2b3c4d-0000-4000-8000-000000000002", subject: "zen:ticket:5158" }]],
    ["front", "https://dev.frontapp.com/docs/application-webhooks", "front_app_secret_0123456789", (s, ts, p) => ({ "X-Front-Signature": hmac("sha256", s, `${ts * 1000}:${p}`, "base64"), "X-Front-Request-Timestamp": String(ts * 1000) }),
      [{ type: "inbound_received", authorization: { id: "cmp_1" }, payload: { id: "evt_1", conversation: { id: "cnv_1" } } }, { type: "tag", authorization: { id: "cmp_1" }, payload: { id: "evt_2", conversation: { id: "cnv_1" } } }]],
    ["close", "https://developer.close.com/topics/webhooks/", "abababababababababababababababababababababababababababababababab", (s, ts, p) => ({ "close-sig-hash": hmac("sha256", Buffer.from(s, "hex"), `${ts}${p}`, "hex"), "close-sig-timestamp": String(ts) }),
      [{ subscription_id: "whsub_4kXz0q2Yc8mN1pR7", event: { id: "ev_2SVzSVyhJuKmxkBo3bE6Mv", action: "created" } }, { subscription_id: "whsub_4kXz0q2Yc8mN1pR7", event: { id: "ev_7hT3kLmP0qRs2UvW4xYz5A", action: "updated" } }]],
    ["recurly", "https://docs.recurly.com/recurly-subscriptions/docs/signature-verification", "354fab5b7d4e36e6ac5a7e1e8e6d9d", (s, ts, p) => ({ "recurly-signature": `${ts * 1000},${hmac("sha256", s, `${ts * 1000}.${p}`, "hex")}` }),
      [{ id: "rjxwmwedwqug", object_type: "account", event_type: "created", event_time: iso(TS) }, { id: "rjxwmwedwqug", object_type: "account", event_type: "updated", event_time: iso(TS + 60) }]],
    ["knock", "https://docs.knock.app/developer-tools/outbound-webhooks/overview", "knock_wh_secret_test_3c9", (s, ts, p) => ({ "x-knock-signature": `t=${ts * 1000},s=${hmac("sha256", s, `${ts * 1000}.${p}`, "base64")}`, "x-knock-event": "message.sent" }),
      [{ __typename: "Event", type: "message.sent", created_at: iso(TS), data: { id: "2mG1XzL9qR0aB3cD4eF5gH6iJ7k" } }, { __typename: "Event", type: "message.undelivered", created_at: iso(TS + 7), data: { id: "2mG1XzL9qR0aB3cD4eF5gH6iJ7k" } }]],
    ["buildkite", "https://buildkite.com/docs/apis/webhooks/pipelines#webhook-signature", "buildkite-webhook-token-0123", (s, ts, p) => ({ "X-Buildkite-Signature": `timestamp=${ts},signature=${hmac("sha256", s, `${ts}.${p}`, "hex")}`, "X-Buildkite-Event": "build.running" }),
      [{ event: "build.running", build: { id: "f62a1b4d-10f9-4790-bc1c-e2c3a0c80983", state: "running" } }, { event: "build.finished", build: { id: "f62a1b4d-10f9-4790-bc1c-e2c3a0c80983", state: "passed" } }]],
    ["frame-io", "https://next.developer.frame.io/platform/docs/guides/webhooks", "fio_signing_secret_test_x1", (s, ts, p) => ({ "X-Frameio-Signature": "v0=" + hmac("sha256", s, `v0:${ts}:${p}`, "hex"), "X-Frameio-Request-Timestamp": String(ts) }),
      [{ type: "file.ready", resource: { type: "file", id: "0f2b6c3e-1a4d-4e8f-9b7c-5d6e7f8a9b0c" } }, { type: "comment.created", resource: { type: "comment", id: "1e3c7d4f-2b5e-4f90-8c1d-6e7f8a9b0c1d" } }]],
    ["webflow", "https://developers.webflow.com/data/docs/working-with-webhooks", "webflow-client-secret-0123", (s, ts, p) => ({ "x-webflow-signature": hmac("sha256", s, `${ts * 1000}:${p}`, "hex"), "x-webflow-timestamp": String(ts * 1000) }),
      [{ triggerType: "collection_item_created", payload: { id: "65a5d5f2f7e2b40012345682" } }, { triggerType: "collection_item_changed", payload: { id: "65a5d5f2f7e2b40012345682", lastUpdated: iso(TS) } }]],
    ["imagekit", "https://imagekit.io/docs/webhooks", "whsec_xeO2UNkfKMQnfJf7Q/Qx+fYptL1wabXd", (s, ts, p) => ({ "x-ik-signature": `t=${ts * 1000},v1=${hmac("sha256", s, `${ts * 1000}.${p}`, "hex")}` }),
      [{ type: "video.transformation.accepted", id: "6b3f0000-0000-4000-8000-000000000001" }, { type: "video.transformation.ready", id: "6b3f0000-0000-4000-8000-000000000002" }]],
  ];
  for (const [provider, docs, secret, sign, bodies] of tsHMACs) {
    for (const body of bodies) {
      const payload = compact(body);
      push({ provider, sdk: perDocs(docs), secret, payload, headers: { ...json, ...sign(secret, TS, payload) }, note: `${provider} ${body.type ?? body.event_type ?? body.event ?? body.triggerType ?? body.data?.attributes?.name ?? body.event?.action}` });
    }
  }

  // ---------------------------------------------------- SDK-checked HMACs ---
  {
    const secret = "_ABC123abc123ABC123abc123ABC123_";
    const verifier = new OnfidoVerifier(secret);
    for (const action of ["check.started", "check.completed"]) {
      const payload = compact({ payload: { resource_type: "check", action, object: { id: "check-123", status: action === "check.started" ? "in_progress" : "complete", href: "https://api.onfido.com/v3/checks/check-123" } } });
      const sig = hmac("sha256", secret, payload, "hex");
      verifier.readPayload(payload, sig);
      push({ provider: "onfido", sdk: checkedBy("@onfido/api"), secret, payload, headers: { ...json, "X-SHA2-Signature": sig }, note: `Onfido ${action}` });
    }
    // The SDK's own test vector (test/classic-webhook-event-verifier.test.ts).
    const payload = '{"payload":{"resource_type":"check","action":"check.completed","object":{"id":"check-123","status":"complete","completed_at_iso8601":"2020-01-01T00:00:00Z","href":"https://api.onfido.com/v3/checks/check-123"}}}';
    push({ provider: "onfido", sdk: "published: onfido-node test/classic-webhook-event-verifier.test.ts", secret, payload, headers: { ...json, "X-SHA2-Signature": "a0082d7481f9f0a2907583dbe1f344d6d4c0d9989df2fd804f98479f60cd760e" }, note: "Onfido SDK vector" });
  }
  {
    const secret = "cio_whsec_9f8e7d6c5b4a39281706f5e4d3c2b1a0";
    for (const [id, metric] of [["01E4C4C6P79C12J5A6KPE6XNFD", "sent"], ["01E4C4C6P79C12J5A6KPE6XNFE", "delivered"]]) {
      const payload = compact({ data: { delivery_id: "RPILAgUBcRhIBqSfeiIwdIYJKxTY" }, event_id: id, object_type: "email", metric, timestamp: TS });
      const signature = hmac("sha256", secret, `v0:${TS}:${payload}`, "hex");
      assert.equal(cioVerify({ signingSecret: secret, timestamp: String(TS), body: payload, signature }), true);
      push({ provider: "customer-io", sdk: checkedBy("customerio-node"), secret, payload, headers: { ...json, "X-CIO-Signature": signature, "X-CIO-Timestamp": String(TS) }, note: `Customer.io ${metric}` });
    }
  }
  {
    const secret = "rzp_test_webhook_secret";
    for (const [id, status] of [["E001", "authorized"], ["E002", "captured"]]) {
      const payload = compact({ entity: "event", account_id: "acc_BFQ7uQEaa7j2z7", event: `payment.${status}`, contains: ["payment"], payload: { payment: { entity: { id: "pay_DESlfW9H8K9uqM", status } } }, created_at: TS });
      const sig = hmac("sha256", secret, payload, "hex");
      assert.equal(Razorpay.validateWebhookSignature(payload, sig, secret), true);
      push({ provider: "razorpay", sdk: checkedBy("razorpay"), secret, payload, headers: { ...json, "X-Razorpay-Signature": sig, "X-Razorpay-Event-Id": id }, note: `Razorpay payment.${status}` });
    }
  }
  {
    const secret = "ED7D658C-D8EB-4941-948B-3973214F2D49";
    for (const action of ["created", "confirmed"]) {
      const payload = compact({ events: [{ id: `EV00${action}`, created_at: iso(TS), resource_type: "payments", action, links: { payment: "PM01ABCD123456" } }], meta: { webhook_id: "WB0001" } });
      const sig = hmac("sha256", secret, payload, "hex");
      gocardlessParse(payload, secret, sig);
      push({ provider: "gocardless", sdk: checkedBy("gocardless-nodejs"), secret, payload, headers: { ...json, "Webhook-Signature": sig }, note: `GoCardless payment ${action}` });
    }
  }
  {
    const secret = "orb_whsec_test_7d3f2a0123456789";
    const orb = new Orb({ apiKey: "unused" });
    for (const [id, type] of [["evt_Orb1a", "customer.created"], ["evt_Orb1b", "invoice.issued"]]) {
      const payload = compact({ id, created_at: iso(TS), type, properties: {} });
      const stamp = new Date(TS * 1000).toISOString().replace("Z", "").replace(/\.(\d{3})$/, ".$1000");
      const headers = { ...json, "X-Orb-Timestamp": stamp, "X-Orb-Signature": "v1=" + hmac("sha256", secret, `v1:${stamp}:${payload}`, "hex") };
      await at(TS + 1, () => orb.webhooks.verifySignature(payload, headers, secret));
      push({ provider: "orb", sdk: checkedBy("orb-billing"), secret, payload, headers, note: `Orb ${type}` });
    }
  }
  {
    const secret = "ep_whsec_test_9b1c0123";
    const client = new EasyPostClient("EZAK_unused");
    for (const [id, status] of [["evt_a1b2c3", "in_transit"], ["evt_f6g7h8", "delivered"]]) {
      const payload = compact({ id, object: "Event", description: "tracker.updated", result: { id: "trk_d4e5", object: "Tracker", status } });
      const headers = { ...json, "X-Hmac-Signature": "hmac-sha256-hex=" + hmac("sha256", secret.normalize("NFKD"), payload, "hex") };
      client.Utils.validateWebhook(Buffer.from(payload), { "X-Hmac-Signature": headers["X-Hmac-Signature"] }, secret);
      push({ provider: "easypost", sdk: checkedBy("@easypost/api"), secret, payload, headers, note: `EasyPost tracker ${status}` });
    }
  }
  {
    const secret = "ms_signing_secret_test_5Ee";
    for (const [id, type] of [["62f114f8165fe0d8db0288e3", "delivered"], ["62f114f8165fe0d8db0288f4", "opened"]]) {
      const payload = compact({ type: `activity.${type}`, domain_id: "yzkq340nv50gd796", created_at: iso(TS), data: { object: "activity", id, type } });
      push({ provider: "mailersend", sdk: perDocs("https://developers.mailersend.com/api/v1/webhooks.html"), secret, payload, headers: { ...json, Signature: hmac("sha256", secret, payload, "hex") }, note: `MailerSend ${type}` });
    }
  }
  {
    const channelSecret = "8c570fa6dd201bb328f1c1eac23a96d8";
    for (const [id, type] of [["01H810YECXQQZ37VAXPF6H9E6T", "message"], ["01H810YG4ZQ8Q0Y9ZB9S3QHK2M", "unsend"]]) {
      const payload = compact({ destination: "U8e742f61d673b39c7fff3cecb7536ef0", events: [{ type, webhookEventId: id, deliveryContext: { isRedelivery: false }, timestamp: TS * 1000, mode: "active" }] });
      const sig = hmac("sha256", channelSecret, payload, "base64");
      assert.equal(lineValidate(payload, channelSecret, sig), true);
      push({ provider: "line", sdk: checkedBy("@line/bot-sdk"), secret: channelSecret, payload, headers: { ...json, "x-line-signature": sig }, note: `LINE ${type}` });
    }
    const verify = compact({ destination: "U8e742f61d673b39c7fff3cecb7536ef0", events: [] });
    push({ provider: "line", sdk: checkedBy("@line/bot-sdk"), secret: channelSecret, payload: verify, headers: { ...json, "x-line-signature": hmac("sha256", channelSecret, verify, "base64") }, note: "LINE console verify request", expect_handshake_response: "" });
  }
  {
    const appKey = "278d425bdf160c739803", appSecret = "7ad3773142a6692b25b8";
    const pusher = new Pusher({ appId: "1", key: appKey, secret: appSecret, cluster: "eu" });
    for (const name of ["member_added", "member_removed"]) {
      const payload = compact({ time_ms: TS * 1000, events: [{ name, channel: "presence-room-42", user_id: "u_1001" }] });
      const headers = { "Content-Type": "application/json", "X-Pusher-Key": appKey, "X-Pusher-Signature": hmac("sha256", appSecret, payload, "hex") };
      assert.equal(pusher.webhook({ headers: { "x-pusher-key": appKey, "x-pusher-signature": headers["X-Pusher-Signature"], "content-type": "application/json" }, rawBody: payload }).isValid(), true);
      push({ provider: "pusher", sdk: checkedBy("pusher"), secret: `${appKey}:${appSecret}`, payload, headers, note: `Pusher ${name}` });
    }
  }
  {
    const apiKey = "stream-key-1", apiSecret = "tsec2-stream-secret";
    const client = new StreamChat(apiKey, apiSecret);
    for (const [type, text] of [["message.new", "hi"], ["message.updated", "hi, edited"]]) {
      const payload = compact({ type, cid: "messaging:general", message: { id: "8bffc454-e1da-4d91-8b88-a87853dfb41c", text } });
      const sig = hmac("sha256", apiSecret, payload, "hex");
      assert.equal(client.verifyWebhook(payload, sig), true);
      push({ provider: "stream", sdk: checkedBy("stream-chat"), secret: `${apiKey}:${apiSecret}`, payload, headers: { ...json, "X-Signature": sig, "X-Api-Key": apiKey, "X-Webhook-Id": `wh-${type}` }, note: `Stream ${type}` });
    }
  }
  {
    const token = "secret_abc123_verification_token";
    for (const [id, type] of [["367cba44-b6f3-4c92-81e7-6a2e9659efd4", "page.created"], ["467cba44-b6f3-4c92-81e7-6a2e9659efd5", "page.properties_updated"]]) {
      const payload = compact({ id, timestamp: iso(TS), type, attempt_number: 1, entity: { id: "153104cd-477e-809d-8dc4-ff2d96ae3090", type: "page" } });
      const signature = "sha256=" + hmac("sha256", token, payload, "hex");
      assert.equal(await notionVerify({ body: payload, signature, verificationToken: token }), true);
      push({ provider: "notion", sdk: checkedBy("@notionhq/client"), secret: token, payload, headers: { ...json, "X-Notion-Signature": signature }, note: `Notion ${type}` });
    }
  }
  {
    const secret = "sk_test_workos_webhook_secret";
    const workos = new WorkOS("sk_test_unused");
    for (const [id, event] of [["event_01HOOKGATE1", "dsync.user.created"], ["event_01HOOKGATE2", "dsync.user.updated"]]) {
      const payload = compact({ id, event, data: { id: "directory_user_01E1X" }, created_at: iso(TS) });
      const t = TS * 1000 + 123;
      const sigHeader = `t=${t}, v1=${hmac("sha256", secret, `${t}.${payload}`, "hex")}`;
      await at(TS + 1, () => workos.webhooks.verifyHeader({ payload, sigHeader, secret }));
      push({ provider: "workos", sdk: checkedBy("@workos-inc/node"), secret, payload, headers: { ...json, "WorkOS-Signature": sigHeader }, note: `WorkOS ${event}` });
    }
  }
  {
    const token = "s3cr3t_Token-01";
    for (const [update_id, text] of [[10000, "/start"], [10001, "/help"]]) {
      const payload = compact({ update_id, message: { message_id: 1365, date: TS, chat: { id: 1111111, type: "private" }, text } });
      push({ provider: "telegram", sdk: perDocs("https://core.telegram.org/bots/api#setwebhook"), secret: token, payload, headers: { ...json, "X-Telegram-Bot-Api-Secret-Token": token }, note: `Telegram update ${update_id}` });
    }
  }
  {
    const secret = "hookgate:chargebee-password";
    for (const [id, type] of [["ev_1", "subscription_created"], ["ev_2", "subscription_renewed"]]) {
      const payload = compact({ id, occurred_at: TS, object: "event", event_type: type, content: { subscription: { id: "sub_1" } } });
      push({ provider: "chargebee", sdk: perDocs("https://www.chargebee.com/docs/2.0/webhook_settings.html"), secret, payload, headers: { ...json, Authorization: "Basic " + Buffer.from(secret).toString("base64") }, note: `Chargebee ${type}` });
    }
  }
  {
    // CircleCI's documented examples (circleci.com/docs/webhooks, "Validate webhooks").
    push({ provider: "circleci", sdk: "published: CircleCI docs, Validate webhooks (Python example)", secret: "secret", payload: "foo", headers: { ...json, "circleci-signature": "v1=773ba44693c7553d6ee20f61ea5d2757a9a4f4a44d2841ae4e95b52e4cd62db4" }, note: "CircleCI documented example" });
    const secret = "circleci-secret-token-0123";
    for (const type of ["job-completed", "workflow-completed"]) {
      const payload = compact({ id: `8bd71c28-4969-3677-8940-3e3a61c4666${type.length}`, type, happened_at: iso(TS) });
      push({ provider: "circleci", sdk: perDocs("https://circleci.com/docs/webhooks/"), secret, payload, headers: { ...json, "circleci-signature": "v1=" + hmac("sha256", secret, payload, "hex"), "circleci-event-type": type }, note: `CircleCI ${type}` });
    }
  }
  {
    // Revolut's documented examples (Merchant and Business API).
    const secret = "wsk_r59a4HfWVAKycbCaNO1RvgCJec02gRd8";
    const ts = 1683650202360;
    for (const [payload, sig, note] of [
      ['{"event": "ORDER_COMPLETED","order_id": "9fc01989-3f61-4484-a5d9-ffe768531be9","merchant_order_ext_ref": "Test #3928"}', "v1=281b1f1aebe9357b7b128fd6a3aae0fe202c901add4ce75e6d038e498871d7fd", "Revolut Merchant API example"],
      ['{"data":{"id":"645a7696-22f3-aa47-9c74-cbae0449cc46","new_state":"completed","old_state":"pending","request_id":"app_charges-9f5d5eb3-1e06-46c5-b1c0-3914763e0bcb"},"event":"TransactionStateChanged","timestamp":"2023-05-09T16:36:38.028960Z"}', "v1=bca326fb378d0da7f7c490ad584a8106bab9723d8d9cdd0d50b4c5b3be3837c0", "Revolut Business API example"],
    ]) {
      assert.equal("v1=" + hmac("sha256", secret, `v1.${ts}.${payload}`, "hex"), sig);
      fixtures.push({ provider: "revolut", sdk: "published: Revolut docs, Verify the payload signature", secret, payload, headers: { ...json, "Revolut-Signature": sig, "Revolut-Request-Timestamp": String(ts) }, timestamp: Math.floor(ts / 1000), note });
    }
  }

  // ---------------------------------------------------- asymmetric and JWT ---
  {
    // RFC 8032's first test key.
    const seed = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex");
    const priv = createPrivateKey({ key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]), format: "der", type: "pkcs8" });
    const pub = createPublicKey(priv).export({ format: "der", type: "spki" }).subarray(12).toString("base64");
    const telnyx = new Telnyx({ apiKey: "KEY_unused", publicKey: pub });
    for (const [id, type] of [["b301ed3f-1490-491f-995f-6e64e69674d4", "message.sent"], ["4ee8c3a6-4995-4309-a3c6-38e3db9ea4be", "message.finalized"]]) {
      const payload = compact({ data: { event_type: type, id, occurred_at: iso(TS), payload: { id: "40385f64-5717-4562-b3fc-2c963f66afa6", record_type: "message" }, record_type: "event" }, meta: { attempt: 1 } });
      const headers = { ...json, "telnyx-timestamp": String(TS), "telnyx-signature-ed25519": cryptoSign(null, Buffer.from(`${TS}|${payload}`), priv).toString("base64") };
      await at(TS + 1, () => telnyx.webhooks.unwrap(payload, { headers, key: pub }));
      push({ provider: "telnyx", sdk: checkedBy("telnyx"), secret: pub, signing_key: seed.toString("hex"), payload, headers, note: `Telnyx ${type}` });
    }
  }
  {
    // Plivo's V3 vectors (plivo-go utils_test.go), also accepted by plivo-node.
    const token = "Y2Q2ZDgxZmY5YWRiOTI5YmQ1Njg0MTAxZWIyOTc4", nonce = "31627761595286130198";
    const params = { Direction: "outbound", From: "19792014278", ALegUUID: "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36", CallStatus: "in-progress", BillRate: "0.002", ParentAuthID: "MANWVLYTK4ZWU1YTY4QA",
      To: "sip:PlivoSignature382029104058171078704104@phone-qa.voice.plivodev.com", ALegRequestUUID: "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36", CallUUID: "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36",
      RequestUUID: "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36", "SIP-H-To": "<sip:PlivoSignature382029104058171078704104@52.9.11.55;transport=udp>;tag=1", SessionStart: "2020-04-08 11:34:33.238707", Event: "StartApp" };
    for (const [url, sig] of [["https://plivobin.non-prod.plivops.com/api/v1/validate_signature03.xml/?a=b&c=d", "k7Pusd4OxCIjR5IfA9iedDNu/h/gbdYqdzG/MiYtd1c="],
      ["https://plivobin.non-prod.plivops.com/api/v1/validate_signature03.xml", "iAjE5QqI37mbkYe4w3jTMudqEzbDufdqi7sYwTu64e0="]]) {
      assert.equal(plivo.validateV3Signature("POST", url, nonce, token, sig, params), true);
      push({ provider: "plivo", sdk: checkedBy("plivo"), secret: token, payload: new URLSearchParams(params).toString(), url,
        headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Plivo-Signature-V3": sig, "X-Plivo-Signature-V3-Nonce": nonce }, note: "Plivo V3 vector (plivo-go utils_test.go), POST" });
    }
  }
  {
    const secret = "ZmFrZS1zaWduYXR1cmUtc2VjcmV0LTMyYnl0ZXM";
    for (const [status, ts] of [["submitted", "2026-01-01T00:00:01.000Z"], ["delivered", "2026-01-01T00:00:05.000Z"]]) {
      const payload = compact({ message_uuid: "aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab", to: "447700900000", from: "447700900001", timestamp: ts, status, channel: "sms" });
      const token = jwtHS256(secret, { iat: TS, jti: `7f8e3b4a-${status}`, iss: "Vonage", payload_hash: createHash("sha256").update(payload).digest("hex"), api_key: "abcd1234", application_id: "aaaaaaaa-bbbb-cccc-dddd-0123456789ab" });
      assert.equal(vonageVerify(token, secret), true);
      push({ provider: "vonage", sdk: checkedBy("@vonage/jwt"), secret, payload, headers: { ...json, Authorization: `Bearer ${token}` }, note: `Vonage message ${status}` });
    }
  }
  {
    const apiKey = "abcdefg", apiSecret = "abababa-livekit-secret";
    const receiver = new LiveKitReceiver(apiKey, apiSecret);
    for (const [id, event] of [["EV_3Zq8rAb1cDeF", "participant_joined"], ["EV_9Kx2pQr7sTuV", "participant_left"]]) {
      const payload = compact({ event, room: { sid: "RM_nHPUfmxXrHry", name: "demo" }, participant: { sid: "PA_eU7nwP2s3FcN", identity: "alice" }, id, createdAt: String(TS) });
      const token = jwtHS256(apiSecret, { sha256: createHash("sha256").update(payload).digest("base64"), iss: apiKey, nbf: TS, iat: TS, exp: TS + 300 });
      await at(TS + 1, () => receiver.receive(payload, token));
      push({ provider: "livekit", sdk: checkedBy("livekit-server-sdk"), secret: `${apiKey}:${apiSecret}`, payload, headers: { "Content-Type": "application/webhook+json", Authorization: token }, note: `LiveKit ${event}` });
    }
  }
  {
    const current = "sig_hookgate_current_signing_key", next = "sig_hookgate_next_signing_key";
    const receiver = new QStashReceiver({ currentSigningKey: current, nextSigningKey: next });
    const url = urlFor("qstash");
    for (const [i, status] of ["started", "finished"].entries()) {
      const payload = compact({ build: "bld_42", status });
      const token = jwtHS256(current, { iss: "Upstash", sub: url, exp: TS + 300, nbf: TS, iat: TS, jti: `jwt_${i}`, body: createHash("sha256").update(payload).digest("base64url") });
      assert.equal(await at(TS + 1, () => receiver.verify({ signature: token, body: payload, url })), true);
      push({ provider: "qstash", sdk: checkedBy("@upstash/qstash"), secret: current, payload, url, headers: { ...json, "Upstash-Signature": token, "Upstash-Message-Id": `msg_${i}` }, note: `QStash message ${status}` });
    }
  }
  {
    const secret = "netlify-jws-test-secret";
    for (const state of ["building", "ready"]) {
      const payload = compact({ id: "6740f1c2a1b2c3d4e5f60718", site_id: "fa4dd95a-994e-4f89-8a7a-2d9e9fc36a32", state, updated_at: iso(TS) });
      const token = jwtHS256(secret, { iss: "netlify", sha256: createHash("sha256").update(payload).digest("hex") });
      push({ provider: "netlify", sdk: perDocs("https://docs.netlify.com/deploy/deploy-notifications/#payload-signature"), secret, payload, headers: { ...json, "X-Webhook-Signature": token }, note: `Netlify deploy ${state}` });
    }
  }
  {
    const secret = "monday-signing-secret-0123";
    for (const [uuid, type] of [["b58b54b7c3fbcc9b3c5c0a8e0c2f0d11", "create_pulse"], ["0f4c54b7c3fbcc9b3c5c0a8e0c2f0d12", "update_column_value"]]) {
      const payload = compact({ event: { app: "monday", type, boardId: 224535, pulseId: 983678, originalTriggerUuid: null, triggerUuid: uuid } });
      const token = jwtHS256(secret, { accountId: 1825529, userId: 4012689, aud: urlFor("monday"), exp: TS + 300, iat: TS, shortLivedToken: "SLT" });
      push({ provider: "monday", sdk: perDocs("https://developer.monday.com/apps/docs/authorization-header"), secret, payload, headers: { ...json, Authorization: token }, note: `monday.com ${type}` });
    }
    push({ provider: "monday", sdk: perDocs("https://developer.monday.com/api-reference/docs/webhooks"), secret, payload: '{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}', headers: json,
      note: "monday.com challenge (unsigned)", expect_handshake_response: { challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" } });
  }
  {
    // RS256 tokens made with a fixed test key, verified with its JWKS.
    const priv = createPrivateKey(readFileSync(join(keysDir, "rsa-fixture.pem")));
    const jwk = { ...createPublicKey(priv).export({ format: "jwk" }), kid: "hookgate-fixture-1", use: "sig", alg: "RS256" };
    const keys = compact({ keys: [jwk] });
    const rs256 = (claims) => {
      const signing = b64u(compact({ alg: "RS256", kid: jwk.kid, typ: "JWT" })) + "." + b64u(compact(claims));
      return signing + "." + cryptoSign("sha256", Buffer.from(signing), priv).toString("base64url");
    };
    const email = "push@hookgate-test.iam.gserviceaccount.com";
    for (const [id, status] of [["2070443601311540", "created"], ["2070443601311541", "updated"]]) {
      const payload = compact({ message: { attributes: { type: `order.${status}` }, data: Buffer.from(compact({ orderId: "123", status })).toString("base64"), messageId: id, publishTime: iso(TS) }, subscription: "projects/myproject/subscriptions/mysubscription" });
      const token = rs256({ aud: urlFor("google-pubsub"), azp: "1131", email, email_verified: true, exp: TS + 3600, iat: TS, iss: "https://accounts.google.com", sub: "1131" });
      push({ provider: "google-pubsub", sdk: perDocs("https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions"), secret: email, provider_options: { keys }, payload, headers: { ...json, Authorization: `Bearer ${token}` }, note: `Pub/Sub push, order ${status}` });
    }
    const tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47";
    for (const [id, type] of [["93902694-901e-008f-6f95-7153a806873c", "BlobCreated"], ["93902694-901e-008f-6f95-7153a806873d", "BlobDeleted"]]) {
      const payload = compact([{ id, eventTime: iso(TS), eventType: `Microsoft.Storage.${type}`, topic: "/subscriptions/0000/storageAccounts/acct", subject: "/blobServices/default/containers/c/blobs/f.txt", data: {} }]);
      const token = rs256({ aud: "api://hookgate", iss: `https://sts.windows.net/${tenant}/`, tid: tenant, appid: "4962773b-9cdb-44cf-a8bf-237846a00ab7", roles: ["AzureEventGridSecureWebhookSubscriber"], nbf: TS, iat: TS, exp: TS + 3600 });
      push({ provider: "azure-event-grid", sdk: perDocs("https://learn.microsoft.com/azure/event-grid/secure-webhook-delivery"), secret: tenant, provider_options: { keys, audience: "api://hookgate" }, payload,
        headers: { ...json, Authorization: `Bearer ${token}`, "aeg-event-type": "Notification", "aeg-subscription-name": "MYSUB" }, note: `Event Grid ${type}` });
    }
    push({ provider: "azure-event-grid", sdk: perDocs("https://learn.microsoft.com/azure/event-grid/end-point-validation-event-grid-events-schema"), secret: tenant, provider_options: { keys, audience: "api://hookgate" },
      payload: compact([{ id: "2d1781af-3a4c-4d7c-bd0c-e34b19da4e66", topic: "/subscriptions/0000", subject: "", data: { validationCode: "512d38b6-c7b8-40c8-89fe-f46f9e9622b6", validationUrl: "https://rp-eastus2.eventgrid.azure.net/x" }, eventType: "Microsoft.EventGrid.SubscriptionValidationEvent", eventTime: iso(TS), metadataVersion: "1", dataVersion: "1" }]),
      headers: { ...json, "aeg-event-type": "SubscriptionValidation" }, note: "Event Grid subscription validation (the documented example)", expect_handshake_response: { validationResponse: "512d38b6-c7b8-40c8-89fe-f46f9e9622b6" } });
  }
  {
    // PayPal's real sandbox delivery (PayPal-Java-SDK ValidateCert.java),
    // with the certificate PayPal served for it pinned.
    const v = JSON.parse(readFileSync(join(keysDir, "paypal-real-vector.json"), "utf8"));
    fixtures.push({ provider: "paypal", sdk: "published: PayPal-Java-SDK rest-api-sample ValidateCert.java (a real sandbox delivery)", secret: v.webhook_id,
      provider_options: { certificate: readFileSync(join(keysDir, "paypal-sandbox-2015.pem"), "utf8") }, payload: v.body, headers: { ...json, ...v.headers }, timestamp: 1431454454, note: "PayPal PAYMENT.SALE.COMPLETED, sandbox 2015" });
  }
  {
    // App Store Server Library's signed TEST notification, with its test root pinned.
    const root = "-----BEGIN CERTIFICATE-----\n" + readFileSync(join(keysDir, "apple-testCA.der")).toString("base64").match(/.{1,64}/g).join("\n") + "\n-----END CERTIFICATE-----\n";
    const jws = readFileSync(join(keysDir, "apple-testNotification.jws"), "utf8").trim();
    fixtures.push({ provider: "apple-app-store", sdk: "published: app-store-server-library-node tests/resources/mock_signed_data/testNotification", secret: "com.example",
      provider_options: { root }, payload: compact({ signedPayload: jws }), headers: json, timestamp: 1681314324, note: "App Store TEST notification, signed by the library's test chain" });
  }
  {
    // Sanity's SDK vector (test/signature.test.ts), and two accepted by @sanity/webhook.
    fixtures.push({ provider: "sanity", sdk: "published: @sanity/webhook test/signature.test.ts", secret: "test", payload: '{"_id":"resume"}',
      headers: { ...json, "sanity-webhook-signature": "t=1633519811129,v1=tLa470fx7qkLLEcMOcEUFuBbRSkGujyskxrNXcoh0N0" }, timestamp: 1633519811, note: "Sanity SDK vector" });
    const secret = "sanity-webhook-secret-0123";
    for (const title of ["Hello", "Hello, world"]) {
      const payload = compact({ _id: "post-1", _type: "post", title });
      const signature = `t=${TS * 1000},v1=${hmac("sha256", secret, `${TS * 1000}.${payload}`, "base64url")}`;
      assert.equal(await sanityValid(payload, signature, secret), true);
      push({ provider: "sanity", sdk: checkedBy("@sanity/webhook"), secret, payload, headers: { ...json, "sanity-webhook-signature": signature, "idempotency-key": `idem_${title.length}` }, note: `Sanity ${title}` });
    }
  }
  {
    // Dropbox Sign's SDK vectors (EventCallbackHelper test fixtures).
    const key = "324e3b0840f065eb51f3fd63231d0d33daa35d4ed10d27718839e81737065782";
    for (const [time, type, hash] of [["1669926463", "account_confirmed", "ff8b03439122f9160500c3fb855bdee5a9ccba5fff27d3b258745d8f3074832f"],
      ["1348177752", "signature_request_sent", "08d45a6b7677492b78be030cef18cfeaece8fe67e163cc8e526ee638ad483756"]]) {
      const payload = compact({ event: { event_type: type, event_time: time, event_hash: hash, event_metadata: { related_signature_id: null, reported_for_account_id: "63522885f9261e2b04eea043933ee7313eb674fd" } } });
      fixtures.push({ provider: "dropbox-sign", sdk: "published: hellosign-openapi sdks/node EventCallbackHelper vectors", secret: key, payload, headers: json, timestamp: Number(time), note: `Dropbox Sign ${type}` });
    }
  }
  {
    // Box's SDK vectors (src/test/webhooks.test.ts).
    const ts = "2020-01-01T00:00:00-07:00";
    const payload = '{"type":"webhook_event","webhook":{"id":"1234567890"},"trigger":"FILE.UPLOADED","source":{"id":"1234567890","type":"file","name":"Test.txt"}}';
    for (const [key, header, sig] of [["SamplePrimaryKey", "BOX-SIGNATURE-PRIMARY", "6TfeAW3A1PASkgboxxA5yqHNKOwFyMWuEXny/FPD5hI="], ["SampleSecondaryKey", "BOX-SIGNATURE-SECONDARY", "v+1CD1Jdo3muIcbpv5lxxgPglOqMfsNHPV899xWYydo="]]) {
      fixtures.push({ provider: "box", sdk: "published: box-node-sdk src/test/webhooks.test.ts", secret: key, payload,
        headers: { ...json, "BOX-DELIVERY-TIMESTAMP": ts, [header]: sig, "BOX-SIGNATURE-VERSION": "1", "BOX-SIGNATURE-ALGORITHM": "HmacSHA256" }, timestamp: 1577862000, note: `Box SDK vector, ${header}` });
    }
  }
  {
    // Cloudinary's SDK vector (test/utils/utils_spec.js), and a SHA-256 one.
    fixtures.push({ provider: "cloudinary", sdk: "published: cloudinary_npm test/utils/utils_spec.js (sha1)", secret: "shhh", payload: '{"public_id":"117e5550-7bfa-11e4-80d7-f962166bd3be","version":1417727468}',
      headers: { ...json, "X-Cld-Timestamp": "1417727468", "X-Cld-Signature": "bac927006d3ce039ef7632e2c03189348d02924a" }, timestamp: 1417727468, note: "Cloudinary SDK vector" });
    const secret = "cloudinary-api-secret-0123";
    const payload = compact({ notification_type: "upload", asset_id: "3515c6000a548515f1134043f9785c2f", public_id: "products/shoe", version: TS });
    push({ provider: "cloudinary", sdk: perDocs("https://cloudinary.com/documentation/notification_signatures"), secret, payload,
      headers: { ...json, "X-Cld-Timestamp": String(TS), "X-Cld-Signature": createHash("sha256").update(payload + TS + secret).digest("hex") }, note: "Cloudinary upload, SHA-256" });
  }
  {
    // ImageKit's legacy SDK vector (tests/webhook-signature.js).
    const payload = '{"type":"video.transformation.accepted","id":"58e6d24d-6098-4319-be8d-40c3cb0a402d","created_at":"2022-06-20T11:59:58.461Z","request":{"x_request_id":"fa98fa2e-d6cd-45b4-acf5-bc1d2bbb8ba9","url":"http://ik.imagekit.io/demo/sample-video.mp4?tr=f-webm,q-10","user_agent":"Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:101.0) Gecko/20100101 Firefox/101.0"},"data":{"asset":{"url":"http://ik.imagekit.io/demo/sample-video.mp4"},"transformation":{"type":"video-transformation","options":{"video_codec":"vp9","audio_codec":"opus","auto_rotate":true,"quality":10,"format":"webm"}}}}';
    fixtures.push({ provider: "imagekit", sdk: "published: imagekit-nodejs tests/webhook-signature.js", secret: "whsec_xeO2UNkfKMQnfJf7Q/Qx+fYptL1wabXd", payload,
      headers: { ...json, "x-ik-signature": "t=1655788406333,v1=d30758f47fcb31e1fa0109d3b3e2a6c623e699aaf1461cba6bd462ef58ea4b31" }, timestamp: 1655788406, note: "ImageKit SDK vector" });
  }
  {
    // Figma proves the sender with the passcode in the body.
    for (const type of ["FILE_UPDATE", "FILE_VERSION_UPDATE"]) {
      const payload = compact({ event_type: type, file_key: "Ht3cVwXbkGbsC8mD2gWC4j", passcode: "s3cret-pass-figma", timestamp: iso(TS), webhook_id: "123456" });
      push({ provider: "figma", sdk: perDocs("https://developers.figma.com/docs/rest-api/webhooks-security"), secret: "s3cret-pass-figma", payload, headers: json, note: `Figma ${type}` });
    }
  }
  {
    // Mandrill signs the registered URL and the sorted POST fields.
    const key = "Rkv3SmmOBMzqXkCSx0n9Vg";
    const url = urlFor("mandrill");
    for (const event of ["send", "open"]) {
      const events = compact([{ event, msg: { ts: TS, _id: "7761630a6e4d4f5b9b3e1c1a2d8e9f00", state: "sent" }, _id: "7761630a6e4d4f5b9b3e1c1a2d8e9f00", ts: TS }]);
      const payload = new URLSearchParams({ mandrill_events: events }).toString();
      push({ provider: "mandrill", sdk: perDocs("https://mandrill.zendesk.com/hc/en-us/articles/360039232513-How-to-Authenticate-Webhook-Requests"), secret: key, payload, url,
        headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Mandrill-Signature": hmac("sha1", key, url + "mandrill_events" + events, "base64") }, note: `Mandrill ${event}` });
    }
  }
  {
    // Braintree's SDK makes sample notifications itself.
    const gateway = new braintree.BraintreeGateway({ environment: braintree.Environment.Sandbox, merchantId: "hookgate", publicKey: "integration_public_key", privateKey: "integration_private_key" });
    for (const kind of [braintree.WebhookNotification.Kind.SubscriptionChargedSuccessfully, braintree.WebhookNotification.Kind.SubscriptionWentPastDue]) {
      const { bt_signature, bt_payload } = await withFixedDate(TS, () => gateway.webhookTesting.sampleNotification(kind, "sub_9x7k2m"));
      await gateway.webhookNotification.parse(bt_signature, bt_payload);
      push({ provider: "braintree", sdk: sdkVersion("braintree"), secret: "integration_public_key:integration_private_key", payload: new URLSearchParams({ bt_signature, bt_payload }).toString(),
        headers: { "Content-Type": "application/x-www-form-urlencoded" }, note: `Braintree ${kind}` });
    }
    const challenge = "20f9f8ed05f77439fe955c977e4c8a53";
    push({ provider: "braintree", sdk: "published: braintree_node webhook_notification_gateway_spec.js (verify)", secret: "integration_public_key:integration_private_key", payload: "", method: "GET",
      url: urlFor("braintree", `?bt_challenge=${challenge}`), headers: {}, note: "Braintree bt_challenge", expect_handshake_response: "integration_public_key|d9b899556c966b3f06945ec21311865d35df3ce4" });
  }
  // ------------------------------- SDK verifiers run over the fixtures ---
  // Providers whose SDK only verifies: each fixture above (signed per the
  // docs, or a published vector) must pass it, and then names it.
  const ofProvider = (name) => fixtures.filter((f) => f.provider === name && !f.expect_handshake_response);
  const lower = (h) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
  const checks = {
    "google-pubsub": async (f) => {
      const keys = JSON.parse(f.provider_options.keys).keys;
      const certs = Object.fromEntries(keys.map((k) => [k.kid, createPublicKey({ key: k, format: "jwk" }).export({ type: "spki", format: "pem" })]));
      const ticket = await new OAuth2Client().verifySignedJwtWithCertsAsync(f.headers.Authorization.slice(7), certs, urlFor("google-pubsub"), ["https://accounts.google.com"]);
      assert.equal(ticket.getPayload().email, f.secret);
    },
    webflow: async (f) => assert.equal(await new WebflowClient({ accessToken: "unused" }).webhooks.verifySignature({ headers: lower(f.headers), body: f.payload, secret: f.secret }), true),
    box: async (f) => assert.equal(await BoxWebhooks.validateMessage(f.payload, lower(f.headers), f.secret, { secondaryKey: f.secret, maxAge: 10 * 365 * 86400 }), true),
    cloudinary: async (f) => {
      cloudinary.v2.config({ api_secret: f.secret });
      const algorithm = f.headers["X-Cld-Signature"].length === 64 ? "sha256" : "sha1";
      cloudinary.v2.config({ signature_algorithm: algorithm });
      assert.equal(cloudinary.v2.utils.verifyNotificationSignature(f.payload, Number(f.headers["X-Cld-Timestamp"]), f.headers["X-Cld-Signature"], 10 * 365 * 86400 * 1000), true);
    },
    imagekit: async (f) => new ImageKit({ publicKey: "public_unused", privateKey: "private_unused", urlEndpoint: "https://ik.imagekit.io/demo" }).verifyWebhookEvent(f.payload, f.headers["x-ik-signature"], f.secret),
    "dropbox-sign": async (f) => assert.equal(EventCallbackHelper.isValid(f.secret, EventCallbackRequest.init(JSON.parse(f.payload))), true),
    "apple-app-store": async (f) => {
      const verifier = new SignedDataVerifier([readFileSync(join(keysDir, "apple-testCA.der"))], false, AppleEnvironment.SANDBOX, f.secret);
      const n = await verifier.verifyAndDecodeNotification(JSON.parse(f.payload).signedPayload);
      assert.equal(n.notificationType, "TEST");
    },
  };
  const sdkOf = { "google-pubsub": "google-auth-library", webflow: "webflow-api", box: "box-node-sdk", cloudinary: "cloudinary", imagekit: "imagekit", "dropbox-sign": "@dropbox/sign", "apple-app-store": "@apple/app-store-server-library" };
  for (const [provider, check] of Object.entries(checks)) {
    const list = ofProvider(provider);
    assert.ok(list.length > 0, provider);
    for (const f of list) {
      await at(f.timestamp + 1, () => check(f));
      const was = f.sdk.startsWith("published: ") ? f.sdk.slice("published: ".length) : "";
      f.sdk = checkedBy(sdkOf[provider]);
      if (was) f.note += ` (published: ${was})`;
    }
  }

  async function withFixedDate(unixSeconds, fn) {
    return at(unixSeconds, fn);
  }
}

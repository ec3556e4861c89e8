// Generates webhook signature fixtures using the providers' official SDKs.
// Prints a JSON array to stdout. Output is deterministic: every timestamp,
// message id, secret and key pair is fixed below (key pairs were generated
// once with node:crypto and hard-coded; ECDSA signatures, which node:crypto
// randomises, were produced once and are hard-coded in FIXED_ECDSA).
//
// Where a provider's SDK can sign, it signs. Where the SDK only verifies, the
// request is signed with node:crypto and the SDK's verifier must accept it
// ("node:crypto checked by <pkg>@<version>"). Where there is no official
// Node SDK, the request is signed with node:crypto following the provider's
// documentation ("node:crypto per <docs URL>"); crosscheck.py re-derives
// every signature independently with the Python standard library.
//
//   cd internal/verify/testdata/sdk && npm ci && node generate.mjs > ../sdk_fixtures.json

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { strict as assert } from "node:assert";
import crypto, { createHash, createHmac } from "node:crypto";

import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { sign as githubSign, verify as githubVerify } from "@octokit/webhooks-methods";
import { isValidSlackRequest } from "@slack/bolt";
import "@shopify/shopify-api/adapters/web-api";
import { shopifyApi, ApiVersion, LogSeverity } from "@shopify/shopify-api";
import { verifyWebhook as clerkVerifyWebhook } from "@clerk/backend/webhooks";
import { Resend } from "resend";
import twilio from "twilio";
import { EventWebhook } from "@sendgrid/eventwebhook";
import { verifyKey as discordVerifyKey } from "discord-interactions";
import { WebhooksHelper as SquareWebhooksHelper } from "square";
import { Paddle } from "@paddle/paddle-node-sdk";
import { AwsLambdaReceiver as ZoomAwsLambdaReceiver } from "@zoom/rivet/users";
import { LinearWebhookClient } from "@linear/sdk/webhooks";
import hubspot from "@hubspot/api-client";
import adyen from "@adyen/api-library";
import Mux from "@mux/mux-node";
import coinbaseCommerce from "coinbase-commerce-node";
import { signRequest as contentfulSign, verifyRequest as contentfulVerify } from "@contentful/node-apps-toolkit";
import https from "node:https";
import { EventEmitter } from "node:events";
import SNSValidator from "sns-validator";
import { addRound3 } from "./round3.mjs";

const here = dirname(fileURLToPath(import.meta.url));

// "<name>@<version>" taken from the installed package's own package.json.
function sdkVersion(name) {
  const pkgPath = join(here, "node_modules", ...name.split("/"), "package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  assert.equal(pkg.name, name);
  return `${pkg.name}@${pkg.version}`;
}

// SDK verify() helpers compare the timestamp against Date.now(); run them with
// the clock pinned to the fixture's timestamp.
function withClock(unixSeconds, fn) {
  const realNow = Date.now;
  Date.now = () => unixSeconds * 1000;
  try {
    return fn();
  } finally {
    Date.now = realNow;
  }
}

const fixtures = [];

// ---------------------------------------------------------------- stripe ---
{
  const sdk = sdkVersion("stripe");
  // No network calls are made; the API key is never used.
  const stripe = new Stripe("sk_test_hookgate_unused");
  const secret = "whsec_test_secret_for_hookgate";
  const tolerance = 10 * 365 * 24 * 3600;

  const cases = [
    {
      timestamp: 1735689600, // 2025-01-01T00:00:00Z
      event: {
        id: "evt_3QbXo2HookgateTest0001",
        object: "event",
        api_version: "2024-12-18.acacia",
        created: 1735689599,
        data: {
          object: {
            id: "pi_3QbXo2HookgatePi0001",
            object: "payment_intent",
            amount: 2000,
            amount_received: 2000,
            currency: "usd",
            customer: "cus_RHookgateCus01",
            description: "Order #1001",
            livemode: false,
            status: "succeeded",
          },
        },
        livemode: false,
        pending_webhooks: 1,
        request: { id: "req_HookgateReq0001", idempotency_key: "3c5e1d2a-7b8f-4e0a-9c6d-1f2e3a4b5c6d" },
        type: "payment_intent.succeeded",
      },
      // Stripe sends pretty-printed JSON bodies.
      indent: 2,
      note: "Stripe payment_intent.succeeded, pretty-printed body as Stripe sends it",
    },
    {
      timestamp: 1748736000, // 2025-06-01T00:00:00Z
      event: {
        id: "evt_3RUnicodeHookgate0002",
        object: "event",
        api_version: "2025-05-28.basil",
        created: 1748735998,
        data: {
          object: {
            id: "pi_3RUnicodeHookgatePi02",
            object: "payment_intent",
            amount: 1250,
            amount_received: 1250,
            currency: "eur",
            description: "Café crème × 2 — Zürich ☕",
            livemode: false,
            metadata: { order: "A-42", note: "line1\nline2 \"quoted\"" },
            status: "succeeded",
          },
        },
        livemode: false,
        pending_webhooks: 2,
        request: { id: null, idempotency_key: null },
        type: "payment_intent.succeeded",
      },
      indent: 0,
      note: "Stripe payment_intent.succeeded, compact body with non-ASCII UTF-8 and escaped characters",
    },
  ];

  for (const c of cases) {
    const payload = c.indent ? JSON.stringify(c.event, null, c.indent) : JSON.stringify(c.event);
    const header = stripe.webhooks.generateTestHeaderString({
      payload,
      secret,
      timestamp: c.timestamp,
    });
    // Sanity check with the SDK's own verifier (tolerance is relative to now).
    const evt = stripe.webhooks.constructEvent(payload, header, secret, tolerance);
    assert.equal(evt.id, c.event.id);
    assert.equal(evt.type, "payment_intent.succeeded");
    fixtures.push({
      provider: "stripe",
      sdk,
      secret,
      payload,
      headers: { "Stripe-Signature": header },
      timestamp: c.timestamp,
      note: c.note,
    });
  }
}

// ------------------------------------------------------------------ svix ---
{
  const sdk = sdkVersion("svix");
  // "whsec_" + base64 of 24 fixed bytes (4d9c2f71a8e03b56c1f4982a7de60b3f5a19c8e2704db6f3).
  const secret = "whsec_TZwvcajgO1bB9JgqfeYLP1oZyOJwTbbz";
  const wh = new SvixWebhook(secret);

  const cases = [
    {
      msgId: "msg_2mYHookgateSvixMsg0001",
      timestamp: 1735689600,
      payload: JSON.stringify({
        type: "invoice.paid",
        timestamp: "2025-01-01T00:00:00.000Z",
        data: { id: "inv_1001", amount: 4200, currency: "USD" },
      }),
      note: "Svix message, compact JSON body",
    },
    {
      msgId: "msg_2mZHookgateSvixMsg0002",
      timestamp: 1748736000,
      payload: JSON.stringify(
        { type: "user.created", data: { id: "usr_7", name: "Zoë Ångström", tags: ["α", "β"] } },
        null,
        2,
      ),
      note: "Svix message, pretty-printed JSON body with non-ASCII UTF-8",
    },
  ];

  for (const c of cases) {
    const signature = wh.sign(c.msgId, new Date(c.timestamp * 1000), c.payload);
    const headers = {
      "svix-id": c.msgId,
      "svix-timestamp": String(c.timestamp),
      "svix-signature": signature,
    };
    withClock(c.timestamp, () => wh.verify(c.payload, headers));
    fixtures.push({ provider: "svix", sdk, secret, payload: c.payload, headers, timestamp: c.timestamp, note: c.note });
  }
}

// ----------------------------------------------------- standard-webhooks ---
{
  const sdk = sdkVersion("standardwebhooks");
  // "whsec_" + base64 of 24 fixed bytes (b27e0591d4c83fa6e15c0927b84d6ae3f01958c7d23e4ab6).
  const secret = "whsec_sn4FkdTIP6bhXAknuE1q4/AZWMfSPkq2";
  const wh = new StandardWebhook(secret);

  const cases = [
    {
      msgId: "msg_2nAHookgateStdMsg0001",
      timestamp: 1735689600,
      payload: JSON.stringify({
        type: "contact.created",
        timestamp: "2025-01-01T00:00:00Z",
        data: { id: "c_1", email: "ada@example.com" },
      }),
      note: "Standard Webhooks message, compact JSON body",
    },
    {
      msgId: "msg_2nBHookgateStdMsg0002",
      timestamp: 1748736000,
      payload: JSON.stringify(
        { type: "order.shipped", data: { id: "o_99", carrier: "Poste Italiana", note: "città → 配送" } },
        null,
        2,
      ),
      note: "Standard Webhooks message, pretty-printed JSON body with non-ASCII UTF-8; secret base64 contains '/'",
    },
  ];

  for (const c of cases) {
    const signature = wh.sign(c.msgId, new Date(c.timestamp * 1000), c.payload);
    const headers = {
      "webhook-id": c.msgId,
      "webhook-timestamp": String(c.timestamp),
      "webhook-signature": signature,
    };
    withClock(c.timestamp, () => wh.verify(c.payload, headers));
    fixtures.push({
      provider: "standard-webhooks",
      sdk,
      secret,
      payload: c.payload,
      headers,
      timestamp: c.timestamp,
      note: c.note,
    });
  }
}

// ---------------------------------------------------------------- github ---
{
  const sdk = sdkVersion("@octokit/webhooks-methods");
  const secret = "It's a Secret to Everybody";

  const cases = [
    {
      event: "ping",
      delivery: "7c9f1b2e-3d4a-11f0-8a5b-0242ac120002",
      payload: JSON.stringify({
        zen: "Keep it logically awesome.",
        hook_id: 512345678,
        hook: { type: "Repository", id: 512345678, active: true, events: ["push"] },
        repository: { id: 123456789, full_name: "hookgate/hookgate", private: false },
        sender: { login: "octocat", id: 1 },
      }),
      note: "GitHub ping event, compact JSON body",
    },
    {
      event: "push",
      delivery: "9a1e6f40-3d4b-11f0-9c2d-0242ac120002",
      payload: JSON.stringify(
        {
          ref: "refs/heads/main",
          before: "0000000000000000000000000000000000000000",
          after: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
          repository: { id: 123456789, full_name: "hookgate/hookgate" },
          head_commit: { id: "6113728f27ae82c7b1a177c8d03f9e96e0adf246", message: "Fix naïve parsing 🚀" },
          pusher: { name: "octocat", email: "octocat@github.com" },
        },
        null,
        2,
      ),
      note: "GitHub push event, pretty-printed JSON body with non-ASCII UTF-8 (emoji)",
    },
  ];

  for (const c of cases) {
    const signature = await githubSign(secret, c.payload);
    assert.equal(await githubVerify(secret, c.payload, signature), true);
    fixtures.push({
      provider: "github",
      sdk,
      secret,
      payload: c.payload,
      headers: {
        "X-GitHub-Event": c.event,
        "X-GitHub-Delivery": c.delivery,
        "X-Hub-Signature-256": signature,
      },
      note: c.note,
    });
  }
}

// =========================================================================
// Presets added after the first four. Shared helpers first.
// =========================================================================

// 2026-01-01T00:00:00Z: the signing time of every fixture below unless noted.
const TS = 1767225600;
const TS_MS = TS * 1000;

const urlFor = (provider, query = "") => `https://hooks.example.com/webhooks/${provider}${query}`;
const hmac = (alg, key, data, enc) => createHmac(alg, key).update(data).digest(enc);
const sha256hex = (data) => createHash("sha256").update(data).digest("hex");
const b64u = (buf) => Buffer.from(buf).toString("base64url");
const compact = (v) => JSON.stringify(v);
const pretty = (v) => JSON.stringify(v, null, 2);
// PHP's json_encode escapes "/" (WooCommerce) and Meta escapes "/" too.
const phpJSON = (v) => JSON.stringify(v).replace(/\//g, "\\/");
// Meta sends non-ASCII characters as \uXXXX escapes.
const asciiJSON = (v) =>
  JSON.stringify(v)
    .replace(/\//g, "\\/")
    .replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));

const checkedBy = (pkg) => `node:crypto checked by ${sdkVersion(pkg)}`;
const perDocs = (url) => `node:crypto per ${url}`;

// Runs fn with both Date.now() and `new Date()` pinned to unixSeconds (some
// SDK verifiers use one, some the other). Awaits async fn before restoring.
async function at(unixSeconds, fn) {
  const RealDate = globalThis.Date;
  const fixed = unixSeconds * 1000;
  class FakeDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(fixed);
      else super(...args);
    }
    static now() {
      return fixed;
    }
  }
  globalThis.Date = FakeDate;
  try {
    return await fn();
  } finally {
    globalThis.Date = RealDate;
  }
}

// ---- fixed key material (generated once with node:crypto, then hard-coded) --

function ed25519Keys(seedHex, pubHex) {
  const seed = Buffer.from(seedHex, "hex");
  const pub = Buffer.from(pubHex, "hex");
  const privateKey = crypto.createPrivateKey({
    key: { kty: "OKP", crv: "Ed25519", d: b64u(seed), x: b64u(pub) },
    format: "jwk",
  });
  const publicKey = crypto.createPublicKey(privateKey);
  // The derived public key must be the hard-coded one.
  assert.equal(Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url").toString("hex"), pubHex);
  return { seed, pub, privateKey, publicKey };
}

function p256Keys(pkcs8B64, spkiB64) {
  const privateKey = crypto.createPrivateKey({ key: Buffer.from(pkcs8B64, "base64"), format: "der", type: "pkcs8" });
  const publicKey = crypto.createPublicKey({ key: Buffer.from(spkiB64, "base64"), format: "der", type: "spki" });
  assert.equal(crypto.createPublicKey(privateKey).export({ format: "der", type: "spki" }).toString("base64"), spkiB64);
  return { privateKey, publicKey };
}

// node:crypto ECDSA signatures use a random nonce, so a fresh signature would
// change on every run. Signatures made once are kept here; each is verified
// on every run. If a payload changes, the script signs afresh and prints the
// new value on stderr to paste below.
const FIXED_ECDSA = {
  "sendgrid/1": "MEQCIGeCLjFDVw479Mrp399xyF7YCJNcpkBJOIN/3bF5f+A3AiBSY3jhqC7Sv58N6JkuQG0kHLfSnQe3sR1HId+lS7bBsg==",
  "sendgrid/2": "MEQCICNO5MIF5b+Kknz9qCwJPLooSteHr/SLYRp6qQe1cl2hAiApzVTu+Fce7uAA5/NkTOvHZGoBsABqeU1MFH0TmGeZVw==",
  "plaid/1": "whHEAw9HDA_33U08YeiM8X6RWlzFcvzSv7k9F1uXkatdK2vqk-LdPFWEvZ04eekRFbYhN-u_OcQWsvhykagnSw",
};
let ecdsaResigned = false;
function ecdsaSign(id, keys, message, dsaEncoding) {
  const opts = (key) => ({ key, dsaEncoding });
  const fixed = FIXED_ECDSA[id];
  if (fixed) {
    const sig = Buffer.from(fixed, dsaEncoding === "der" ? "base64" : "base64url");
    if (crypto.verify("sha256", Buffer.from(message), opts(keys.publicKey), sig)) return sig;
    process.stderr.write(`FIXED_ECDSA["${id}"] no longer verifies; re-signing\n`);
  }
  const sig = crypto.sign("sha256", Buffer.from(message), opts(keys.privateKey));
  const enc = dsaEncoding === "der" ? sig.toString("base64") : b64u(sig);
  process.stderr.write(`paste into FIXED_ECDSA: "${id}": "${enc}",\n`);
  ecdsaResigned = true;
  return sig;
}

const KEYS = {
  // Standard Webhooks v1a (Ed25519).
  stdEd25519: ed25519Keys(
    "11be78dac506eb700b05927b8f45e3f96203e968909bd58f85a0f55bbab8dd8e",
    "2f8bf50ad7fc03ff6627861f5ad407a76cd0003d7bf56790c8af42f91dac2e07",
  ),
  // Discord interactions endpoint (Ed25519).
  discord: ed25519Keys(
    "61ff7c45726a2a8977f6bb0baf23649f4e4586f8c4ec996d40e5c053be222831",
    "b915b71e8961f399788f1e44a7e620f5719d9800fccb8c0a5798674847c8aab9",
  ),
  // Discord webhook events (Ed25519).
  discordEvents: ed25519Keys(
    "18bc1256ebcdac0f03996e4d95cd01413d4e43c33e064f0d0772b550fbc63e1c",
    "e956bf337fe354a982e45fe9d1dd07b8524de74b3fc4786db5491cdae603196d",
  ),
  // SendGrid signed event webhook (ECDSA P-256).
  sendgrid: {
    pkcs8: "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgKD81cIqLioYJvp8BhpwvD85uZg/8yjdRwgM+oSSNnOuhRANCAASYJBmF6mQ+Fx7j0y6t+7rQgopc6DkamkHA074MQRaNc1tXFjfKmCC68k0T17ik3NhY0dFBujCBXtUz0y+6jMr8",
    spki: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEmCQZhepkPhce49Murfu60IKKXOg5GppBwNO+DEEWjXNbVxY3ypgguvJNE9e4pNzYWNHRQbowgV7VM9MvuozK/A==",
  },
  // Plaid webhook verification key (ECDSA P-256, ES256).
  plaid: {
    kid: "a6b1c0f4-9d2e-4c8b-8f3a-2e7d5c1b9a04",
    pkcs8: "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgv9mKdzHjJbuvNOFC3IPVL2QPu80Qq5GDMwrDVTyzvtuhRANCAAQwvFb9TQKQ20cNkMs1PgRajN1ZIuHFLmOZ8ljsGdQ7uCYrO5cEy42U11VdYGKg4FE/k4euaJLWH9C2kBZe6hf3",
    spki: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEMLxW/U0CkNtHDZDLNT4EWozdWSLhxS5jmfJY7BnUO7gmKzuXBMuNlNdVXWBioOBRP5OHrmiS1h/QtpAWXuoX9w==",
  },
};

const DOCS = {
  "standard-webhooks-ed25519": "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
  plaid: "https://plaid.com/docs/api/webhooks/webhook-verification/",
  intercom: "https://developers.intercom.com/docs/references/webhooks/webhook-models",
  mailgun: "https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks",
  bitbucket: "https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/",
  jira: "https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks",
  gitlab: "https://docs.gitlab.com/user/project/integrations/webhooks/",
  twitch: "https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message",
  typeform: "https://www.typeform.com/developers/webhooks/secure-your-webhooks/",
  calendly: "https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures",
  vercel: "https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks",
  sentry: "https://docs.sentry.io/organization/integrations/integration-platform/webhooks/",
  postmark: "https://postmarkapp.com/developer/webhooks/webhooks-overview",
  woocommerce: "https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks",
  lemonsqueezy: "https://docs.lemonsqueezy.com/help/webhooks/signing-requests",
  okta: "https://developer.okta.com/docs/concepts/event-hooks/",
  "microsoft-graph": "https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks",
  meta: "https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads",
  whatsapp: "https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads",
  pagerduty: "https://developer.pagerduty.com/docs/webhooks/webhook-signatures/",
};

// ----------------------------------------------------------------- slack ---
{
  const sdk = checkedBy("@slack/bolt");
  const secret = "8f3b2c61d0a94e7b95c1f2e3d4a5b6c7";
  const form = new URLSearchParams([
    ["token", "gIkuvaNzQIHg97ATvDxqgjtO"],
    ["team_id", "T0HOOKGATE"],
    ["team_domain", "hookgate"],
    ["channel_id", "C2147483705"],
    ["channel_name", "ops"],
    ["user_id", "U2147483697"],
    ["user_name", "ada"],
    ["command", "/deploy"],
    ["text", "api v1.2.3 → prod & canary"],
    ["api_app_id", "A0HOOKGATE1"],
    ["is_enterprise_install", "false"],
    ["response_url", "https://hooks.slack.com/commands/T0HOOKGATE/1234567890/AbCdEfGhIjKlMnOpQrStUvWx"],
    ["trigger_id", "13345224609.738474920.8088930838d88f008e0"],
  ]).toString();
  const cases = [
    {
      payload: form,
      contentType: "application/x-www-form-urlencoded",
      note: "Slack slash command, form-encoded body (spaces as '+', UTF-8 percent-encoded)",
    },
    {
      payload: compact({
        token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
        team_id: "T0HOOKGATE",
        api_app_id: "A0HOOKGATE1",
        event: {
          type: "app_mention",
          user: "U2147483697",
          text: "<@U0LAN0Z89> is it everything a river should be? 🌊",
          ts: "1767225599.000200",
          channel: "C2147483705",
          event_ts: "1767225599.000200",
        },
        type: "event_callback",
        event_id: "Ev0HOOKGATE01",
        event_time: 1767225599,
        authorizations: [{ enterprise_id: null, team_id: "T0HOOKGATE", user_id: "U0LAN0Z89", is_bot: true }],
        is_ext_shared_channel: false,
      }),
      contentType: "application/json",
      note: "Slack Events API event_callback (app_mention), JSON body with emoji",
    },
    {
      payload: compact({
        token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
        challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
        type: "url_verification",
      }),
      contentType: "application/json",
      handshake: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
      note: "Slack Events API url_verification (signed); the gateway answers with the challenge as plain text",
    },
  ];
  for (const c of cases) {
    const signature = "v0=" + hmac("sha256", secret, `v0:${TS}:${c.payload}`, "hex");
    const ok = isValidSlackRequest({
      signingSecret: secret,
      body: c.payload,
      headers: { "x-slack-signature": signature, "x-slack-request-timestamp": TS },
      nowMilliseconds: TS_MS + 10_000,
    });
    assert.equal(ok, true);
    const f = {
      provider: "slack",
      sdk,
      secret,
      payload: c.payload,
      headers: {
        "Content-Type": c.contentType,
        "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
        "X-Slack-Request-Timestamp": String(TS),
        "X-Slack-Signature": signature,
      },
      timestamp: TS,
      note: c.note,
    };
    if (c.handshake !== undefined) f.expect_handshake_response = c.handshake;
    fixtures.push(f);
  }
}

// ---------------------------------------------- shopify / shopify-events ---
{
  const sdk = checkedBy("@shopify/shopify-api");
  const secret = "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";
  const shopify = shopifyApi({
    apiKey: "hookgate-test-client-id",
    apiSecretKey: secret,
    scopes: [],
    hostName: "hooks.example.com",
    apiVersion: ApiVersion.January26,
    isEmbeddedApp: false,
    logger: { level: LogSeverity.Error, log: async () => {} },
  });
  const cases = [
    {
      provider: "shopify",
      topic: "orders/create",
      webhookId: "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
      eventId: "7f9a2e6c-0c1b-4f47-9a0e-2c5d8e3b1a64",
      payload: compact({
        id: 820982911946154500,
        admin_graphql_api_id: "gid://shopify/Order/820982911946154508",
        email: "jon@example.com",
        created_at: "2025-12-31T19:00:00-05:00",
        currency: "EUR",
        total_price: "49.90",
        customer: { id: 115310627314723950, first_name: "Jörg", last_name: "Müller" },
        line_items: [{ id: 866550311766439000, title: "Crème brûlée torch", quantity: 1, price: "49.90" }],
      }),
      note: "Shopify orders/create, compact JSON body with non-ASCII UTF-8",
    },
    {
      provider: "shopify",
      topic: "app/uninstalled",
      webhookId: "0d2b1c4e-6f3a-4b8d-9e7c-5a1f2d3c4b5e",
      eventId: "1e3c5a7b-9d2f-4e6a-8b0c-3d5f7a9b1c2e",
      payload: compact({
        id: 548380009,
        name: "Hookgate Test Shop",
        email: "owner@hookgate-test.myshopify.com",
        domain: "hookgate-test.myshopify.com",
        myshopify_domain: "hookgate-test.myshopify.com",
        plan_name: "partner_test",
      }),
      note: "Shopify app/uninstalled, compact JSON body",
    },
    {
      provider: "shopify-events",
      topic: "products/update",
      webhookId: "3a7c9e1b-5d2f-4a8c-b6e0-9f1d3c5b7a2e",
      payload: compact({
        id: "gid://shopify/Product/7513594",
        title: "Hookgate T-shirt – Größe M",
        status: "ACTIVE",
        updatedAt: "2026-01-01T00:00:00Z",
      }),
      note: "Shopify Events webhook (lower-case shopify-* headers), products/update",
    },
    {
      provider: "shopify-events",
      topic: "orders/paid",
      webhookId: "6e8a0c2e-4f6a-4b8c-9d0e-2f4a6c8e0a1b",
      payload: compact({
        id: "gid://shopify/Order/820982911946154508",
        name: "#1001",
        displayFinancialStatus: "PAID",
        totalPriceSet: { shopMoney: { amount: "49.9", currencyCode: "EUR" } },
      }),
      note: "Shopify Events webhook orders/paid",
    },
  ];
  for (const c of cases) {
    const signature = hmac("sha256", secret, c.payload, "base64");
    const headers =
      c.provider === "shopify"
        ? {
            "Content-Type": "application/json",
            "X-Shopify-Topic": c.topic,
            "X-Shopify-Hmac-Sha256": signature,
            "X-Shopify-Shop-Domain": "hookgate-test.myshopify.com",
            "X-Shopify-API-Version": "2026-01",
            "X-Shopify-Webhook-Id": c.webhookId,
            "X-Shopify-Triggered-At": "2026-01-01T00:00:00.000000000Z",
            "X-Shopify-Event-Id": c.eventId,
          }
        : {
            "content-type": "application/json",
            "shopify-topic": c.topic,
            "shopify-hmac-sha256": signature,
            "shopify-shop-domain": "hookgate-test.myshopify.com",
            "shopify-api-version": "2026-01",
            "shopify-webhook-id": c.webhookId,
            "shopify-handle": "hookgate-products",
            "shopify-action": "update",
            "shopify-triggered-at": "2026-01-01T00:00:00.000000000Z",
          };
    const url = urlFor(c.provider);
    const result = await shopify.webhooks.validate({
      rawBody: c.payload,
      rawRequest: new Request(url, { method: "POST", headers, body: c.payload }),
    });
    assert.equal(result.valid, true, JSON.stringify(result));
    assert.equal(result.webhookType, c.provider === "shopify" ? "webhooks" : "events");
    fixtures.push({ provider: c.provider, sdk, secret, payload: c.payload, headers, timestamp: TS, note: c.note });
  }
}

// --------------------------------------------------------- clerk / resend ---
{
  const sdk = sdkVersion("svix");
  const cases = [
    {
      provider: "clerk",
      // "whsec_" + base64 of 24 fixed bytes.
      secret: "whsec_" + Buffer.from("c1e2a3b4d5f60718293a4b5c6d7e8f900112233445566778", "hex").toString("base64"),
      msgId: "msg_2zHookgateClerk00000000001",
      payload: compact({
        data: {
          id: "user_2zHookgateUser0000000001",
          object: "user",
          first_name: "Ada",
          last_name: "Lovelace",
          email_addresses: [{ id: "idn_2zHookgateEmail000001", email_address: "ada@example.com" }],
          primary_email_address_id: "idn_2zHookgateEmail000001",
          created_at: 1767225599000,
          updated_at: 1767225599000,
        },
        event_attributes: { http_request: { client_ip: "192.0.2.10", user_agent: "Mozilla/5.0" } },
        instance_id: "ins_2zHookgateInstance000001",
        object: "event",
        timestamp: 1767225600000,
        type: "user.created",
      }),
      note: "Clerk user.created (Svix headers); also accepted by @clerk/backend/webhooks verifyWebhook",
    },
    {
      provider: "clerk",
      secret: "whsec_" + Buffer.from("c1e2a3b4d5f60718293a4b5c6d7e8f900112233445566778", "hex").toString("base64"),
      msgId: "msg_2zHookgateClerk00000000002",
      payload: compact({
        data: {
          id: "sess_2zHookgateSession000001",
          object: "session",
          user_id: "user_2zHookgateUser0000000001",
          status: "active",
          created_at: 1767225600000,
        },
        instance_id: "ins_2zHookgateInstance000001",
        object: "event",
        timestamp: 1767225600000,
        type: "session.created",
      }),
      note: "Clerk session.created (Svix headers); also accepted by @clerk/backend/webhooks verifyWebhook",
    },
    {
      provider: "resend",
      secret: "whsec_" + Buffer.from("5e9d1c7b3a2f4e6d8c0b1a9f7e5d3c2b1a0f9e8d7c6b5a49", "hex").toString("base64"),
      msgId: "msg_2zHookgateResend0000000001",
      payload: compact({
        type: "email.delivered",
        created_at: "2026-01-01T00:00:00.000Z",
        data: {
          created_at: "2025-12-31T23:59:58.000Z",
          email_id: "56761188-7520-42d8-8898-ff6fc54ce618",
          from: "Acme <onboarding@resend.dev>",
          to: ["delivered@resend.dev"],
          subject: "Bienvenue chez Acme – votre reçu",
        },
      }),
      note: "Resend email.delivered (Svix headers); also accepted by resend's webhooks.verify",
    },
    {
      provider: "resend",
      secret: "whsec_" + Buffer.from("5e9d1c7b3a2f4e6d8c0b1a9f7e5d3c2b1a0f9e8d7c6b5a49", "hex").toString("base64"),
      msgId: "msg_2zHookgateResend0000000002",
      payload: compact({
        type: "email.bounced",
        created_at: "2026-01-01T00:00:00.000Z",
        data: {
          created_at: "2025-12-31T23:59:50.000Z",
          email_id: "0b7c3d2e-1f4a-4c6b-9d8e-7a5f3c1b2d4e",
          from: "Acme <onboarding@resend.dev>",
          to: ["bounced@resend.dev"],
          subject: "Your receipt",
          bounce: { message: "The recipient's mailbox does not exist.", subType: "Suppressed", type: "Permanent" },
        },
      }),
      note: "Resend email.bounced (Svix headers); also accepted by resend's webhooks.verify",
    },
  ];
  const resend = new Resend("re_hookgate_unused");
  for (const c of cases) {
    const wh = new SvixWebhook(c.secret);
    const signature = wh.sign(c.msgId, new Date(TS * 1000), c.payload);
    const headers = {
      "Content-Type": "application/json",
      "svix-id": c.msgId,
      "svix-timestamp": String(TS),
      "svix-signature": signature,
    };
    await at(TS + 10, async () => {
      wh.verify(c.payload, headers);
      if (c.provider === "clerk") {
        const evt = await clerkVerifyWebhook(new Request(urlFor("clerk"), { method: "POST", headers, body: c.payload }), {
          signingSecret: c.secret,
        });
        assert.equal(evt.type, JSON.parse(c.payload).type);
      } else {
        const evt = resend.webhooks.verify({
          payload: c.payload,
          headers: { id: c.msgId, timestamp: String(TS), signature },
          webhookSecret: c.secret,
        });
        assert.equal(evt.type, JSON.parse(c.payload).type);
      }
    });
    fixtures.push({ provider: c.provider, sdk, secret: c.secret, payload: c.payload, headers, timestamp: TS, note: c.note });
  }
}

// --------------------------------------------- standard-webhooks-ed25519 ---
{
  const sdk = perDocs(DOCS["standard-webhooks-ed25519"]);
  const k = KEYS.stdEd25519;
  const secret = "whpk_" + k.pub.toString("base64");
  const signingKey = "whsk_" + Buffer.concat([k.seed, k.pub]).toString("base64");
  const sign = (privateKey, id, ts, body) =>
    "v1a," + crypto.sign(null, Buffer.from(`${id}.${ts}.${body}`), privateKey).toString("base64");

  const cases = [
    {
      msgId: "msg_2oAHookgateEd25519Msg01",
      payload: compact({ type: "invoice.paid", timestamp: "2026-01-01T00:00:00Z", data: { id: "inv_1001", amount: 4200 } }),
      note: "Standard Webhooks asymmetric (v1a, Ed25519), compact JSON body",
    },
    {
      msgId: "msg_2oBHookgateEd25519Msg02",
      payload: pretty({ type: "user.renamed", data: { id: "usr_7", name: "Zoë Ångström" } }),
      note: "Standard Webhooks asymmetric (v1a, Ed25519), pretty-printed body with non-ASCII UTF-8",
    },
  ];
  for (const c of cases) {
    const signature = sign(k.privateKey, c.msgId, TS, c.payload);
    assert.ok(
      crypto.verify(null, Buffer.from(`${c.msgId}.${TS}.${c.payload}`), k.publicKey, Buffer.from(signature.slice(4), "base64")),
    );
    fixtures.push({
      provider: "standard-webhooks-ed25519",
      sdk,
      secret,
      signing_key: signingKey,
      payload: c.payload,
      headers: {
        "Content-Type": "application/json",
        "webhook-id": c.msgId,
        "webhook-timestamp": String(TS),
        "webhook-signature": signature,
      },
      timestamp: TS,
      note: c.note,
    });
  }

  // Published vector from svix-webhooks server/svix-server/src/worker.rs
  // (test_asymmetric_key_signing). Ed25519 is deterministic, so signing it
  // here must reproduce the published signature exactly.
  const sk = Buffer.from("6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==", "base64");
  const pk = Buffer.from("1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=", "base64");
  assert.equal(sk.length, 64);
  assert.deepEqual(sk.subarray(32), pk);
  const pub = ed25519Keys(sk.subarray(0, 32).toString("hex"), pk.toString("hex"));
  const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  const ts = 1614265330;
  const body = '{"test": 2432232314}';
  const expected = "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==";
  assert.equal(sign(pub.privateKey, id, ts, body), expected);
  fixtures.push({
    provider: "standard-webhooks-ed25519",
    sdk: "published: svix-server worker.rs test_asymmetric_key_signing",
    secret: "whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=",
    signing_key: "whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==",
    payload: body,
    headers: { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": expected },
    timestamp: ts,
    note: "Published svix-server asymmetric test vector (reproduced here with node:crypto Ed25519)",
  });
}

// ---------------------------------------------------------------- twilio ---
{
  const sdk = sdkVersion("twilio");
  const authToken = "9f86d081884c7d659a2feaa0c55ad015";

  // Form-encoded (the default): signature over URL + sorted name+value pairs.
  {
    const url = urlFor("twilio", "?tenant=acme&kind=sms");
    const params = {
      ToCountry: "US",
      ToState: "CA",
      SmsMessageSid: "SM1f0e8ae6ade43cb3c0ce4525424e404f",
      NumMedia: "0",
      ToCity: "SAN FRANCISCO",
      FromZip: "",
      SmsSid: "SM1f0e8ae6ade43cb3c0ce4525424e404f",
      FromState: "",
      SmsStatus: "received",
      FromCity: "",
      Body: "Grüße aus Zürich ☕ 1+1=2 & more",
      FromCountry: "CH",
      To: "+14155550100",
      ToZip: "94103",
      NumSegments: "1",
      MessageSid: "SM1f0e8ae6ade43cb3c0ce4525424e404f",
      AccountSid: "AC00000000000000000000000000000000",
      From: "+41445550199",
      ApiVersion: "2010-04-01",
    };
    const payload = new URLSearchParams(Object.entries(params)).toString();
    const signature = twilio.getExpectedTwilioSignature(authToken, url, params);
    assert.equal(twilio.validateRequest(authToken, signature, url, Object.fromEntries(new URLSearchParams(payload))), true);
    fixtures.push({
      provider: "twilio",
      sdk,
      secret: authToken,
      payload,
      url,
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "I-Twilio-Idempotency-Token": "3f1a2b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b",
        "X-Twilio-Signature": signature,
      },
      timestamp: TS,
      note: "Twilio inbound SMS, form-encoded body; signature over the full URL (with query) + sorted params",
    });
  }

  // JSON body: bodySHA256 in the query; signature over the URL alone.
  {
    const payload = compact({
      AccountSid: "AC00000000000000000000000000000000",
      CallSid: "CA0123456789abcdef0123456789abcdef",
      CallStatus: "completed",
      Duration: "42",
      Timestamp: "Thu, 01 Jan 2026 00:00:00 +0000",
    });
    const url = urlFor("twilio", `?tenant=acme&bodySHA256=${sha256hex(payload)}`);
    const signature = twilio.getExpectedTwilioSignature(authToken, url, {});
    assert.equal(twilio.validateRequestWithBody(authToken, signature, url, payload), true);
    fixtures.push({
      provider: "twilio",
      sdk,
      secret: authToken,
      payload,
      url,
      headers: {
        "Content-Type": "application/json",
        "I-Twilio-Idempotency-Token": "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d",
        "X-Twilio-Signature": signature,
      },
      timestamp: TS,
      note: "Twilio JSON body: bodySHA256=<hex sha256 of body> in the URL query, signature over the URL only",
    });
  }
}

// -------------------------------------------------------------- sendgrid ---
{
  const sdk = checkedBy("@sendgrid/eventwebhook");
  const keys = p256Keys(KEYS.sendgrid.pkcs8, KEYS.sendgrid.spki);
  const ew = new EventWebhook();
  const cases = [
    {
      id: "sendgrid/1",
      payload:
        compact([
          {
            email: "ada@example.com",
            timestamp: 1767225598,
            "smtp-id": "<14c5d75ce93.dfd.64b469@ismtpd-555>",
            event: "processed",
            category: ["welcome"],
            sg_event_id: "qCtrq3GJTlqm9Kcr9dOz4w",
            sg_message_id: "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0",
          },
          {
            email: "ada@example.com",
            timestamp: 1767225599,
            "smtp-id": "<14c5d75ce93.dfd.64b469@ismtpd-555>",
            event: "delivered",
            response: "250 OK",
            sg_event_id: "rWVYmVk90MjZJ9iohOBa3w",
            sg_message_id: "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0",
          },
        ]) + "\r\n",
      note: "SendGrid signed event webhook: JSON array (processed, delivered) ending in CRLF",
    },
    {
      id: "sendgrid/2",
      payload:
        compact([
          {
            email: "zoë@example.com",
            timestamp: 1767225599,
            event: "open",
            useragent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64)",
            ip: "203.0.113.7",
            sg_event_id: "zmzJhfJgAfUSOW80yEbPyw",
            sg_message_id: "LRzXl66hRm2bRBeYXDGUZg.filter0001.16648.5515E0B88.0",
            sg_machine_open: false,
          },
        ]) + "\r\n",
      note: "SendGrid signed event webhook: single open event with non-ASCII UTF-8, ending in CRLF",
    },
  ];
  const publicKey = ew.convertPublicKeyToECDSA(KEYS.sendgrid.spki);
  for (const c of cases) {
    const signature = ecdsaSign(c.id, keys, `${TS}${c.payload}`, "der").toString("base64");
    assert.equal(ew.verifySignature(publicKey, c.payload, signature, String(TS)), true);
    fixtures.push({
      provider: "sendgrid",
      sdk,
      secret: KEYS.sendgrid.spki,
      signing_key: KEYS.sendgrid.pkcs8,
      payload: c.payload,
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "SendGrid Event API",
        "X-Twilio-Email-Event-Webhook-Signature": signature,
        "X-Twilio-Email-Event-Webhook-Timestamp": String(TS),
      },
      timestamp: TS,
      note: c.note,
    });
  }
}

// ------------------------------------------------ discord / discord-events ---
{
  const sdk = checkedBy("discord-interactions");
  const appId = "1319384563210797056";
  const cases = [
    {
      provider: "discord",
      keys: KEYS.discord,
      payload: compact({
        app_permissions: "562949953601536",
        application_id: appId,
        channel_id: "1319384601345282088",
        data: { id: "1319384650200301600", name: "ping", type: 1 },
        entitlements: [],
        guild_id: "1319384601345282080",
        id: "1319384752356212811",
        locale: "en-US",
        member: { user: { id: "80351110224678912", username: "nelly", global_name: "Nelly" } },
        token: "aW50ZXJhY3Rpb246MTMxOTM4NDc1MjM1NjIxMjgxMTpob29rZ2F0ZQ",
        type: 2,
        version: 1,
      }),
      note: "Discord interaction: APPLICATION_COMMAND (type 2)",
    },
    {
      provider: "discord",
      keys: KEYS.discord,
      payload: compact({ type: 1 }),
      handshake: { type: 1 },
      note: "Discord interaction PING (type 1); the gateway must answer {\"type\":1}",
    },
    {
      provider: "discord-events",
      keys: KEYS.discordEvents,
      payload: compact({
        version: 1,
        application_id: appId,
        type: 1,
        event: {
          type: "APPLICATION_AUTHORIZED",
          timestamp: "2026-01-01T00:00:00.000000+00:00",
          data: {
            integration_type: 1,
            scopes: ["applications.commands"],
            user: { id: "80351110224678912", username: "nelly", global_name: "Nelly" },
          },
        },
      }),
      note: "Discord webhook event (type 1) APPLICATION_AUTHORIZED",
    },
    {
      provider: "discord-events",
      keys: KEYS.discordEvents,
      payload: compact({ version: 1, application_id: appId, type: 0 }),
      note: "Discord webhook event PING (type 0); Discord expects 204 No Content, not a PONG",
    },
  ];
  for (const c of cases) {
    const ts = String(TS);
    const signature = crypto.sign(null, Buffer.from(ts + c.payload), c.keys.privateKey).toString("hex");
    assert.equal(await discordVerifyKey(c.payload, signature, ts, c.keys.pub.toString("hex")), true);
    const f = {
      provider: c.provider,
      sdk,
      secret: c.keys.pub.toString("hex"),
      signing_key: c.keys.seed.toString("hex"),
      payload: c.payload,
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "Discord-Interactions/1.0 (+https://discord.com)",
        "X-Signature-Ed25519": signature,
        "X-Signature-Timestamp": ts,
      },
      timestamp: TS,
      note: c.note,
    };
    if (c.handshake !== undefined) f.expect_handshake_response = c.handshake;
    fixtures.push(f);
  }
}

// ---------------------------------------------------------------- square ---
{
  const sdk = checkedBy("square");
  const secret = "Xq7Lw2pZr9Kc4Vb8Nt3Hf6";
  const cases = [
    {
      url: urlFor("square", "?env=production"),
      payload: compact({
        merchant_id: "6SSW7HV8K2ST5",
        type: "payment.updated",
        event_id: "9a1f7c3e-2b4d-4e6f-8a0c-1d3e5f7a9b2c",
        created_at: "2026-01-01T00:00:00.000Z",
        data: {
          type: "payment",
          id: "KkAkhdMsgzn59SM8A89WgKwekxLZY",
          object: {
            payment: {
              id: "KkAkhdMsgzn59SM8A89WgKwekxLZY",
              amount_money: { amount: 1250, currency: "USD" },
              status: "COMPLETED",
              location_id: "S8GWD5R9QB376",
              order_id: "1QjqpBVyrI9S4H9sTGDWU9JeiWdZY",
              version: 2,
            },
          },
        },
      }),
      note: "Square payment.updated; notification URL has a query string, which is signed",
    },
    {
      url: urlFor("square"),
      payload: compact({
        merchant_id: "6SSW7HV8K2ST5",
        type: "customer.created",
        event_id: "0b2c4d6e-8f1a-4b3c-9d5e-7f9a1b3c5d7e",
        created_at: "2026-01-01T00:00:00.000Z",
        data: {
          type: "customer",
          id: "A0AP25A6ZH5N8R3RA5KJ8Z3MY8",
          object: { customer: { id: "A0AP25A6ZH5N8R3RA5KJ8Z3MY8", given_name: "Amélie", family_name: "Poulain" } },
        },
      }),
      note: "Square customer.created, non-ASCII UTF-8",
    },
  ];
  for (const c of cases) {
    const signature = hmac("sha256", secret, c.url + c.payload, "base64");
    const ok = await SquareWebhooksHelper.verifySignature({
      requestBody: c.payload,
      signatureHeader: signature,
      signatureKey: secret,
      notificationUrl: c.url,
    });
    assert.equal(ok, true);
    fixtures.push({
      provider: "square",
      sdk,
      secret,
      payload: c.payload,
      url: c.url,
      headers: { "Content-Type": "application/json", "x-square-hmacsha256-signature": signature },
      timestamp: TS,
      note: c.note,
    });
  }
}

// ---------------------------------------------------------------- paddle ---
{
  const sdk = checkedBy("@paddle/paddle-node-sdk");
  const secret = "pdl_ntfset_01jgf3m8x0qz4c7v2k9d5s6t1w_h7Ks2mQ9xP4vZ8rT1bN6cY3fJ5wL0dGa";
  const paddle = new Paddle("pdl_sdbx_apikey_01jgf3m8hookgate_unused");
  const cases = [
    {
      payload: compact({
        event_id: "evt_01jgf3n2a4b5c6d7e8f9g0h1j2",
        event_type: "transaction.completed",
        occurred_at: "2026-01-01T00:00:00.000000Z",
        notification_id: "ntf_01jgf3n2a4b5c6d7e8f9g0h1j3",
        data: {
          id: "txn_01jgf3kq7p2r4s6t8v0w2x4y6z",
          status: "completed",
          customer_id: "ctm_01jgf3hz5s8t0v2w4x6y8z0a2b",
          currency_code: "EUR",
          origin: "web",
          items: [],
          payments: [],
          created_at: "2025-12-31T23:59:30.000000Z",
          billed_at: "2025-12-31T23:59:59.000000Z",
        },
      }),
      note: "Paddle Billing transaction.completed; SDK verifier run with its clock pinned",
    },
    {
      payload: compact({
        event_id: "evt_01jgf3p4b6c8d0e2f4g6h8j0k2",
        event_type: "subscription.canceled",
        occurred_at: "2026-01-01T00:00:00.000000Z",
        notification_id: "ntf_01jgf3p4b6c8d0e2f4g6h8j0k3",
        data: {
          id: "sub_01jgf3m1n3p5q7r9s1t3v5w7x9",
          status: "canceled",
          customer_id: "ctm_01jgf3hz5s8t0v2w4x6y8z0a2b",
          canceled_at: "2026-01-01T00:00:00.000000Z",
          billing_cycle: { interval: "month", frequency: 1 },
          items: [],
          custom_data: { note: "Kündigung — danke" },
        },
      }),
      note: "Paddle Billing subscription.canceled, non-ASCII UTF-8",
    },
  ];
  for (const c of cases) {
    const signature = `ts=${TS};h1=${hmac("sha256", secret, `${TS}:${c.payload}`, "hex")}`;
    await at(TS + 1, async () => {
      assert.equal(await paddle.webhooks.isSignatureValid(c.payload, secret, signature), true);
      const evt = await paddle.webhooks.unmarshal(c.payload, secret, signature);
      assert.equal(evt.eventId, JSON.parse(c.payload).event_id);
    });
    fixtures.push({
      provider: "paddle",
      sdk,
      secret,
      payload: c.payload,
      headers: { "Content-Type": "application/json", "Paddle-Signature": signature },
      timestamp: TS,
      note: c.note,
    });
  }
}

// ------------------------------------------------------------------ zoom ---
{
  const sdk = checkedBy("@zoom/rivet");
  const secret = "hK4mP7qR2sT9vW3xZ6bC8d";
  const receiver = new ZoomAwsLambdaReceiver({ webhooksSecretToken: secret });
  const handler = receiver.start();
  const cases = [
    {
      payload: compact({
        event: "meeting.started",
        event_ts: 1767225600123,
        payload: {
          account_id: "AAAAAABBBB",
          object: {
            id: "85716385201",
            uuid: "4444AAAiAAAAAiAiAiiAii==",
            host_id: "x1yCzABCDEfg23HiJKl4mN",
            topic: "Weekly sync — Ünïcode",
            type: 2,
            start_time: "2026-01-01T00:00:00Z",
            timezone: "UTC",
            duration: 30,
          },
        },
      }),
      note: "Zoom meeting.started",
    },
    {
      payload: compact({
        payload: { plainToken: "qgg8vlvZRS6UYooatFL8Aw" },
        event_ts: 1654503849680,
        event: "endpoint.url_validation",
      }),
      handshake: {
        plainToken: "qgg8vlvZRS6UYooatFL8Aw",
        encryptedToken: hmac("sha256", secret, "qgg8vlvZRS6UYooatFL8Aw", "hex"),
      },
      note: "Zoom endpoint.url_validation (signed); the gateway answers {plainToken, encryptedToken}",
    },
  ];
  for (const c of cases) {
    const signature = "v0=" + hmac("sha256", secret, `v0:${TS}:${c.payload}`, "hex");
    const headers = {
      "Content-Type": "application/json",
      "x-zm-request-timestamp": String(TS),
      "x-zm-signature": signature,
    };
    // rivet logs every Lambda event with console.debug (stdout); silence it.
    const realDebug = console.debug;
    console.debug = () => {};
    let res;
    try {
      res = await handler({ body: c.payload, headers, isBase64Encoded: false }, {});
    } finally {
      console.debug = realDebug;
    }
    assert.equal(res.statusCode, 200, res.body);
    if (c.handshake) assert.deepEqual(JSON.parse(res.body), c.handshake);
    const f = { provider: "zoom", sdk, secret, payload: c.payload, headers, timestamp: TS, note: c.note };
    if (c.handshake) f.expect_handshake_response = c.handshake;
    fixtures.push(f);
  }
}

// ---------------------------------------------------------------- linear ---
{
  const sdk = checkedBy("@linear/sdk");
  const secret = "lin_wh_Hookgate7f3c9a1e5b2d8f4a6c0e9b7d3f1a5c8e";
  const client = new LinearWebhookClient(secret);
  const cases = [
    {
      event: "Issue",
      delivery: "2a7c1e9f-4b3d-4f6a-8e2c-0d9b7f5a3c1e",
      payload: compact({
        action: "create",
        actor: { id: "2e9f6c1a-7b4d-4a3e-9c8f-1d2b3e4f5a6b", type: "user", name: "Ada Lovelace" },
        createdAt: "2026-01-01T00:00:00.000Z",
        data: {
          id: "f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b",
          identifier: "ENG-42",
          title: "Gateway drops “smart quotes”",
          priority: 2,
          teamId: "7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f",
        },
        url: "https://linear.app/hookgate/issue/ENG-42/gateway-drops-smart-quotes",
        type: "Issue",
        organizationId: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        webhookTimestamp: TS_MS + 123,
        webhookId: "5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f8a",
      }),
      note: "Linear Issue create; webhookTimestamp (ms) in the signed body",
    },
    {
      event: "Comment",
      delivery: "8b9c0d1e-2f3a-4b5c-9d6e-7f8a9b0c1d2e",
      payload: compact({
        action: "create",
        actor: { id: "2e9f6c1a-7b4d-4a3e-9c8f-1d2b3e4f5a6b", type: "user", name: "Ada Lovelace" },
        createdAt: "2026-01-01T00:00:00.000Z",
        data: { id: "c0ffee00-1234-4abc-8def-0123456789ab", body: "LGTM 👍", issueId: "f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b" },
        url: "https://linear.app/hookgate/issue/ENG-42#comment-c0ffee00",
        type: "Comment",
        organizationId: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        webhookTimestamp: TS_MS + 456,
        webhookId: "5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f8a",
      }),
      note: "Linear Comment create, emoji in body",
    },
  ];
  for (const c of cases) {
    const signature = hmac("sha256", secret, c.payload, "hex");
    await at(TS + 10, () => assert.equal(client.verify(Buffer.from(c.payload), signature), true));
    fixtures.push({
      provider: "linear",
      sdk,
      secret,
      payload: c.payload,
      headers: {
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": "Linear-Webhook",
        "Linear-Delivery": c.delivery,
        "Linear-Event": c.event,
        "Linear-Signature": signature,
      },
      timestamp: TS,
      note: c.note,
    });
  }
}

// --------------------------------------------------------------- hubspot ---
{
  const sdk = sdkVersion("@hubspot/api-client");
  const { Signature } = hubspot;
  const secret = "8e1c3b5a-7d9f-4a2e-b6c8-0f1d3e5a7b9c";
  const v1Body = compact([
    {
      eventId: 1767225600,
      subscriptionId: 2881778,
      portalId: 62515,
      appId: 1160452,
      occurredAt: TS_MS - 500,
      subscriptionType: "contact.creation",
      attemptNumber: 0,
      objectId: 123,
      changeFlag: "CREATED",
      changeSource: "CRM",
    },
  ]);
  const v1Batch = compact([
    { eventId: 1767225601, subscriptionId: 2881780, portalId: 62515, appId: 1160452, occurredAt: TS_MS - 400, subscriptionType: "contact.propertyChange", attemptNumber: 0, objectId: 123, propertyName: "firstname", propertyValue: "Zoë", changeSource: "CRM" },
    { eventId: 1767225602, subscriptionId: 2881781, portalId: 62515, appId: 1160452, occurredAt: TS_MS - 300, subscriptionType: "contact.deletion", attemptNumber: 1, objectId: 124, changeFlag: "DELETED", changeSource: "CRM" },
  ]);
  const v2Url = urlFor("hubspot-v2", "?portalId=62515");
  const v2GetUrl = urlFor("hubspot-v2", "?userId=12345&associatedObjectId=51&associatedObjectType=CONTACT&portalId=62515");
  const v2Body = compact({ callbackId: "ap-102670506-56776413549-7", origin: { portalId: 62515, actionDefinitionId: 1234 }, inputFields: { widgetName: "Ünïcode widget" } });
  const v3PostUrl = urlFor("hubspot-v3", "?portalId=62515");
  const v3PostBody = compact([
    { eventId: 4067334810, subscriptionId: 2881779, portalId: 62515, appId: 1160452, occurredAt: TS_MS - 500, subscriptionType: "deal.propertyChange", attemptNumber: 0, objectId: 456, propertyName: "dealstage", propertyValue: "closedwon", changeSource: "CRM" },
  ]);
  const v3GetUrl = urlFor("hubspot-v3", "?userId=12345&associatedObjectId=51&associatedObjectType=CONTACT&portalId=62515");

  const cases = [
    { provider: "hubspot-v1", version: "v1", method: "POST", url: urlFor("hubspot-v1"), payload: v1Body, note: "HubSpot v1: hex SHA-256 of client secret + body (webhooks API)" },
    { provider: "hubspot-v1", version: "v1", method: "POST", url: urlFor("hubspot-v1"), payload: v1Batch, note: "HubSpot v1: batch of two events, non-ASCII property value" },
    { provider: "hubspot-v2", version: "v2", method: "POST", url: v2Url, payload: v2Body, note: "HubSpot v2: hex SHA-256 of client secret + method + URL + body (workflow action)" },
    { provider: "hubspot-v2", version: "v2", method: "GET", url: v2GetUrl, payload: "", note: "HubSpot v2 on a GET with an empty body (CRM card fetch); URL query is signed" },
    { provider: "hubspot-v3", version: "v3", method: "POST", url: v3PostUrl, payload: v3PostBody, note: "HubSpot v3: base64 HMAC-SHA256 of method + URL + body + timestamp (ms)" },
    { provider: "hubspot-v3", version: "v3", method: "GET", url: v3GetUrl, payload: "", note: "HubSpot v3 on a GET with an empty body (CRM card fetch); URL query is signed" },
  ];
  for (const c of cases) {
    const opts = { clientSecret: secret, requestBody: c.payload, url: c.url, timestamp: c.version === "v3" ? TS_MS : undefined };
    const signature = Signature.getSignature(c.method, c.version, opts);
    await at(TS + 10, () =>
      assert.equal(Signature.isValid({ ...opts, signature, method: c.method, signatureVersion: c.version }), true),
    );
    const headers = { "Content-Type": "application/json" };
    if (c.version === "v3") {
      headers["X-HubSpot-Signature-v3"] = signature;
      headers["X-HubSpot-Request-Timestamp"] = String(TS_MS);
    } else {
      headers["X-HubSpot-Signature"] = signature;
      headers["X-HubSpot-Signature-Version"] = c.version;
    }
    if (c.method === "GET") delete headers["Content-Type"];
    fixtures.push({ provider: c.provider, sdk, secret, payload: c.payload, method: c.method, url: c.url, headers, timestamp: TS, note: c.note });
  }
}

// ----------------------------------------------------------------- adyen ---
{
  const sdk = sdkVersion("@adyen/api-library");
  const validator = new adyen.hmacValidator();
  const item = (fields, extra) => {
    const it = { additionalData: { ...extra }, ...fields };
    it.additionalData.hmacSignature = validator.calculateHmac(it, KEY);
    assert.equal(validator.validateHMAC(it, KEY), true);
    return { NotificationRequestItem: it };
  };
  let KEY;
  const cases = [];
  // Adyen shows HMAC keys as upper-case hex.
  KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
  cases.push({
    secret: KEY,
    payload: compact({
      live: "false",
      notificationItems: [
        item(
          {
            amount: { currency: "EUR", value: 1000 },
            eventCode: "AUTHORISATION",
            eventDate: "2026-01-01T01:00:00+01:00",
            merchantAccountCode: "HookgateECOM",
            merchantReference: "order-1001",
            operations: ["CANCEL", "CAPTURE", "REFUND"],
            paymentMethod: "visa",
            pspReference: "QFQTPCQ8HXSKGK82",
            reason: "033899:1111:03/2030",
            success: "true",
          },
          { authCode: "033899", cardSummary: "1111", expiryDate: "03/2030" },
        ),
      ],
    }),
    note: "Adyen AUTHORISATION notification; hmacSignature inside the item, upper-case hex key",
  });
  KEY = "7d3f1a9c5e2b8d4f6a0c9e7b5d3f1a8c6e4b2d0f9a7c5e3b1d8f6a4c2e0b9d7f";
  cases.push({
    secret: KEY,
    payload: compact({
      live: "false",
      notificationItems: [
        item(
          {
            amount: { currency: "EUR", value: 1000 },
            eventCode: "CAPTURE",
            eventDate: "2026-01-01T01:00:00+01:00",
            merchantAccountCode: "HookgateECOM",
            merchantReference: "order-1001",
            originalReference: "QFQTPCQ8HXSKGK82",
            paymentMethod: "visa",
            pspReference: "V4HZ4RBFJGXXGN82",
            reason: "",
            success: "true",
          },
          {},
        ),
        item(
          {
            amount: { currency: "EUR", value: 250 },
            eventCode: "REFUND",
            eventDate: "2026-01-01T01:00:00+01:00",
            merchantAccountCode: "HookgateECOM",
            merchantReference: "order-1001-r1",
            originalReference: "QFQTPCQ8HXSKGK82",
            paymentMethod: "visa",
            pspReference: "ZZDH4RBFJGXXGN83",
            reason: "",
            success: "false",
          },
          {},
        ),
      ],
    }),
    note: "Adyen batch of two items (CAPTURE, failed REFUND) each with its own hmacSignature; lower-case hex key",
  });
  for (const c of cases) {
    fixtures.push({
      provider: "adyen",
      sdk,
      secret: c.secret,
      payload: c.payload,
      headers: { "Content-Type": "application/json" },
      timestamp: TS,
      note: c.note,
    });
  }
}

// ------------------------------------------------------------------- mux ---
{
  const sdk = checkedBy("@mux/mux-node");
  const secret = "p3k9v1t7m5q2x8c4z6b0n2h4j6l8r0s3";
  const mux = new Mux({ tokenId: "hookgate-unused", tokenSecret: "hookgate-unused", webhookSecret: secret });
  const cases = [
    {
      payload: compact({
        type: "video.asset.ready",
        object: { type: "asset", id: "0201p02fGKPE7MrbC269XRD7LpcHhrmbu0002" },
        id: "3a56ac3d-33da-4366-855b-f592d898409d",
        environment: { name: "Production", id: "j0863n" },
        data: { status: "ready", playback_ids: [{ policy: "public", id: "85g23ABCDEF" }], id: "0201p02fGKPE7MrbC269XRD7LpcHhrmbu0002", duration: 23.8 },
        created_at: "2026-01-01T00:00:00.000000Z",
        attempts: [],
        accessor_source: null,
        accessor: null,
        request_id: null,
      }),
      note: "Mux video.asset.ready; SDK unwrap run with its clock pinned",
    },
    {
      payload: compact({
        type: "video.live_stream.active",
        object: { type: "live", id: "ZYX4vZCSL0201kPDY02a00kk6aGJh3AQy2B" },
        id: "8a2e0d1c-4b7f-4c3e-9a5d-6f1b2c3d4e5f",
        environment: { name: "Production", id: "j0863n" },
        data: { status: "active", stream_key: "hidden", id: "ZYX4vZCSL0201kPDY02a00kk6aGJh3AQy2B", passthrough: "Live – Zürich" },
        created_at: "2026-01-01T00:00:00.000000Z",
        attempts: [],
        accessor_source: null,
        accessor: null,
        request_id: null,
      }),
      note: "Mux video.live_stream.active, non-ASCII passthrough",
    },
  ];
  for (const c of cases) {
    const signature = `t=${TS},v1=${hmac("sha256", secret, `${TS}.${c.payload}`, "hex")}`;
    const headers = { "Content-Type": "application/json", "Mux-Signature": signature };
    await at(TS + 10, async () => {
      const evt = await mux.webhooks.unwrap(c.payload, headers, secret);
      assert.equal(evt.type, JSON.parse(c.payload).type);
    });
    fixtures.push({ provider: "mux", sdk, secret, payload: c.payload, headers, timestamp: TS, note: c.note });
  }
}

// ----------------------------------------------------- coinbase-commerce ---
{
  const sdk = sdkVersion("coinbase-commerce-node");
  const { Webhook } = coinbaseCommerce;
  const secret = "3c8f1a2e-9b7d-4c5e-a6f0-1d2e3f4a5b6c";
  const cases = [
    [
      "charge:confirmed",
      compact({
        id: 1,
        scheduled_for: "2026-01-01T00:00:00Z",
        attempt_number: 1,
        event: {
          id: "24934862-d980-46cb-9402-43c81b0cdba6",
          resource: "event",
          type: "charge:confirmed",
          api_version: "2018-03-22",
          created_at: "2026-01-01T00:00:00Z",
          data: { code: "66BEOV2A", name: "The Sovereign Individual", pricing_type: "fixed_price", pricing: { local: { amount: "100.00", currency: "USD" } } },
        },
      }),
      "Coinbase Commerce charge:confirmed, signed with the SDK's Webhook.computeSignature",
    ],
    [
      "charge:failed",
      compact({
        id: 2,
        scheduled_for: "2026-01-01T00:00:00Z",
        attempt_number: 2,
        event: {
          id: "3b5d7f9a-1c2e-4f6a-8b0d-2e4f6a8c0e1f",
          resource: "event",
          type: "charge:failed",
          api_version: "2018-03-22",
          created_at: "2026-01-01T00:00:00Z",
          data: { code: "7X9KQ2LM", name: "Café subscription ☕", pricing_type: "fixed_price", pricing: { local: { amount: "4.50", currency: "EUR" } } },
        },
      }),
      "Coinbase Commerce charge:failed (retry attempt 2), non-ASCII UTF-8",
    ],
  ];
  for (const [type, payload, note] of cases) {
    const signature = Webhook.computeSignature(payload, secret);
    assert.equal(Webhook.verifySigHeader(payload, signature, secret), true);
    assert.equal(Webhook.verifyEventBody(payload, signature, secret).type, type);
    fixtures.push({
      provider: "coinbase-commerce",
      sdk,
      secret,
      payload,
      headers: { "Content-Type": "application/json", "X-CC-Webhook-Signature": signature },
      timestamp: TS,
      note,
    });
  }
}

// ----------------------------------------------------------------- plaid ---
{
  const sign = (keys, kid, iat, body, id) => {
    const header = b64u(compact({ alg: "ES256", kid, typ: "JWT" }));
    const claims = b64u(compact({ iat, request_body_sha256: sha256hex(body) }));
    const sig = ecdsaSign(id, keys, `${header}.${claims}`, "ieee-p1363");
    return `${header}.${claims}.${b64u(sig)}`;
  };
  const verifyJWT = (jwt, jwk, body) => {
    const [h, c, s] = jwt.split(".");
    const key = crypto.createPublicKey({ key: jwk, format: "jwk" });
    assert.ok(crypto.verify("sha256", Buffer.from(`${h}.${c}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(s, "base64url")));
    const claims = JSON.parse(Buffer.from(c, "base64url"));
    assert.equal(claims.request_body_sha256, sha256hex(body));
    assert.equal(JSON.parse(Buffer.from(h, "base64url")).alg, "ES256");
    return claims;
  };
  const jwkString = (kid, x, y) => compact({ alg: "ES256", crv: "P-256", kid, kty: "EC", use: "sig", x, y });

  {
    const keys = p256Keys(KEYS.plaid.pkcs8, KEYS.plaid.spki);
    const pub = keys.publicKey.export({ format: "jwk" });
    const secret = jwkString(KEYS.plaid.kid, pub.x, pub.y);
    const payload = pretty({
      environment: "sandbox",
      error: null,
      item_id: "Ed6bjNrDLJfGvZWwnkQlfxwoNz54B5C97ejBr",
      new_transactions: 12,
      webhook_code: "DEFAULT_UPDATE",
      webhook_type: "TRANSACTIONS",
    });
    const jwt = sign(keys, KEYS.plaid.kid, TS, payload, "plaid/1");
    verifyJWT(jwt, JSON.parse(secret), payload);
    fixtures.push({
      provider: "plaid",
      sdk: perDocs(DOCS.plaid),
      secret,
      signing_key: KEYS.plaid.pkcs8,
      payload,
      headers: { "Content-Type": "application/json", "Plaid-Verification": jwt },
      timestamp: TS,
      note: "Plaid TRANSACTIONS DEFAULT_UPDATE; Plaid-Verification is an ES256 JWS over {iat, request_body_sha256}",
    });
  }

  // Real-world vector (publicly posted Plaid webhook + key).
  {
    const jwt =
      "eyJhbGciOiJFUzI1NiIsImtpZCI6IjZjNTUxNmUxLTkyZGMtNDc5ZS1hOGZmLTVhNTE5OTJlMDAwMSIsInR5cCI6IkpXVCJ9." +
      "eyJpYXQiOjE1OTA4ODcwMDEsInJlcXVlc3RfYm9keV9zaGEyNTYiOiJiNjNhMDdiNTQ3YjAwZjk5MjU0N2Y2YmJjOGQ5YWNjNjFhOGNjZWUxMzhiYzgyZjQ0YTZiYWEwOTY4M2E1ZDBmIn0." +
      "OOKvIihgqCj7Qrb2bmz7T3t7uK-0JyjiEqL2s1kWeJBM4MMmjaHKK8GmU_z91QolBWMzvPgs718EElY-rE3cwQ";
    const secret = jwkString(
      "6c5516e1-92dc-479e-a8ff-5a51992e0001",
      "35lvC8uz2QrWpQJ3TUH8t9o9DURMp7ydU518RKDl20k",
      "I8BuXB2bvxelzJAd7OKhd-ZwjCst05Fx47Mb_0ugros",
    );
    const payload = pretty({
      error: null,
      item_id: "yxQbxDjnD8hr69pKbQpbcKeVn3GL9QuyA7NV3",
      new_transactions: 390,
      webhook_code: "HISTORICAL_UPDATE",
      webhook_type: "TRANSACTIONS",
    });
    const want = "b63a07b547b00f992547f6bbc8d9acc61a8ccee138bc82f44a6baa09683a5d0f";
    if (sha256hex(payload) !== want) {
      process.stderr.write(`plaid real-world vector skipped: sha256(body) = ${sha256hex(payload)}, want ${want}\n`);
    } else {
      const claims = verifyJWT(jwt, JSON.parse(secret), payload);
      assert.equal(claims.iat, 1590887001);
      fixtures.push({
        provider: "plaid",
        sdk: "published: real Plaid webhook and its verification key (JWK kid 6c5516e1-92dc-479e-a8ff-5a51992e0001)",
        secret,
        payload,
        headers: { "Content-Type": "application/json", "Plaid-Verification": jwt },
        timestamp: 1590887001,
        note: "Real Plaid-signed webhook (2020); no private key, so no signing_key",
      });
    }
  }
}

// ----------------------------------------- HMAC schemes with no Node SDK ---
// Signed with node:crypto following each provider's documentation;
// crosscheck.py recomputes them independently.
{
  const docsFixture = (provider, f) => fixtures.push({ provider, sdk: perDocs(DOCS[provider]), timestamp: TS, ...f });

  // intercom
  {
    const secret = "4a6c8e0f-2b4d-4f6a-8c0e-2f4a6c8e0b1d";
    const bodies = [
      [
        compact({
          type: "notification_event",
          app_id: "hkgt1a2b",
          data: { type: "notification_event_data", item: { type: "conversation", id: "147", created_at: TS - 5, source: { type: "conversation", body: "<p>Hallo, ich brauche Hilfe</p>", author: { type: "user", id: "5e8f3c2a" } } } },
          links: {},
          id: "notif_3c1f2e4a-5b6d-4e7f-8a9b-0c1d2e3f4a5b",
          topic: "conversation.user.created",
          delivery_status: "pending",
          delivery_attempts: 1,
          delivered_at: 0,
          first_sent_at: TS,
          created_at: TS,
          self: null,
        }),
        "Intercom conversation.user.created",
      ],
      [
        compact({
          type: "notification_event",
          app_id: "hkgt1a2b",
          data: { type: "notification_event_data", item: { type: "ping", message: "something something interzen" } },
          links: {},
          id: null,
          topic: "ping",
          delivery_status: null,
          delivery_attempts: 1,
          delivered_at: 0,
          first_sent_at: TS,
          created_at: TS,
          self: null,
        }),
        "Intercom ping notification (sent from the Developer Hub)",
      ],
    ];
    for (const [payload, note] of bodies) {
      docsFixture("intercom", {
        secret,
        payload,
        headers: { "Content-Type": "application/json", "X-Hub-Signature": "sha1=" + hmac("sha1", secret, payload, "hex") },
        note,
      });
    }
  }

  // mailgun: the signature is inside the body; no header.
  {
    const secret = "3f9c1e7a5b2d8f4a6c0e9b7d3f1a5c8e";
    const mk = (token, eventData, note) => {
      const ts = String(TS);
      const payload = compact({
        signature: { timestamp: ts, token, signature: hmac("sha256", secret, ts + token, "hex") },
        "event-data": eventData,
      });
      docsFixture("mailgun", { secret, payload, headers: { "Content-Type": "application/json" }, note });
    };
    mk(
      "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0",
      {
        id: "CPgfbmQMTCKtHW6uIWtuVe",
        timestamp: 1767225599.123456,
        "log-level": "info",
        event: "delivered",
        "delivery-status": { code: 250, message: "OK", description: "" },
        message: { headers: { to: "alice@example.com", "message-id": "20260101000000.1.ABCDEF@mg.example.com", from: "Bob <bob@mg.example.com>", subject: "Test delivered webhook" } },
        recipient: "alice@example.com",
        "user-variables": {},
      },
      "Mailgun delivered event; signature {timestamp, token, signature} inside the JSON body",
    );
    mk(
      "0c6f1e2d3b4a59687f8e9d0c1b2a3f4e5d6c7b8a9f0e1d2c3b",
      {
        id: "G9Bn5sl1TC6nu79C8C0bwg",
        timestamp: 1767225599.654321,
        "log-level": "error",
        event: "failed",
        severity: "permanent",
        reason: "suppress-bounce",
        "delivery-status": { code: 605, message: "Not delivering to previously bounced address", description: "" },
        message: { headers: { to: "nobody@example.com", "message-id": "20260101000000.2.ABCDEF@mg.example.com", from: "Bob <bob@mg.example.com>", subject: "Re: ¿Qué tal?" } },
        recipient: "nobody@example.com",
      },
      "Mailgun permanent failure event, non-ASCII subject",
    );
  }

  // bitbucket
  {
    const secret = "bb-hookgate-secret-4f7a";
    const repo = { type: "repository", full_name: "hookgate/hookgate", uuid: "{7e3c0b2a-1d4f-4a6e-9c8b-5f2e1d0c3b4a}" };
    const actor = { type: "user", display_name: "Ada Lovelace", uuid: "{1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d}" };
    const cases = [
      [
        "repo:push",
        "9c1e3a5b-7d9f-4b2d-8f4a-6c8e0a2c4e6f",
        compact({
          push: { changes: [{ new: { type: "branch", name: "main", target: { hash: "6113728f27ae82c7b1a177c8d03f9e96e0adf246" } }, old: { type: "branch", name: "main", target: { hash: "0ab1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9" } } }] },
          repository: repo,
          actor,
        }),
        "Bitbucket Cloud repo:push",
      ],
      [
        "pullrequest:created",
        "1d3f5b7a-9c2e-4d6f-8a1b-3c5e7f9a2b4d",
        compact({
          pullrequest: { id: 7, title: "Übersetzung: README → Deutsch", state: "OPEN", source: { branch: { name: "docs/de" } }, destination: { branch: { name: "main" } } },
          repository: repo,
          actor,
        }),
        "Bitbucket Cloud pullrequest:created, non-ASCII UTF-8",
      ],
    ];
    for (const [event, requestUUID, payload, note] of cases) {
      docsFixture("bitbucket", {
        secret,
        payload,
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "Bitbucket-Webhooks/2.0",
          "X-Event-Key": event,
          "X-Hook-UUID": "4f2d6b8a-0c1e-4a3b-9d5f-7e8a9b0c1d2e",
          "X-Request-UUID": requestUUID,
          "X-Attempt-Number": "1",
          "X-Hub-Signature": "sha256=" + hmac("sha256", secret, payload, "hex"),
        },
        note,
      });
    }
  }

  // jira
  {
    const secret = "jira-hookgate-secret-9b2c";
    const user = { accountId: "5b10ac8d82e05b22cc7d4ef5", displayName: "Ada Lovelace" };
    const cases = [
      [
        "1767225600-10001-1",
        compact({
          timestamp: TS_MS,
          webhookEvent: "jira:issue_created",
          issue_event_type_name: "issue_created",
          user,
          issue: { id: "10001", key: "HG-1", fields: { summary: "Vérifier la signature", issuetype: { name: "Bug" }, project: { key: "HG" } } },
        }),
        "Jira Cloud jira:issue_created (admin webhook with a secret)",
      ],
      [
        "1767225600-10001-2",
        compact({
          timestamp: TS_MS + 250,
          webhookEvent: "comment_created",
          comment: { id: "10050", body: "Fixed in {{v1.2.3}} — see HG-2", author: user, created: "2026-01-01T00:00:00.250+0000" },
          issue: { id: "10001", key: "HG-1", fields: { summary: "Vérifier la signature" } },
        }),
        "Jira Cloud comment_created",
      ],
    ];
    for (const [identifier, payload, note] of cases) {
      docsFixture("jira", {
        secret,
        payload,
        headers: {
          "Content-Type": "application/json",
          "X-Atlassian-Webhook-Identifier": identifier,
          "X-Hub-Signature": "sha256=" + hmac("sha256", secret, payload, "hex"),
        },
        note,
      });
    }
  }

  // gitlab: plain token comparison.
  {
    const secret = "glwt-hookgate-7d1f3b5a9c";
    const cases = [
      [
        "Push Hook",
        compact({
          object_kind: "push",
          event_name: "push",
          before: "95790bf891e76fee5e1747ab589903a6a1f80f22",
          after: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
          ref: "refs/heads/main",
          user_username: "ada",
          project_id: 15,
          project: { id: 15, path_with_namespace: "hookgate/hookgate" },
          commits: [{ id: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", message: "Fix naïve parsing\n" }],
          total_commits_count: 1,
        }),
        "a8f3e1c2-4b5d-4e6f-9a7b-8c9d0e1f2a3b",
        "GitLab Push Hook; X-Gitlab-Token carries the secret verbatim",
      ],
      [
        "Merge Request Hook",
        compact({
          object_kind: "merge_request",
          event_type: "merge_request",
          user: { username: "ada" },
          project: { id: 15, path_with_namespace: "hookgate/hookgate" },
          object_attributes: { id: 99, iid: 1, title: "Add presets", state: "opened", action: "open" },
        }),
        "b9a4f2d3-5c6e-4f7a-8b9c-0d1e2f3a4b5c",
        "GitLab Merge Request Hook",
      ],
    ];
    for (const [event, payload, uuid, note] of cases) {
      docsFixture("gitlab", {
        secret,
        payload,
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "GitLab/18.7.0",
          "X-Gitlab-Event": event,
          "X-Gitlab-Instance": "https://gitlab.com",
          "X-Gitlab-Webhook-UUID": "0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f",
          "X-Gitlab-Event-UUID": uuid,
          "Idempotency-Key": uuid,
          "X-Gitlab-Token": secret,
        },
        note,
      });
    }
  }

  // twitch
  {
    const secret = "hookgate-twitch-secret-0123456789";
    const sub = (status) => ({
      id: "f1c2a387-161a-49f9-a165-0f21d7a4e1c4",
      status,
      type: "channel.follow",
      version: "2",
      condition: { broadcaster_user_id: "12826", moderator_user_id: "12826" },
      transport: { method: "webhook", callback: urlFor("twitch") },
      created_at: "2025-12-31T23:59:00.634234626Z",
      cost: 0,
    });
    const cases = [
      {
        type: "notification",
        id: "befa7b53-d79d-478f-86b9-120f112b044e",
        tsRFC: "2026-01-01T00:00:00.123456789Z",
        payload: compact({
          subscription: sub("enabled"),
          event: { user_id: "1337", user_login: "awesome_user", user_name: "Awesome_User", broadcaster_user_id: "12826", broadcaster_user_login: "twitch", broadcaster_user_name: "Twitch", followed_at: "2025-12-31T23:59:59.123456789Z" },
        }),
        note: "Twitch EventSub notification channel.follow; signed message = id + RFC3339 timestamp + body",
      },
      {
        type: "webhook_callback_verification",
        id: "e76c6bd4-55c9-4987-8304-da1588d8988b",
        tsRFC: "2026-01-01T00:00:00.987654321Z",
        payload: compact({ challenge: "pogchamp-kappa-360noscope-vohiyo", subscription: sub("webhook_callback_verification_pending") }),
        handshake: "pogchamp-kappa-360noscope-vohiyo",
        note: "Twitch EventSub webhook_callback_verification; the gateway answers with the challenge as plain text",
      },
    ];
    for (const c of cases) {
      const f = {
        secret,
        payload: c.payload,
        headers: {
          "Content-Type": "application/json",
          "Twitch-Eventsub-Message-Id": c.id,
          "Twitch-Eventsub-Message-Retry": "0",
          "Twitch-Eventsub-Message-Type": c.type,
          "Twitch-Eventsub-Message-Signature": "sha256=" + hmac("sha256", secret, c.id + c.tsRFC + c.payload, "hex"),
          "Twitch-Eventsub-Message-Timestamp": c.tsRFC,
          "Twitch-Eventsub-Subscription-Type": "channel.follow",
          "Twitch-Eventsub-Subscription-Version": "2",
        },
        note: c.note,
      };
      if (c.handshake !== undefined) f.expect_handshake_response = c.handshake;
      docsFixture("twitch", f);
    }
  }

  // typeform
  {
    const secret = "tf-hookgate-secret-5c7e9a";
    const cases = [
      [
        compact({
          event_id: "01KDX3H0GZ8YH3Y8K0B1W6V2QJ",
          event_type: "form_response",
          form_response: {
            form_id: "lT4Z3j",
            token: "a3a12ec67a1365927098a606107fac15",
            submitted_at: "2026-01-01T00:00:00Z",
            definition: { id: "lT4Z3j", title: "Zufriedenheit" },
            answers: [{ type: "choice", choice: { label: "Très bien" }, field: { id: "eRgf38Ql", type: "multiple_choice" } }],
          },
        }),
        "Typeform form_response; signature is sha256= + base64",
      ],
      [
        compact({
          event_id: "01KDX3H0H1A2B3C4D5E6F7G8H9",
          event_type: "form_response",
          form_response: {
            form_id: "lT4Z3j",
            token: "b4b23fd78b2476038109b717218abd26",
            submitted_at: "2026-01-01T00:00:00Z",
            answers: [{ type: "text", text: "Line one\nLine \"two\"", field: { id: "k9Pq2Rst", type: "long_text" } }],
          },
        }),
        "Typeform form_response with escaped newline and quotes",
      ],
    ];
    for (const [payload, note] of cases) {
      docsFixture("typeform", {
        secret,
        payload,
        headers: { "Content-Type": "application/json", "User-Agent": "Typeform Webhooks", "Typeform-Signature": "sha256=" + hmac("sha256", secret, payload, "base64") },
        note,
      });
    }
  }

  // calendly
  {
    const secret = "cal-hookgate-signing-key-2e4f6a8c";
    const invitee = (status) => ({
      email: "ada@example.com",
      name: "Ada Lovelace",
      uri: "https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2/invitees/AAAAAAAAAAAAAAAA",
      scheduled_event: { uri: "https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2", name: "30 Minute Meeting", start_time: "2026-01-05T15:00:00.000000Z" },
      status,
    });
    const cases = [
      [
        compact({ created_at: "2026-01-01T00:00:00.000000Z", created_by: "https://api.calendly.com/users/AAAAAAAAAAAAAAAA", event: "invitee.created", payload: invitee("active") }),
        "Calendly invitee.created; t=,v1= over t.body",
      ],
      [
        compact({
          created_at: "2026-01-01T00:00:00.000000Z",
          created_by: "https://api.calendly.com/users/AAAAAAAAAAAAAAAA",
          event: "invitee.canceled",
          payload: { ...invitee("canceled"), cancellation: { canceled_by: "Ada Lovelace", reason: "Conflit d'agenda", canceler_type: "invitee" } },
        }),
        "Calendly invitee.canceled with cancellation details",
      ],
    ];
    for (const [payload, note] of cases) {
      docsFixture("calendly", {
        secret,
        payload,
        headers: { "Content-Type": "application/json", "Calendly-Webhook-Signature": `t=${TS},v1=${hmac("sha256", secret, `${TS}.${payload}`, "hex")}` },
        note,
      });
    }
  }

  // vercel
  {
    const secret = "vcl-hookgate-webhook-secret-1b3d";
    const deployment = { id: "dpl_2fHookgateDeployment0001", url: "hookgate-git-main-acme.vercel.app", name: "hookgate" };
    const cases = [
      [
        compact({
          id: "uev_hookgate0000000000000001",
          type: "deployment.created",
          createdAt: TS_MS,
          payload: { deployment, project: { id: "prj_Hookgate0000000000000001" }, target: "production" },
          region: "iad1",
        }),
        "Vercel deployment.created; hex HMAC-SHA1 of the body",
      ],
      [
        compact({
          id: "uev_hookgate0000000000000002",
          type: "deployment.succeeded",
          createdAt: TS_MS + 1500,
          payload: { deployment, project: { id: "prj_Hookgate0000000000000001" }, target: "production", links: { deployment: "https://vercel.com/acme/hookgate/2fHookgate" } },
          region: "iad1",
        }),
        "Vercel deployment.succeeded",
      ],
    ];
    for (const [payload, note] of cases) {
      docsFixture("vercel", { secret, payload, headers: { "Content-Type": "application/json", "x-vercel-signature": hmac("sha1", secret, payload, "hex") }, note });
    }
  }

  // sentry
  {
    const secret = "5f0b2d4c6e8a1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d0f1a3c5e7b9d";
    const cases = [
      [
        "issue",
        "e2c3a1d4-5b6f-4c7e-8d9a-0b1c2d3e4f5a",
        compact({
          action: "created",
          installation: { uuid: "7a485448-a9e2-4c85-8a3c-4f44175783c9" },
          data: { issue: { id: "1170820242", shortId: "HOOKGATE-1", title: "TypeError: Cannot read properties of undefined", level: "error", status: "unresolved", project: { slug: "hookgate" } } },
          actor: { type: "application", id: "sentry", name: "Sentry" },
        }),
        "Sentry integration issue.created; hex HMAC-SHA256 of the body (timestamp not signed)",
      ],
      [
        "installation",
        "f3d4b2e5-6c7a-4d8f-9e0b-1c2d3e4f5a6b",
        compact({
          action: "created",
          installation: { uuid: "7a485448-a9e2-4c85-8a3c-4f44175783c9" },
          data: { installation: { app: { uuid: "64bf2cf4-37ca-4365-8dd3-6b6e56d741b8", slug: "hookgate" }, organization: { slug: "acme" }, uuid: "7a485448-a9e2-4c85-8a3c-4f44175783c9", status: "installed" } },
          actor: { type: "user", id: "1", name: "Zoë" },
        }),
        "Sentry installation.created",
      ],
    ];
    for (const [resource, requestID, payload, note] of cases) {
      docsFixture("sentry", {
        secret,
        payload,
        headers: {
          "Content-Type": "application/json",
          "Request-ID": requestID,
          "Sentry-Hook-Resource": resource,
          "Sentry-Hook-Timestamp": String(TS),
          "Sentry-Hook-Signature": hmac("sha256", secret, payload, "hex"),
        },
        note,
      });
    }
  }

  // postmark: HTTP Basic credentials; nothing is signed.
  {
    const cases = [
      [
        "postmark-hooks:Xk9#mP2q:R7vL",
        compact({
          RecordType: "Delivery",
          ServerID: 23,
          MessageStream: "outbound",
          MessageID: "883953f4-6105-42a2-a16a-77a8eac79483",
          Recipient: "john@example.com",
          Tag: "welcome-email",
          DeliveredAt: "2026-01-01T00:00:00Z",
          Details: "Test delivery webhook details",
          Metadata: { a_key: "a_value" },
        }),
        "Postmark Delivery webhook with Basic auth; the password contains ':' (split at the first colon)",
      ],
      [
        "hookgate:correct-horse-battery-staple",
        compact({
          RecordType: "Bounce",
          ID: 4323372036854775807,
          Type: "HardBounce",
          TypeCode: 1,
          MessageStream: "outbound",
          MessageID: "9d2f4b6a-8c1e-4a3b-b5d7-f9e1a3c5b7d9",
          Email: "nobody@example.com",
          From: "sender@example.com",
          BouncedAt: "2026-01-01T00:00:00Z",
          Description: "The server was unable to deliver your message (ex: unknown user, mailbox not found).",
          Inactive: true,
          CanActivate: true,
          Subject: "Test subject",
        }),
        "Postmark Bounce webhook with Basic auth",
      ],
    ];
    for (const [secret, payload, note] of cases) {
      docsFixture("postmark", {
        secret,
        payload,
        headers: { "Content-Type": "application/json", Authorization: "Basic " + Buffer.from(secret).toString("base64") },
        note,
      });
    }
  }

  // woocommerce: PHP json_encode output (escaped slashes), base64 HMAC-SHA256.
  {
    const secret = "wc-hookgate-secret-N3x!7q";
    const cases = [
      [
        phpJSON({
          id: 727,
          status: "processing",
          currency: "EUR",
          total: "29.35",
          billing: { first_name: "Zoë", last_name: "Ångström", email: "zoe@example.com" },
          line_items: [{ id: 315, name: "Café crème", quantity: 1, total: "29.35" }],
          _links: { self: [{ href: "https://shop.example.com/wp-json/wc/v3/orders/727" }] },
        }),
        "order.created",
        "order",
        "created",
        "5f2b0c3e8d9a4b1c7e6f5a4b3c2d1e0f",
        "WooCommerce order.created; PHP-style body with escaped slashes (\\/)",
      ],
      [
        phpJSON({
          id: 799,
          name: "Hookgate mug",
          slug: "hookgate-mug",
          permalink: "https://shop.example.com/product/hookgate-mug/",
          price: "12.00",
          stock_status: "instock",
        }),
        "product.updated",
        "product",
        "updated",
        "a1c3e5b7d9f0a2c4e6b8d0f1a3c5e7b9",
        "WooCommerce product.updated",
      ],
    ];
    for (const [payload, topic, resource, event, delivery, note] of cases) {
      docsFixture("woocommerce", {
        secret,
        payload,
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "WooCommerce/10.4.0 Hookshot (WordPress/6.9)",
          "X-WC-Webhook-Source": "https://shop.example.com/",
          "X-WC-Webhook-Topic": topic,
          "X-WC-Webhook-Resource": resource,
          "X-WC-Webhook-Event": event,
          "X-WC-Webhook-Signature": hmac("sha256", secret, payload, "base64"),
          "X-WC-Webhook-ID": "12",
          "X-WC-Webhook-Delivery-ID": delivery,
        },
        note,
      });
    }
  }

  // lemonsqueezy
  {
    const secret = "ls-hookgate-signing-secret-6d8f";
    const cases = [
      [
        "order_created",
        compact({
          meta: { event_name: "order_created", custom_data: { user_id: "123" }, webhook_id: "c0b1a2f3-e4d5-4c6b-9a8f-7e6d5c4b3a21" },
          data: { type: "orders", id: "1", attributes: { store_id: 1, identifier: "104e18a2-d755-4d4b-80c4-a6c1dcbe1c10", user_email: "ada@example.com", total: 999, currency: "USD", status: "paid" } },
        }),
        "Lemon Squeezy order_created",
      ],
      [
        "subscription_created",
        compact({
          meta: { event_name: "subscription_created", webhook_id: "c0b1a2f3-e4d5-4c6b-9a8f-7e6d5c4b3a21", test_mode: true },
          data: { type: "subscriptions", id: "1", attributes: { store_id: 1, customer_id: 1, product_name: "Hookgate Pro", variant_name: "Jährlich", status: "active", renews_at: "2027-01-01T00:00:00.000000Z" } },
        }),
        "Lemon Squeezy subscription_created (test mode), non-ASCII UTF-8",
      ],
    ];
    for (const [event, payload, note] of cases) {
      docsFixture("lemonsqueezy", {
        secret,
        payload,
        headers: { "Content-Type": "application/json", "X-Event-Name": event, "X-Signature": hmac("sha256", secret, payload, "hex") },
        note,
      });
    }
  }

  // okta: static Authorization header value.
  {
    const secret = "okta-hook-7c1e2f9a4b6d8e0f";
    docsFixture("okta", {
      secret,
      payload: compact({
        eventType: "com.okta.event_hook",
        eventTypeVersion: "1.0",
        cloudEventsVersion: "0.1",
        source: "https://hookgate.okta.com/api/v1/eventHooks/whoql0HfiLGPWc8Jx0g4",
        eventId: "b5a188b9-5ece-4636-b041-482ffda96311",
        data: { events: [{ uuid: "5d4bfd2a-0c1b-11f0-9a2c-0f1e2d3c4b5a", published: "2026-01-01T00:00:00.000Z", eventType: "user.session.start", displayMessage: "User login to Okta", outcome: { result: "SUCCESS" } }] },
        eventTime: "2026-01-01T00:00:00.000Z",
        contentType: "application/json",
      }),
      headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: secret },
      note: "Okta event hook delivery; Authorization carries the configured secret verbatim",
    });
    docsFixture("okta", {
      secret,
      payload: "",
      method: "GET",
      headers: { Accept: "application/json", Authorization: secret, "X-Okta-Verification-Challenge": "rEkZ7MzrXQ3WsTbBlqUsVNvH9V6qfEyzJ1w7Gzf1" },
      expect_handshake_response: { verification: "rEkZ7MzrXQ3WsTbBlqUsVNvH9V6qfEyzJ1w7Gzf1" },
      note: "Okta one-time verification GET (with Authorization); the gateway answers {\"verification\": challenge}",
    });
  }

  // microsoft-graph: clientState inside the body.
  {
    const secret = "hookgate-graph-clientState-8f2a6c";
    const n = (id, changeType, msgId) => ({
      subscriptionId: "7f105c7d-2dc5-4530-97cd-4e7ae6534c07",
      subscriptionExpirationDateTime: "2026-01-03T00:00:00.000Z",
      changeType,
      resource: `Users/4a2b1c3d-5e6f-4a7b-8c9d-0e1f2a3b4c5d/Messages/${msgId}`,
      resourceData: { "@odata.type": "#Microsoft.Graph.Message", "@odata.id": `Users/4a2b1c3d-5e6f-4a7b-8c9d-0e1f2a3b4c5d/Messages/${msgId}`, "@odata.etag": 'W/"CQAAABYAAAD"', id: msgId },
      clientState: secret,
      tenantId: "84bd8158-6d4d-4958-8b9f-9d6445542f95",
    });
    docsFixture("microsoft-graph", {
      secret,
      payload: compact({ value: [n(1, "created", "AAMkAGUwNjQ4ZjIxAAA=")] }),
      headers: { "Content-Type": "application/json; charset=utf-8" },
      note: "Microsoft Graph change notification; clientState in the body must equal the secret",
    });
    docsFixture("microsoft-graph", {
      secret,
      payload: compact({ value: [n(1, "created", "AAMkAGUwNjQ4ZjIxAAA="), n(2, "updated", "AAMkAGUwNjQ4ZjIxAAB=")] }),
      headers: { "Content-Type": "application/json; charset=utf-8" },
      note: "Microsoft Graph batch of two notifications, both with the configured clientState",
    });
  }

  // meta / whatsapp: X-Hub-Signature-256 (Meta also sends the SHA-1 X-Hub-Signature).
  {
    const cases = [
      [
        "meta",
        "6f1d3b5a7c9e0f2a4b6c8d0e1f3a5b7c",
        asciiJSON({
          object: "page",
          entry: [{ id: "1234567890", time: TS, changes: [{ field: "feed", value: { item: "comment", verb: "add", message: "Génial 👍", post_id: "1234567890_987654321", from: { id: "5555", name: "Zoë" } } }] }],
        }),
        "Meta Page webhook; non-ASCII sent as \\uXXXX escapes, as Meta sends it",
      ],
      [
        "whatsapp",
        "0e2c4a6b8d1f3e5a7c9b0d2f4a6c8e1b",
        asciiJSON({
          object: "whatsapp_business_account",
          entry: [
            {
              id: "102290129340398",
              changes: [
                {
                  value: {
                    messaging_product: "whatsapp",
                    metadata: { display_phone_number: "15550783881", phone_number_id: "106540352242922" },
                    contacts: [{ profile: { name: "João" }, wa_id: "16505551234" }],
                    messages: [{ from: "16505551234", id: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTdDQjhDMzM3NTlGMkI4RUE1OQA=", timestamp: String(TS), text: { body: "Olá!" }, type: "text" }],
                  },
                  field: "messages",
                },
              ],
            },
          ],
        }),
        "WhatsApp Cloud API inbound text message; \\uXXXX-escaped body",
      ],
      [
        "whatsapp",
        "0e2c4a6b8d1f3e5a7c9b0d2f4a6c8e1b",
        asciiJSON({
          object: "whatsapp_business_account",
          entry: [
            {
              id: "102290129340398",
              changes: [
                {
                  value: {
                    messaging_product: "whatsapp",
                    metadata: { display_phone_number: "15550783881", phone_number_id: "106540352242922" },
                    statuses: [{ id: "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBI5QUNBNzRGRkQ2RjcwMjc4OTIA", status: "delivered", timestamp: String(TS), recipient_id: "16505551234" }],
                  },
                  field: "messages",
                },
              ],
            },
          ],
        }),
        "WhatsApp Cloud API message status (delivered)",
      ],
      [
        "meta",
        "6f1d3b5a7c9e0f2a4b6c8d0e1f3a5b7c",
        asciiJSON({
          object: "instagram",
          entry: [{ id: "17841400000000000", time: TS, changes: [{ field: "comments", value: { id: "17865799348089039", text: "Trop bien 😍", from: { id: "232323232", username: "zoe.a" }, media: { id: "123123123" } } }] }],
        }),
        "Meta Instagram comments webhook; emoji as a \\uXXXX surrogate pair",
      ],
    ];
    for (const [provider, secret, payload, note] of cases) {
      docsFixture(provider, {
        secret,
        payload,
        headers: {
          "Content-Type": "application/json",
          "X-Hub-Signature": "sha1=" + hmac("sha1", secret, payload, "hex"),
          "X-Hub-Signature-256": "sha256=" + hmac("sha256", secret, payload, "hex"),
        },
        note,
      });
    }
  }

  // pagerduty
  {
    const secret = "pdhk_Wm3KpZr8QxN2bV6cT9yH4fJ7dL1sA5eGuC0iO8nR2tY6wE4q";
    const oldSecret = "pdhk_oldRotatedSecretA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5";
    const payload = compact({
      event: {
        id: "01DEN7T1ZGG1N0XPDZCAYUL9W0",
        event_type: "incident.triggered",
        resource_type: "incident",
        occurred_at: "2026-01-01T00:00:00.000Z",
        agent: { html_url: "https://acme.pagerduty.com/users/PLH1HKV", id: "PLH1HKV", self: "https://api.pagerduty.com/users/PLH1HKV", summary: "Tenex Engineer", type: "user_reference" },
        client: null,
        data: { id: "PGR0VU2", type: "incident", number: 2, status: "triggered", title: "Gateway 5xx > 1%", urgency: "high" },
      },
    });
    const sig = (s) => "v1=" + hmac("sha256", s, payload, "hex");
    const headers = (value) => ({
      "Content-Type": "application/json",
      "User-Agent": "PagerDuty-Webhook/V3.0",
      "X-Webhook-Id": "5ac64822-8ee0-4c1c-ae0d-0c7a1b3d5e7f",
      "X-Webhook-Subscription": "PY1OQZW",
      "X-PagerDuty-Signature": value,
    });
    docsFixture("pagerduty", { secret, payload, headers: headers(sig(secret)), note: "PagerDuty v3 incident.triggered, single v1 signature" });
    docsFixture("pagerduty", {
      secret,
      payload,
      headers: headers(`${sig(oldSecret)},${sig(secret)}`),
      note: "PagerDuty during secret rotation: two v1 values, the first from an old secret not configured here",
    });
  }
}

// ----------------------------------------------------------- contentful ---
// @contentful/node-apps-toolkit signs the canonical request (method, path
// with query, signed headers, body); its verifier checks it (TTL 0: fixed time).
{
  const sdk = sdkVersion("@contentful/node-apps-toolkit");
  const secret = "a2d9b2c5e6f7081923a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f901";
  const cases = [
    {
      path: "/webhooks/contentful",
      payload: JSON.stringify({ sys: { type: "Entry", id: "5KsDBWseXY6QegucYAoacS", revision: 3 }, fields: { title: { "en-US": "Hookgate" } } }),
      note: "Contentful signed request: entry publish, Content-Type signed",
    },
    {
      path: "/webhooks/contentful?env=master&space=s%20p&tag=caf%C3%A9",
      payload: JSON.stringify({ sys: { type: "Asset", id: "nyancat" }, fields: { title: { "en-US": "Nyan \u00fc" } } }),
      note: "Contentful signed request with a query string that needs escaping",
    },
  ];
  for (const c of cases) {
    const ts = TS * 1000 + 123;
    const reqHeaders = { "Content-Type": "application/vnd.contentful.management.v1+json" };
    const signed = contentfulSign(secret, { method: "POST", path: c.path, headers: reqHeaders, body: c.payload }, ts);
    const headers = { ...reqHeaders, ...signed, "X-Contentful-Topic": "ContentManagement.Entry.publish", "X-Contentful-Idempotency-Key": createHash("sha256").update(c.note).digest("hex") };
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    assert.ok(contentfulVerify(secret, { method: "POST", path: c.path, headers: lower, body: c.payload }, 0), "contentful verify");
    fixtures.push({
      provider: "contentful",
      sdk,
      secret,
      payload: c.payload,
      url: "https://hooks.example.com" + c.path,
      headers,
      timestamp: TS,
      note: c.note,
    });
  }
}

// --------------------------------------------------------------- aws-sns ---
// Signed with node:crypto (RSA PKCS#1 v1.5 is deterministic), then checked
// by AWS's sns-validator, whose certificate fetch (https.get) is answered
// from memory with the fixture's self-signed certificate. The certificate
// goes in the fixture: the Go test puts it in the certificate cache under
// the message's SigningCertURL instead of fetching.
{
  const sdk = checkedBy("sns-validator");
  const privateKeyPem = `-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDIygSOLZE+w72v
i3FQ+WsywbjF2WF0GSW726bhrEg7OzV4aIXoFjAgRbs/sl9FCW9ZnHhVfVwU2fV+
pGtGWtU9GX9ANaZJa1PvRFohVjcag5kIZRQ+Sk71IRtzcxGVam17kTtRBzCdkCZk
d9kct7IqgSqa+Nuv4Vz78kEDSAEy1Z6cFpLge4iA/5q+toKL6mGKkJiBLpKchWib
U0n4Jylno+O7PQ0AjpnMMXitsotapu5E8rVbwKU/XrTc3v91B2qH4B6E2I8rwR7A
jbpgK3qXQhEnsLLGLMBWmoLQ20hdzN/WNBwMCU5Wvdr74ZRID+C6Fe6DHiqRNZp2
LKjPMj7DAgMBAAECggEAGAqxvfEbKu1BdANZ0kzIdv+MJ3XZEzou8vig2Z+z1xJx
W2qvMfQfghW8udVFTrJhA1VWxpcSj1VDwwyz4uzdtd8CMMbbvinG7JIoypoUp1eU
23+i4LcsD3I4jmZ7ogI9fBC5OKwIOFg6HfMzFhsGucvVNVDRQ+oo+eqZZJJawQ0Y
XxtSHafUlTDLKsMoCwshAhYI1CNsgpikLCIsvwav3t3nEcjzXPsJKwG9J07l6mW3
dY87fJ4pCG+rdw9e8dj0yHRrzf8bzlBLZvc0iW3oikERi7yZdNajDAgrISQgIo3l
oqQSXvY8r2XFYlfFQt0xRUlOtpQMJMl3lp0HtoPCYQKBgQDbYZNcKpEPF9TZ6oAU
P7y8KjJuJb9xT0ppXFI1mKpQWjj5D3aSpDUpvTT51jlErbhLVbSFrOd+9mViRfib
rUfHHK4EQ/BDwuclhmjKA+l5pYlKIYFg7t3+BOKHQXufOPcnK/l6QWMe56ovfZUf
MWBxzWJfOmlt9XrV5SZJaVKfYQKBgQDqTft7n16cU+7tRrs8S8JsL7KwirJqhh1x
SFWBy7C2GEh8JI0jRnZkNaBKodFUbAjohZNPRcqKUM1kqSF99tPAc20p9Xlz4v1V
5VTMEAkQ9l33X2pgtVloqkBJxQULzTPM8y8kjimCwpgAl8GMtt3tiqImWB4PH5Kh
BrsqWeFEowKBgQCWYjv+uRs5CnAZdZuYxdxd7FsnkG68gMsUkHm2TdGqRT661HPG
sBPVaeMvxD77qk4kLjsSS2VhbgwvoqF6Lf1/K1TKjbvc53VGDu40VRwuDGChVXh3
9yZr4/NZHnVcv1MFIirhOIN3Av1xkpevi0x+lnjxqHvvKZCroWpudmlx4QKBgH2c
5ykkjLVkriAZHoI533ber37ELNi9JAW6kNTwHcHSDPI5Kk1yFkCtG01HqZEIBlKa
YhpKwUYcAbFolyMP9AAmIa0wBDfjxouJUkfAhQvJ+SCIz+Ae+VsKg0LJVGY6Uf4b
lfeUG58VsiYHNeW5mAskmr/R1/OlqpeXozoWS5XfAoGAWYqAybrfR3YVXNvCD2O3
+pYymfkxrpgl2xIl/wI++q2Q/+LOggy2HOKaDAGTEUeoCZ1PkhBzHOc2L4ErZ+yD
+wR4XUti2VpcE9MM4fx+AmKVil5oVSjypGpViPUxe+xaaujma7mAHLc2rMP+QDXn
PmG8bXNlV1dukB1AqLTOCS4=
-----END PRIVATE KEY-----
`;
  const certificatePem = `-----BEGIN CERTIFICATE-----
MIIC7jCCAdagAwIBAgIEATUlBTANBgkqhkiG9w0BAQsFADA5MTcwNQYDVQQDEy5z
bnMudXMtZWFzdC0xLmFtYXpvbmF3cy5jb20gKGhvb2tnYXRlIGZpeHR1cmUpMB4X
DTI2MDEwMTAwMDAwMFoXDTM2MDEwMTAwMDAwMFowOTE3MDUGA1UEAxMuc25zLnVz
LWVhc3QtMS5hbWF6b25hd3MuY29tIChob29rZ2F0ZSBmaXh0dXJlKTCCASIwDQYJ
KoZIhvcNAQEBBQADggEPADCCAQoCggEBAMjKBI4tkT7Dva+LcVD5azLBuMXZYXQZ
JbvbpuGsSDs7NXhohegWMCBFuz+yX0UJb1mceFV9XBTZ9X6ka0Za1T0Zf0A1pklr
U+9EWiFWNxqDmQhlFD5KTvUhG3NzEZVqbXuRO1EHMJ2QJmR32Ry3siqBKpr426/h
XPvyQQNIATLVnpwWkuB7iID/mr62govqYYqQmIEukpyFaJtTSfgnKWej47s9DQCO
mcwxeK2yi1qm7kTytVvApT9etNze/3UHaofgHoTYjyvBHsCNumArepdCESewssYs
wFaagtDbSF3M39Y0HAwJTla92vvhlEgP4LoV7oMeKpE1mnYsqM8yPsMCAwEAATAN
BgkqhkiG9w0BAQsFAAOCAQEAk7H0Z72VpOB+2CASobsCPjrQO7/22hVouMXCgucd
lsG9Hj1wOFUjICsRBzi3Wkp2OwfZpaWPkTLldk2Nka05v5gAekXZX8V6uf2P7JdU
ri1U6IBHoyPgCusaGBy74ruFoEOYA3WsKPuOeGv+l2++8ktLZ4XodgFY3ECNjfFN
DfMygV2mz4G2kK7oPaDZFkmtiYDRtVB1zE+mdkG3TZE53tGAVKemV9cRL19Eyyhb
m3pmU+oyzDmwahc63d9tU95NtSh3uctR7zy92jYzyqqO6RFa8n+lElInkqzmMD1u
8wPhfe2gyfGSouSJsTnDDDNq57wgjc/5tl67kWUzRLwElw==
-----END CERTIFICATE-----
`;
  const certURL = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-9c6465fa7f48f5cacd23014631ec1136.pem";
  const topic = "arn:aws:sns:us-east-1:123456789012:hookgate-orders";
  const realGet = https.get;
  https.get = (url, cb) => {
    assert.equal(String(url), certURL);
    const req = new EventEmitter();
    const res = new EventEmitter();
    res.statusCode = 200;
    process.nextTick(() => {
      cb(res);
      res.emit("data", Buffer.from(certificatePem));
      res.emit("end");
    });
    return req;
  };
  const signed = { Notification: ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"], SubscriptionConfirmation: ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"] };
  const iso = new Date(TS * 1000 + 123).toISOString();
  const cases = [
    [{ Type: "Notification", MessageId: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", TopicArn: topic, Subject: "Order shipped", Message: compact({ order_id: "o-1001", status: "shipped" }), Timestamp: iso, UnsubscribeURL: "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=" + topic + ":c9135db0-26c4-47ec-8998-413945fb5a96" }, "1", "SNS Notification, SignatureVersion 1 (SHA1withRSA)"],
    [{ Type: "Notification", MessageId: "da41e39f-ea4d-435a-b922-c6aae3915ebe", TopicArn: topic, Message: "hello from SNS, with no Subject\nand a newline", Timestamp: iso, UnsubscribeURL: "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=" + topic + ":c9135db0-26c4-47ec-8998-413945fb5a96" }, "2", "SNS Notification without Subject, SignatureVersion 2 (SHA256withRSA)"],
    [{ Type: "SubscriptionConfirmation", MessageId: "165545c9-2a5c-472c-8df2-7ff2be2b3b1b", Token: "2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736", TopicArn: topic, Message: "You have chosen to subscribe to the topic " + topic + ".\nTo confirm the subscription, visit the SubscribeURL included in this message.", SubscribeURL: "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=" + topic + "&Token=2336412f37", Timestamp: iso }, "2", "SNS SubscriptionConfirmation, SignatureVersion 2"],
  ];
  for (const [msg, version, note] of cases) {
    let canonical = "";
    for (const k of signed[msg.Type]) if (k in msg) canonical += `${k}\n${msg[k]}\n`;
    const sig = crypto.sign(version === "1" ? "sha1" : "sha256", Buffer.from(canonical), privateKeyPem);
    const body = { ...msg, SignatureVersion: version, Signature: sig.toString("base64"), SigningCertURL: certURL };
    await new Promise((resolve, reject) => new SNSValidator().validate(compact(body), (err) => (err ? reject(err) : resolve())));
    fixtures.push({
      provider: "aws-sns",
      sdk,
      secret: topic,
      signing_key: privateKeyPem,
      certificate: certificatePem,
      payload: compact(body),
      headers: { "Content-Type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": msg.Type, "x-amz-sns-message-id": msg.MessageId, "x-amz-sns-topic-arn": topic },
      timestamp: TS,
      note,
    });
  }
  https.get = realGet;
}

// --------------------------------------------------------------------- x ---
// X publishes no SDK that signs or verifies: node:crypto per the docs.
{
  const sdk = perDocs("https://docs.x.com/x-api/webhooks/introduction");
  const secret = "hookgate-x-consumer-secret-0123456789abcdef";
  const payloads = [
    [compact({ for_user_id: "2244994945", tweet_create_events: [{ id_str: "1874999999999999999", text: "Hookgate says hi \u2728", user: { id_str: "2244994945", screen_name: "XDevelopers" }, timestamp_ms: String(TS_MS) }] }), "X Account Activity tweet_create_events"],
    [compact({ for_user_id: "2244994945", follow_events: [{ type: "follow", created_timestamp: String(TS_MS), target: { id: "2244994945" }, source: { id: "3001" } }] }), "X Account Activity follow_events"],
  ];
  for (const [payload, note] of payloads) {
    fixtures.push({ provider: "x", sdk, secret, payload, headers: { "Content-Type": "application/json", "x-twitter-webhooks-signature": "sha256=" + hmac("sha256", secret, payload, "base64") }, timestamp: TS, note });
  }
  const crcToken = "9b4507b3-9040-4669-9ca3-6b94edb50553";
  fixtures.push({
    provider: "x",
    sdk,
    secret,
    payload: "",
    method: "GET",
    url: urlFor("x", "?crc_token=" + crcToken + "&nonce=MTc2NzIyNTYwMA"),
    headers: {},
    timestamp: TS,
    note: "X CRC challenge (GET with crc_token), unsigned",
    expect_handshake_response: { response_token: "sha256=" + hmac("sha256", secret, crcToken, "base64") },
  });
}

// ------------------------------------------------------------ round 3 ---
await addRound3({ fixtures, sdkVersion, at, TS, urlFor, keysDir: join(here, "keys") });

// ------------------------------------------------------- output & checks ---
const ORDER = ["provider", "sdk", "secret", "signing_key", "certificate", "provider_options", "payload", "method", "url", "headers", "timestamp", "note", "expect_handshake_response"];
const out = fixtures.map((f) => {
  const g = { ...f, method: f.method ?? "POST", url: f.url ?? urlFor(f.provider) };
  const extra = Object.keys(g).filter((k) => !ORDER.includes(k));
  assert.deepEqual(extra, [], `unexpected fields in ${f.provider} fixture`);
  for (const k of ["provider", "sdk", "secret", "payload", "method", "url", "headers", "note"]) {
    assert.ok(g[k] !== undefined, `${f.provider}: missing ${k}`);
  }
  return Object.fromEntries(ORDER.filter((k) => g[k] !== undefined).map((k) => [k, g[k]]));
});

const counts = {};
for (const f of out) counts[f.provider] = (counts[f.provider] ?? 0) + 1;
process.stderr.write(
  Object.entries(counts)
    .map(([p, n]) => `${p}=${n}`)
    .join(" ") + `\n${out.length} fixtures\n`,
);
if (ecdsaResigned) process.stderr.write("WARNING: some ECDSA signatures were made afresh; paste them into FIXED_ECDSA for stable output\n");

process.stdout.write(JSON.stringify(out, null, 2) + "\n");

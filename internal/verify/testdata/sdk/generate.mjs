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

//@@NEW@@

// Feeds the samples `hookgate send` produces through the providers' official
// SDK validators and reports, per provider, whether the SDK accepted them.
// The samples come from the Go code (TestWriteSDKSamples), so this checks
// what the gateway sends, headers included, not a copy of it:
//
//   cd internal/verify/testdata/sdk && npm ci
//   HOOKGATE_SAMPLES_OUT=$PWD/samples.json go test -count=1 -run TestWriteSDKSamples ../../../samples
//   node check-samples.mjs samples.json > check-samples.txt
//
// Exits non-zero when an SDK refuses a sample or a header the preset lists
// in the kit's Sends is missing. Providers without an official Node validator
// are reported as such, with only the header list checked.

import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { strict as assert } from "node:assert";

import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhooks as OctokitWebhooks, createNodeMiddleware } from "@octokit/webhooks";
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
import { verifyRequest as contentfulVerify } from "@contentful/node-apps-toolkit";

// Runs fn with Date and Date.now pinned to unixSeconds: SDKs compare the
// signed timestamp with the clock, and the samples were signed when written.
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

const json = (s) => JSON.parse(s.body);
const request = (s) => new Request(s.url, { method: s.method, headers: s.headers, body: s.body });

// Posts the sample to an SDK's Node HTTP middleware and returns the status.
async function throughMiddleware(middleware, s) {
  const server = createServer((req, res) => middleware(req, res, () => {
    res.statusCode = 404;
    res.end();
  }));
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  try {
    const { port } = server.address();
    const path = "/api/github/webhooks";
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", headers: s.headers, body: s.body });
    return { status: res.status, text: await res.text() };
  } finally {
    server.close();
  }
}

// One validator per provider: it throws (or fails an assertion) when the
// SDK refuses the sample, and returns the SDK that accepted it.
const validators = {
  async stripe(s) {
    const evt = new Stripe("sk_test_unused").webhooks.constructEvent(s.body, s.headers["stripe-signature"], s.secret);
    assert.equal(evt.type, json(s).type);
    return "stripe webhooks.constructEvent";
  },
  async github(s) {
    const webhooks = new OctokitWebhooks({ secret: s.secret });
    let received;
    webhooks.on("ping", ({ id, payload }) => {
      received = { id, hook: payload.hook_id };
    });
    await webhooks.verifyAndReceive({
      id: s.headers["x-github-delivery"],
      name: s.headers["x-github-event"],
      payload: s.body,
      signature: s.headers["x-hub-signature-256"],
    });
    assert.equal(received?.id, s.headers["x-github-delivery"]);
    assert.equal(String(received.hook), s.headers["x-github-hook-id"]);
    // The middleware also checks the headers GitHub always sends and the
    // Content-Type.
    const res = await throughMiddleware(createNodeMiddleware(new OctokitWebhooks({ secret: s.secret })), s);
    assert.equal(res.status, 200, res.text);
    return "@octokit/webhooks verifyAndReceive + createNodeMiddleware";
  },
  async "standard-webhooks"(s) {
    await at(s.timestamp + 1, () => new StandardWebhook(s.secret).verify(s.body, s.headers));
    return "standardwebhooks Webhook.verify";
  },
  async svix(s) {
    await at(s.timestamp + 1, () => new SvixWebhook(s.secret).verify(s.body, s.headers));
    return "svix Webhook.verify";
  },
  async clerk(s) {
    await at(s.timestamp + 1, async () => {
      new SvixWebhook(s.secret).verify(s.body, s.headers);
      const evt = await clerkVerifyWebhook(request(s), { signingSecret: s.secret });
      assert.equal(evt.type, json(s).type);
    });
    return "svix Webhook.verify + @clerk/backend verifyWebhook";
  },
  async resend(s) {
    await at(s.timestamp + 1, () => {
      const evt = new Resend("re_unused").webhooks.verify({
        payload: s.body,
        headers: { id: s.headers["svix-id"], timestamp: s.headers["svix-timestamp"], signature: s.headers["svix-signature"] },
        webhookSecret: s.secret,
      });
      assert.equal(evt.type, json(s).type);
    });
    return "resend webhooks.verify";
  },
  async slack(s) {
    const ok = isValidSlackRequest({ signingSecret: s.secret, body: s.body, headers: s.headers, nowMilliseconds: (s.timestamp + 1) * 1000 });
    assert.equal(ok, true);
    return "@slack/bolt isValidSlackRequest";
  },
  async shopify(s) {
    return shopifyValidate(s, "webhooks");
  },
  async "shopify-events"(s) {
    return shopifyValidate(s, "events");
  },
  async twilio(s) {
    const params = Object.fromEntries(new URLSearchParams(s.body));
    assert.equal(twilio.validateRequest(s.secret, s.headers["x-twilio-signature"], s.url, params), true);
    return "twilio validateRequest";
  },
  async sendgrid(s) {
    const ew = new EventWebhook();
    const key = ew.convertPublicKeyToECDSA(s.secret);
    const ok = ew.verifySignature(key, s.body, s.headers["x-twilio-email-event-webhook-signature"], s.headers["x-twilio-email-event-webhook-timestamp"]);
    assert.equal(ok, true);
    return "@sendgrid/eventwebhook verifySignature";
  },
  async discord(s) {
    assert.equal(await discordVerifyKey(s.body, s.headers["x-signature-ed25519"], s.headers["x-signature-timestamp"], s.secret), true);
    return "discord-interactions verifyKey";
  },
  async "discord-events"(s) {
    return validators.discord(s);
  },
  async square(s) {
    const ok = await SquareWebhooksHelper.verifySignature({
      requestBody: s.body,
      signatureHeader: s.headers["x-square-hmacsha256-signature"],
      signatureKey: s.secret,
      notificationUrl: s.url,
    });
    assert.equal(ok, true);
    return "square WebhooksHelper.verifySignature";
  },
  async paddle(s) {
    const paddle = new Paddle("pdl_sdbx_apikey_unused");
    await at(s.timestamp + 1, async () => {
      const evt = await paddle.webhooks.unmarshal(s.body, s.secret, s.headers["paddle-signature"]);
      assert.equal(evt.eventId, json(s).event_id);
    });
    return "@paddle/paddle-node-sdk webhooks.unmarshal";
  },
  async zoom(s) {
    const handler = new ZoomAwsLambdaReceiver({ webhooksSecretToken: s.secret }).start();
    const realDebug = console.debug;
    console.debug = () => {};
    let res;
    try {
      res = await at(s.timestamp + 1, () => handler({ body: s.body, headers: s.headers, isBase64Encoded: false }, {}));
    } finally {
      console.debug = realDebug;
    }
    assert.equal(res.statusCode, 200, res.body);
    return "@zoom/rivet AwsLambdaReceiver";
  },
  async linear(s) {
    const client = new LinearWebhookClient(s.secret);
    await at(s.timestamp + 1, () => {
      const payload = client.parseVerifiedPayload(Buffer.from(s.body), s.headers["linear-signature"], s.headers["linear-timestamp"]);
      assert.equal(payload.type, s.headers["linear-event"]);
    });
    return "@linear/sdk LinearWebhookClient.parseVerifiedPayload";
  },
  async "hubspot-v1"(s) {
    return hubspotValidate(s, "v1", s.headers["x-hubspot-signature"]);
  },
  async "hubspot-v2"(s) {
    return hubspotValidate(s, "v2", s.headers["x-hubspot-signature"]);
  },
  async "hubspot-v3"(s) {
    return hubspotValidate(s, "v3", s.headers["x-hubspot-signature-v3"]);
  },
  async adyen(s) {
    const validator = new adyen.hmacValidator();
    for (const { NotificationRequestItem: item } of json(s).notificationItems) {
      assert.equal(validator.validateHMAC(item, s.secret), true);
    }
    return "@adyen/api-library hmacValidator.validateHMAC";
  },
  async mux(s) {
    const mux = new Mux({ tokenId: "unused", tokenSecret: "unused" });
    await at(s.timestamp + 1, async () => {
      const evt = await mux.webhooks.unwrap(s.body, s.headers, s.secret);
      assert.equal(evt.type, json(s).type);
    });
    return "@mux/mux-node webhooks.unwrap";
  },
  async "coinbase-commerce"(s) {
    const evt = coinbaseCommerce.Webhook.verifyEventBody(s.body, s.headers["x-cc-webhook-signature"], s.secret);
    assert.equal(evt.type, json(s).event.type);
    return "coinbase-commerce-node Webhook.verifyEventBody";
  },
  async contentful(s) {
    const u = new URL(s.url);
    const ok = contentfulVerify(s.secret, { method: s.method, path: u.pathname + u.search, headers: s.headers, body: s.body }, 0);
    assert.ok(ok);
    return "@contentful/node-apps-toolkit verifyRequest";
  },
};

async function shopifyValidate(s, webhookType) {
  const shopify = shopifyApi({
    apiKey: "hookgate-client-id",
    apiSecretKey: s.secret,
    scopes: [],
    hostName: "hooks.example.com",
    apiVersion: ApiVersion.January26,
    isEmbeddedApp: false,
    logger: { level: LogSeverity.Error, log: async () => {} },
  });
  const result = await shopify.webhooks.validate({ rawBody: s.body, rawRequest: request(s) });
  assert.equal(result.valid, true, JSON.stringify(result));
  assert.equal(result.webhookType, webhookType);
  return "@shopify/shopify-api webhooks.validate (required headers included)";
}

async function hubspotValidate(s, version, signature) {
  const ts = s.headers["x-hubspot-request-timestamp"];
  await at(s.timestamp + 1, () => {
    const ok = hubspot.Signature.isValid({
      signatureVersion: version,
      signature,
      clientSecret: s.secret,
      requestBody: s.body,
      url: s.url,
      method: s.method,
      timestamp: ts === undefined ? undefined : Number(ts),
    });
    assert.equal(ok, true);
  });
  if (version !== "v3") assert.equal(s.headers["x-hubspot-signature-version"], version);
  return `@hubspot/api-client Signature.isValid (${version})`;
}

const samples = JSON.parse(readFileSync(process.argv[2] ?? "samples.json", "utf8"));
let failed = 0;
const lines = [];
for (const raw of samples) {
  const s = { ...raw, body: Buffer.from(raw.body_base64, "base64").toString("utf8") };
  const missing = s.always_sends.filter((h) => !s.headers[h.toLowerCase()]);
  let verdict;
  if (missing.length) {
    failed++;
    verdict = `FAIL missing ${missing.join(", ")}`;
  } else if (!validators[s.provider]) {
    verdict = "headers ok; no official Node validator";
  } else {
    try {
      verdict = `accepted by ${await validators[s.provider](s)}`;
    } catch (err) {
      failed++;
      verdict = `FAIL ${String(err?.message ?? err).split("\n")[0]}`;
    }
  }
  const ua = s.headers["user-agent"] ? ` [User-Agent: ${s.headers["user-agent"]}]` : "";
  lines.push(`${s.provider.padEnd(26)} ${verdict}${ua}`);
}
console.log(lines.join("\n"));
console.log(`\n${samples.length} presets, ${failed} failed`);
process.exit(failed ? 1 : 0);

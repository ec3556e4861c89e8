#!/usr/bin/env python3
"""Independent cross-check of ../sdk_fixtures.json.

Recomputes every fixture's signature (or token) from the provider's documented
scheme using only the Python standard library (hmac, hashlib, base64,
urllib.parse), without reusing anything from generate.mjs. Asymmetric schemes
(Ed25519, ECDSA P-256) are checked with the `cryptography` package when it is
installed and skipped otherwise.

    python3 crosscheck.py [path/to/sdk_fixtures.json]

Exits non-zero if any fixture does not match.
"""

import base64
import hashlib
import hmac
import json
import os
import sys
from urllib.parse import parse_qsl, urlsplit

try:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    HAVE_CRYPTOGRAPHY = True
except ImportError:  # pragma: no cover
    HAVE_CRYPTOGRAPHY = False


class Skip(Exception):
    pass


def mac(alg, key, msg):
    if isinstance(key, str):
        key = key.encode()
    if isinstance(msg, str):
        msg = msg.encode()
    return hmac.new(key, msg, alg).digest()


def hexmac(alg, key, msg):
    return mac(alg, key, msg).hex()


def b64mac(alg, key, msg):
    return base64.b64encode(mac(alg, key, msg)).decode()


def b64url_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def expect(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: header {got!r}, recomputed {want!r}")


def check(f):
    p = f["provider"]
    secret = f["secret"]
    body = f["payload"]
    bbody = body.encode()
    h = {k.lower(): v for k, v in f["headers"].items()}
    method = f.get("method", "POST")
    url = f.get("url")

    if p == "stripe":
        parts = dict(x.split("=", 1) for x in h["stripe-signature"].split(","))
        expect(parts["v1"], hexmac(hashlib.sha256, secret, f"{parts['t']}.{body}"), p)
    elif p == "github":
        expect(h["x-hub-signature-256"], "sha256=" + hexmac(hashlib.sha256, secret, bbody), p)
    elif p in ("svix", "standard-webhooks", "clerk", "resend"):
        pre = "webhook" if p == "standard-webhooks" else "svix"
        key = base64.b64decode(secret[len("whsec_"):])
        msg = f"{h[pre + '-id']}.{h[pre + '-timestamp']}.{body}"
        want = "v1," + b64mac(hashlib.sha256, key, msg)
        if want not in h[pre + "-signature"].split(" "):
            raise AssertionError(f"{p}: {want} not in {h[pre + '-signature']}")
    elif p == "standard-webhooks-ed25519":
        if not HAVE_CRYPTOGRAPHY:
            raise Skip("cryptography not installed")
        pub = base64.b64decode(secret[len("whpk_"):])
        msg = f"{h['webhook-id']}.{h['webhook-timestamp']}.{body}".encode()
        sig = h["webhook-signature"]
        assert sig.startswith("v1a,"), sig
        Ed25519PublicKey.from_public_bytes(pub).verify(base64.b64decode(sig[4:]), msg)
        if "signing_key" in f:
            sk = base64.b64decode(f["signing_key"][len("whsk_"):])
            assert sk[32:] == pub, "whsk_ tail is not the public key"
            resigned = Ed25519PrivateKey.from_private_bytes(sk[:32]).sign(msg)
            expect(sig, "v1a," + base64.b64encode(resigned).decode(), p + " re-sign")
    elif p == "slack":
        ts = h["x-slack-request-timestamp"]
        expect(h["x-slack-signature"], "v0=" + hexmac(hashlib.sha256, secret, f"v0:{ts}:{body}"), p)
    elif p == "shopify":
        expect(h["x-shopify-hmac-sha256"], b64mac(hashlib.sha256, secret, bbody), p)
    elif p == "shopify-events":
        expect(h["shopify-hmac-sha256"], b64mac(hashlib.sha256, secret, bbody), p)
    elif p == "twilio":
        q = dict(parse_qsl(urlsplit(url).query))
        if "bodySHA256" in q:
            expect(q["bodySHA256"], hashlib.sha256(bbody).hexdigest(), p + " bodySHA256")
            data = url
        else:
            params = parse_qsl(body, keep_blank_values=True)
            data = url + "".join(k + v for k, v in sorted(params))
        expect(h["x-twilio-signature"], b64mac(hashlib.sha1, secret, data), p)
    elif p == "sendgrid":
        if not HAVE_CRYPTOGRAPHY:
            raise Skip("cryptography not installed")
        pub = serialization.load_der_public_key(base64.b64decode(secret))
        ts = h["x-twilio-email-event-webhook-timestamp"]
        sig = base64.b64decode(h["x-twilio-email-event-webhook-signature"])
        pub.verify(sig, ts.encode() + bbody, ec.ECDSA(hashes.SHA256()))
        priv = serialization.load_der_private_key(base64.b64decode(f["signing_key"]), None)
        assert priv.public_key().public_numbers() == pub.public_numbers(), "signing_key does not match secret"
    elif p in ("discord", "discord-events"):
        if not HAVE_CRYPTOGRAPHY:
            raise Skip("cryptography not installed")
        pub = bytes.fromhex(secret)
        msg = h["x-signature-timestamp"].encode() + bbody
        sig = bytes.fromhex(h["x-signature-ed25519"])
        Ed25519PublicKey.from_public_bytes(pub).verify(sig, msg)
        resigned = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(f["signing_key"])).sign(msg)
        expect(sig.hex(), resigned.hex(), p + " re-sign")
    elif p == "square":
        expect(h["x-square-hmacsha256-signature"], b64mac(hashlib.sha256, secret, url + body), p)
    elif p == "paddle":
        parts = dict(x.split("=", 1) for x in h["paddle-signature"].split(";"))
        expect(parts["h1"], hexmac(hashlib.sha256, secret, f"{parts['ts']}:{body}"), p)
    elif p == "zoom":
        ts = h["x-zm-request-timestamp"]
        expect(h["x-zm-signature"], "v0=" + hexmac(hashlib.sha256, secret, f"v0:{ts}:{body}"), p)
        doc = json.loads(body)
        if doc.get("event") == "endpoint.url_validation":
            plain = doc["payload"]["plainToken"]
            want = {"plainToken": plain, "encryptedToken": hexmac(hashlib.sha256, secret, plain)}
            expect(f.get("expect_handshake_response"), want, p + " handshake")
    elif p == "linear":
        expect(h["linear-signature"], hexmac(hashlib.sha256, secret, bbody), p)
        assert isinstance(json.loads(body)["webhookTimestamp"], int)
    elif p == "intercom":
        expect(h["x-hub-signature"], "sha1=" + hexmac(hashlib.sha1, secret, bbody), p)
    elif p == "mailgun":
        s = json.loads(body)["signature"]
        expect(s["signature"], hexmac(hashlib.sha256, secret, s["timestamp"] + s["token"]), p)
    elif p in ("bitbucket", "jira"):
        expect(h["x-hub-signature"], "sha256=" + hexmac(hashlib.sha256, secret, bbody), p)
    elif p == "gitlab":
        expect(h["x-gitlab-token"], secret, p)
    elif p == "twitch":
        msg = h["twitch-eventsub-message-id"] + h["twitch-eventsub-message-timestamp"] + body
        expect(h["twitch-eventsub-message-signature"], "sha256=" + hexmac(hashlib.sha256, secret, msg), p)
        if h["twitch-eventsub-message-type"] == "webhook_callback_verification":
            expect(f.get("expect_handshake_response"), json.loads(body)["challenge"], p + " handshake")
    elif p == "typeform":
        expect(h["typeform-signature"], "sha256=" + b64mac(hashlib.sha256, secret, bbody), p)
    elif p == "calendly":
        parts = dict(x.split("=", 1) for x in h["calendly-webhook-signature"].split(","))
        expect(parts["v1"], hexmac(hashlib.sha256, secret, f"{parts['t']}.{body}"), p)
    elif p == "hubspot-v1":
        expect(h["x-hubspot-signature-version"], "v1", p)
        expect(h["x-hubspot-signature"], hashlib.sha256((secret + body).encode()).hexdigest(), p)
    elif p == "hubspot-v2":
        expect(h["x-hubspot-signature-version"], "v2", p)
        expect(h["x-hubspot-signature"], hashlib.sha256((secret + method + url + body).encode()).hexdigest(), p)
    elif p == "hubspot-v3":
        ts = h["x-hubspot-request-timestamp"]
        expect(h["x-hubspot-signature-v3"], b64mac(hashlib.sha256, secret, method + url + body + ts), p)
    elif p == "adyen":
        key = bytes.fromhex(secret)
        for it in json.loads(body)["notificationItems"]:
            n = it["NotificationRequestItem"]
            fields = [
                n.get("pspReference", ""),
                n.get("originalReference", ""),
                n.get("merchantAccountCode", ""),
                n.get("merchantReference", ""),
                str(n["amount"]["value"]),
                n["amount"]["currency"],
                n.get("eventCode", ""),
                n.get("success", ""),
            ]
            expect(n["additionalData"]["hmacSignature"], b64mac(hashlib.sha256, key, ":".join(fields)), p)
    elif p == "vercel":
        expect(h["x-vercel-signature"], hexmac(hashlib.sha1, secret, bbody), p)
    elif p == "sentry":
        expect(h["sentry-hook-signature"], hexmac(hashlib.sha256, secret, bbody), p)
    elif p == "postmark":
        expect(h["authorization"], "Basic " + base64.b64encode(secret.encode()).decode(), p)
    elif p == "woocommerce":
        expect(h["x-wc-webhook-signature"], b64mac(hashlib.sha256, secret, bbody), p)
    elif p == "mux":
        parts = dict(x.split("=", 1) for x in h["mux-signature"].split(","))
        expect(parts["v1"], hexmac(hashlib.sha256, secret, f"{parts['t']}.{body}"), p)
    elif p == "lemonsqueezy":
        expect(h["x-signature"], hexmac(hashlib.sha256, secret, bbody), p)
    elif p == "coinbase-commerce":
        expect(h["x-cc-webhook-signature"], hexmac(hashlib.sha256, secret, bbody), p)
    elif p == "okta":
        expect(h["authorization"], secret, p)
        if "x-okta-verification-challenge" in h:
            expect(f.get("expect_handshake_response"), {"verification": h["x-okta-verification-challenge"]}, p + " handshake")
    elif p == "microsoft-graph":
        for n in json.loads(body)["value"]:
            expect(n["clientState"], secret, p)
    elif p in ("meta", "whatsapp"):
        expect(h["x-hub-signature-256"], "sha256=" + hexmac(hashlib.sha256, secret, bbody), p)
        if "x-hub-signature" in h:
            expect(h["x-hub-signature"], "sha1=" + hexmac(hashlib.sha1, secret, bbody), p + " sha1")
    elif p == "pagerduty":
        want = "v1=" + hexmac(hashlib.sha256, secret, bbody)
        got = [s.strip() for s in h["x-pagerduty-signature"].split(",")]
        if want not in got:
            raise AssertionError(f"{p}: {want} not in {got}")
    elif p == "plaid":
        if not HAVE_CRYPTOGRAPHY:
            raise Skip("cryptography not installed")
        jwk = json.loads(secret)
        head, claims, sig = h["plaid-verification"].split(".")
        header = json.loads(b64url_decode(head))
        expect(header, {"alg": "ES256", "kid": jwk["kid"], "typ": "JWT"}, p + " JWS header")
        c = json.loads(b64url_decode(claims))
        expect(c["request_body_sha256"], hashlib.sha256(bbody).hexdigest(), p + " body hash")
        x = int.from_bytes(b64url_decode(jwk["x"]), "big")
        y = int.from_bytes(b64url_decode(jwk["y"]), "big")
        pub = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
        raw = b64url_decode(sig)
        assert len(raw) == 64, "ES256 signature is not r||s"
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        pub.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
        if "signing_key" in f:
            priv = serialization.load_der_private_key(base64.b64decode(f["signing_key"]), None)
            assert priv.public_key().public_numbers() == pub.public_numbers(), "signing_key does not match JWK"
    elif p == "x":
        if method == "GET":
            token = dict(parse_qsl(urlsplit(url).query))["crc_token"]
            expect(f.get("expect_handshake_response"), {"response_token": "sha256=" + b64mac(hashlib.sha256, secret, token)}, p + " CRC")
        else:
            expect(h["x-twitter-webhooks-signature"], "sha256=" + b64mac(hashlib.sha256, secret, bbody), p)
    elif p == "aws-sns":
        if not HAVE_CRYPTOGRAPHY:
            raise Skip("cryptography not installed")
        m = json.loads(body)
        expect(m["TopicArn"], secret, p + " topic")
        keys = {
            "Notification": ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"],
            "SubscriptionConfirmation": ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"],
        }[m["Type"]]
        canonical = "".join(f"{k}\n{m[k]}\n" for k in keys if k in m).encode()
        cert = x509.load_pem_x509_certificate(f["certificate"].encode())
        alg = {"1": hashes.SHA1(), "2": hashes.SHA256()}[m["SignatureVersion"]]
        cert.public_key().verify(base64.b64decode(m["Signature"]), canonical, padding.PKCS1v15(), alg)
        priv = serialization.load_pem_private_key(f["signing_key"].encode(), None)
        assert priv.public_key().public_numbers() == cert.public_key().public_numbers(), "signing_key does not match the certificate"
    else:
        raise Skip("no cross-check for this provider")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sdk_fixtures.json")
    with open(path, encoding="utf-8") as fh:
        fixtures = json.load(fh)
    ok = failed = skipped = 0
    for i, f in enumerate(fixtures):
        label = f"#{i} {f['provider']} ({f['note'][:60]})"
        try:
            check(f)
            ok += 1
        except Skip as e:
            skipped += 1
            print(f"SKIP {label}: {e}")
        except (AssertionError, KeyError, ValueError) as e:
            failed += 1
            print(f"FAIL {label}: {type(e).__name__}: {e}")
        except Exception as e:  # InvalidSignature and friends
            failed += 1
            print(f"FAIL {label}: {type(e).__name__}: {e}")
    print(f"{ok} ok, {failed} failed, {skipped} skipped, {len(fixtures)} fixtures")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

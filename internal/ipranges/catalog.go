package ipranges

import (
	"encoding/json"
	"fmt"
)

// Catalog returns the providers' published webhook source ranges. Only
// providers that publish a list are here; the bundled lists are as the
// Source page gave them on the Taken day (docs/configuration.md, "Provider IP allowlists").
func Catalog() []Range {
	return []Range{
		{
			Name:   "github",
			Source: "https://api.github.com/meta (hooks; see docs.github.com, About GitHub's IP addresses)",
			Taken:  "2026-11-30",
			Bundled: []string{
				"192.30.252.0/22", "185.199.108.0/22", "140.82.112.0/20", "143.55.64.0/20",
				"2a0a:a440::/29", "2606:50c0::/32",
				// Added 2026-10-29 (github.blog changelog, "Webhook IP ranges added to the Meta API").
				"9.234.98.160/28", "9.234.98.176/28", "9.234.106.48/28",
			},
			Feeds: []Feed{{URL: "https://api.github.com/meta", Parse: jsonField("hooks")}},
		},
		{
			Name:   "stripe",
			Source: "https://docs.stripe.com/ips#webhook-notifications",
			Taken:  "2026-11-30",
			Bundled: []string{
				"3.18.12.63", "3.69.109.8", "3.120.168.93", "3.130.192.231", "13.235.14.237",
				"13.235.122.149", "18.211.135.69", "35.154.171.200", "35.157.207.129", "52.15.183.38",
				"54.88.130.119", "54.88.130.237", "54.187.174.169", "54.187.205.235", "54.187.216.72",
			},
			Feeds: []Feed{{URL: "https://stripe.com/files/ips/ips_webhooks.json", Parse: jsonField("WEBHOOKS")}},
		},
		{
			Name:   "pagerduty",
			Source: "https://developer.pagerduty.com/docs/webhooks/webhook-ips (US and EU service regions)",
			Taken:  "2026-11-30",
			Bundled: []string{
				// US service region
				"44.242.69.192", "52.89.71.166", "54.213.187.133", "35.86.21.47", "52.88.94.18",
				"44.238.89.29", "54.241.68.46", "54.176.72.216", "54.177.81.67", "13.56.49.27",
				"34.210.57.30", "34.210.242.134", "52.34.208.156",
				// EU service region
				"18.192.91.93", "18.158.120.237", "18.194.177.30", "18.158.199.216", "3.126.25.87",
				"18.197.187.16", "54.76.3.62", "54.170.2.90", "52.213.188.110", "54.195.179.238",
				"34.250.91.200", "54.76.225.71",
			},
			Feeds: []Feed{
				{URL: "https://developer.pagerduty.com/ip-safelists/webhooks-us-service-region-json", Parse: jsonStrings},
				{URL: "https://developer.pagerduty.com/ip-safelists/webhooks-eu-service-region-json", Parse: jsonStrings},
			},
		},
		{
			Name:   "paddle",
			Source: "https://developer.paddle.com/webhooks/respond-to-webhooks (live)",
			Taken:  "2026-11-30",
			Bundled: []string{
				"34.232.58.13", "34.195.105.136", "34.237.3.244", "35.155.119.135", "52.11.166.252", "34.212.5.7",
			},
		},
		{
			Name:   "paddle-sandbox",
			Source: "https://developer.paddle.com/webhooks/respond-to-webhooks (sandbox)",
			Taken:  "2026-11-30",
			Bundled: []string{
				"34.194.127.46", "54.234.237.108", "3.208.120.145", "44.226.236.210", "44.241.183.62", "100.20.172.113",
			},
		},
		{
			Name:    "square",
			Source:  "https://developer.squareup.com/forums/t/webhooks-whitelisting-ip-address/2075 (Square staff, production)",
			Taken:   "2026-11-30",
			Bundled: []string{"54.245.1.154", "34.202.99.168"},
		},
		{
			Name:    "square-sandbox",
			Source:  "https://developer.squareup.com/forums/t/webhooks-whitelisting-ip-address/2075 (Square staff, sandbox)",
			Taken:   "2026-11-30",
			Bundled: []string{"54.212.177.79", "107.20.218.8"},
		},
		{
			Name:   "sentry",
			Source: "https://docs.sentry.io/security-legal-pii/security/ip-ranges/#outbound-requests (US and EU)",
			Taken:  "2026-11-30",
			Bundled: []string{
				"35.184.238.160/32", "104.155.159.182/32", "104.155.149.19/32", "130.211.230.102/32",
				"34.141.31.19/32", "34.141.4.162/32", "35.234.78.236/32",
			},
		},
		{
			Name:    "razorpay",
			Source:  "https://razorpay.com/docs/security/whitelists/ (webhooks, live)",
			Taken:   "2026-12-01",
			Bundled: []string{"52.66.75.174", "52.66.76.63", "52.66.151.218", "35.154.217.40", "35.154.22.73", "35.154.143.15", "13.126.199.247", "13.126.238.192", "13.232.194.134", "18.96.225.0/26", "18.99.161.0/26"},
		},
		{
			Name:    "paystack",
			Source:  "https://paystack.com/docs/payments/webhooks/#ip-whitelisting (test and live)",
			Taken:   "2026-12-01",
			Bundled: []string{"52.31.139.75", "52.49.173.169", "52.214.14.220"},
		},
		{
			Name:    "revolut",
			Source:  "https://developer.revolut.com/docs/guides/merchant/monitor-and-observe/webhooks (production)",
			Taken:   "2026-12-01",
			Bundled: []string{"35.246.21.235", "34.89.70.170"},
		},
		{
			Name:   "persona",
			Source: "https://docs.withpersona.com/docs/security (DE, IN and US)",
			Taken:  "2026-12-01",
			Bundled: []string{
				"35.246.155.45", "34.89.193.61", "34.89.158.43", "35.198.149.197", "34.159.83.62", "34.159.68.157",
				"34.93.21.229", "35.244.13.71", "34.93.90.104", "34.93.222.99",
				"35.232.44.140", "34.69.131.123", "34.67.4.225", "34.66.30.174", "34.123.74.158", "34.41.116.165",
				"34.145.62.98", "34.105.116.226", "34.168.249.74", "35.199.156.187", "34.105.58.25", "35.230.80.200",
			},
		},
		{
			Name:   "customer-io",
			Source: "https://docs.customer.io/api/webhooks/ (US and EU)",
			Taken:  "2026-12-01",
			Bundled: []string{
				"35.188.196.183", "104.198.177.219", "104.154.232.87", "130.211.229.195", "104.198.221.24", "104.197.27.15",
				"35.194.9.154", "104.154.144.51", "104.197.210.12", "35.225.6.73",
				"34.76.143.229", "34.78.91.47", "34.77.94.252", "35.187.188.242", "34.78.122.90", "35.195.137.235",
				"130.211.108.156", "104.199.50.18", "34.78.44.80", "35.205.31.154",
			},
		},
		{
			Name:    "telegram",
			Source:  "https://core.telegram.org/bots/webhooks#the-short-version",
			Taken:   "2026-12-01",
			Bundled: []string{"149.154.160.0/20", "91.108.4.0/22"},
		},
		{
			Name:    "apple-app-store",
			Source:  "https://developer.apple.com/documentation/appstoreservernotifications/enabling-app-store-server-notifications",
			Taken:   "2026-12-01",
			Bundled: []string{"17.0.0.0/8"},
		},
		{
			Name:   "workos",
			Source: "https://workos.com/docs/events/data-syncing/webhooks (IP allowlist)",
			Taken:  "2026-12-01",
			Bundled: []string{
				"3.217.146.166", "23.21.184.92", "34.204.154.149", "44.213.245.178", "44.215.236.82",
				"50.16.203.9", "52.1.251.34", "52.21.49.187", "174.129.36.47",
			},
		},
		{
			Name:    "knock",
			Source:  "https://docs.knock.app/developer-tools/outbound-webhooks/overview#static-ip-addresses",
			Taken:   "2026-12-01",
			Bundled: []string{"3.138.92.104", "18.116.161.231", "3.19.195.170"},
		},
	}
}

// jsonField reads a JSON object's field that lists entries, as GitHub's meta
// API (hooks) and Stripe's ips_webhooks.json (WEBHOOKS) do.
func jsonField(field string) func([]byte) ([]string, error) {
	return func(body []byte) ([]string, error) {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
		raw, ok := doc[field]
		if !ok {
			return nil, fmt.Errorf("no %q field", field)
		}
		return jsonStrings(raw)
	}
}

// jsonStrings reads a JSON array of strings, as PagerDuty publishes.
func jsonStrings(body []byte) ([]string, error) {
	var out []string
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("not a JSON list of strings: %w", err)
	}
	return out, nil
}

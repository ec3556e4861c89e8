package verify

import (
	"slices"
	"strings"
	"time"
)

// Preset is a provider's scheme with the defaults that go with it.
type Preset struct {
	// Name is the word used as `provider:` in routes.yaml.
	Name string `json:"name"`
	// Description says which provider and product the preset is for.
	Description string `json:"description"`
	// Spec is the signature scheme.
	Spec Spec `json:"scheme"`
	// DedupKey is an expression producing the provider's event id.
	DedupKey string `json:"dedup_key"`
}

// standardWebhooks builds the Standard Webhooks scheme with a header prefix
// ("webhook" or "svix"): id.timestamp.body, HMAC-SHA256, base64, whsec_ keys.
func standardWebhooks(name, description, prefix string) Preset {
	return Preset{
		Name:        name,
		Description: description,
		Spec: Spec{
			Algorithm:       "sha256",
			Header:          prefix + "-signature",
			Separator:       " ",
			Prefix:          "v1,",
			Encoding:        "base64",
			Content:         "{id}.{timestamp}.{body}",
			IDHeader:        prefix + "-id",
			TimestampHeader: prefix + "-timestamp",
			SecretEncoding:  "whsec",
			Tolerance:       5 * time.Minute,
		},
		DedupKey: `headers["` + prefix + `-id"]`,
	}
}

var presets = map[string]Preset{
	"stripe": {
		Name:        "stripe",
		Description: "Stripe: Stripe-Signature t=…,v1=… over timestamp.body, HMAC-SHA256 hex; the whole whsec_ string is the key",
		Spec: Spec{
			Algorithm:    "sha256",
			Header:       "Stripe-Signature",
			SignatureKey: "v1",
			TimestampKey: "t",
			Encoding:     "hex",
			Content:      "{timestamp}.{body}",
			Tolerance:    5 * time.Minute,
		},
		DedupKey: "body.id",
	},
	"github": {
		Name:        "github",
		Description: "GitHub: X-Hub-Signature-256 sha256=… over the body, HMAC-SHA256 hex",
		Spec: Spec{
			Algorithm: "sha256",
			Header:    "X-Hub-Signature-256",
			Prefix:    "sha256=",
			Encoding:  "hex",
			Content:   "{body}",
		},
		DedupKey: `headers["x-github-delivery"]`,
	},
	"standard-webhooks": standardWebhooks("standard-webhooks", "Standard Webhooks: webhook-id/-timestamp/-signature v1,… over id.timestamp.body, HMAC-SHA256 base64", "webhook"),
	"svix":              standardWebhooks("svix", "Svix: svix-id/-timestamp/-signature v1,… over id.timestamp.body, HMAC-SHA256 base64", "svix"),
}

// Lookup returns the preset with that name.
func Lookup(name string) (Preset, bool) {
	p, ok := presets[strings.ToLower(name)]
	return p, ok
}

// Presets returns every preset, sorted by name.
func Presets() []Preset {
	out := make([]Preset, 0, len(presets))
	for _, p := range presets {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Preset) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Suggest returns the preset names closest to an unknown one.
func Suggest(name string) []string {
	name = strings.ToLower(name)
	var out []string
	for _, p := range Presets() {
		if strings.Contains(p.Name, name) || strings.Contains(name, p.Name) || editDistance(name, p.Name) <= 2 {
			out = append(out, p.Name)
		}
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

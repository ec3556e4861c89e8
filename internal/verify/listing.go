package verify

import (
	"fmt"
	"strings"
)

// Summary describes a preset's scheme in one line.
func (p Preset) Summary() string {
	if p.Bespoke.Build != nil {
		if p.Trust.BodyUnsigned {
			return p.Bespoke.Describe + ", body not signed"
		}
		return p.Bespoke.Describe
	}
	s := p.Spec
	alg := s.Algorithm
	if alg == "" {
		alg = "hmac-sha256"
	}
	enc := s.Encoding
	if enc == "" {
		enc = "hex"
	}
	var parts []string
	switch alg {
	case "token", "basic":
		parts = append(parts, alg)
	default:
		content := s.Content
		if content == "" {
			content = "{body}"
		}
		parts = append(parts, fmt.Sprintf("%s %s over %s", alg, enc, content))
	}
	if s.Tolerance > 0 {
		parts = append(parts, "tolerance "+s.Tolerance.String())
	}
	if p.Trust.BodyUnsigned {
		parts = append(parts, "body not signed")
	}
	return strings.Join(parts, ", ")
}

// Headers names the request headers the scheme reads.
func (p Preset) Headers() []string {
	if p.Bespoke.Build != nil {
		return p.Bespoke.Headers
	}
	var out []string
	for _, h := range []string{p.Spec.Header, p.Spec.TimestampHeader, p.Spec.IDHeader} {
		if h != "" {
			out = append(out, h)
		}
	}
	return out
}

// HandshakeNames lists the preset's handshakes.
func (p Preset) HandshakeNames() []string {
	var out []string
	for _, h := range p.Handshakes {
		out = append(out, h.Name)
	}
	return out
}

// DedupSummary says what a source of the preset deduplicates by when it
// configures no key of its own.
func (p Preset) DedupSummary() string {
	switch {
	case p.Dedup.Scheme != "":
		return p.Dedup.Scheme
	case p.Dedup.Key != "":
		return p.Dedup.Key
	}
	return "sha256 of the body (no event id)"
}

func (p Preset) dedupCell() string {
	if p.Dedup.Key != "" && p.Dedup.Scheme == "" {
		return codeOne(p.Dedup.Key)
	}
	return escape(p.DedupSummary())
}

// MarkdownTable renders every preset as the tables in docs/providers.md:
// the schemes, then the providers' delivery facts.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("# Provider presets\n\n")
	b.WriteString("Generated from the preset definitions by `hookgate providers --markdown`; do not edit by hand.\n")
	b.WriteString("Each preset is one word in routes.yaml: `provider: <name>`.\n\n")
	fmt.Fprintf(&b, "%d presets. **Checked** says what each scheme was tested against: `sdk` names the provider's SDK that signed or accepted "+
		"the test requests (`internal/verify/testdata/sdk_fixtures.json`), `vector` a published example reproduced, `docs` requests signed per the documentation only.\n\n", len(Presets()))
	b.WriteString("| preset | provider | headers | scheme | dedup key | handshakes | live/test | checked | source |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range Presets() {
		provider, _, _ := strings.Cut(p.Description, ":")
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			p.Name, provider, code(p.Headers()), escape(p.Summary()), p.dedupCell(),
			escape(strings.Join(p.HandshakeNames(), ", ")), codeOne(p.Live.Expr), escape(p.Checked), link(p.Docs))
	}
	b.WriteString("\n## Delivery\n\n")
	b.WriteString("What each provider does with a delivery that fails, as it documents it (empty: not documented). " +
		"`reconcile` says what a source's `reconcile:` block does (docs/reconcile.md); `allow_ips` names the ranges `allow_ips: [<name>]` knows.\n\n")
	b.WriteString("| preset | retries | for | timeout | redeliver | reconcile | allow_ips | source |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, p := range Presets() {
		d := p.Delivery
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", p.Name, escape(d.Retries), spanCell(d.RetryWindow), spanCell(d.Timeout),
			escape(d.Redeliver), escape(d.Reconcile), code(d.IPRanges), link(d.Docs))
	}
	return b.String()
}

func spanCell(s Span) string {
	if s == 0 {
		return ""
	}
	return s.String()
}

func link(url string) string {
	if url == "" {
		return ""
	}
	return "[docs](" + url + ")"
}

func code(items []string) string {
	var out []string
	for _, s := range items {
		out = append(out, "`"+s+"`")
	}
	return strings.Join(out, ", ")
}

func codeOne(s string) string {
	if s == "" {
		return ""
	}
	return "`" + escape(s) + "`"
}

func escape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

package ingest

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/hookgate/hookgate/internal/rules"
)

// DefaultMaskFields are JSON fields masked in logged bodies unless the
// configuration names others.
var DefaultMaskFields = []string{
	"email", "phone", "phone_number", "name", "first_name", "last_name", "full_name",
	"address", "line1", "line2", "postal_code", "zip", "ssn", "tax_id", "iban", "card", "card_number",
	"password", "token", "secret", "ip", "ip_address", "birthdate", "date_of_birth",
}

var (
	emailPattern = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`)
	phonePattern = regexp.MustCompile(`\+?\d[\d\s().\-]{7,}\d`)
)

const maskedValue = "[masked]"

// maxLoggedBody bounds a body written to the debug log.
const maxLoggedBody = 4096

// masker hides personal data in bodies written to the debug log: values of
// the listed fields, and e-mail addresses and phone numbers anywhere.
type masker struct{ fields map[string]bool }

func newMasker(fields []string) *masker {
	if len(fields) == 0 {
		fields = DefaultMaskFields
	}
	m := &masker{fields: map[string]bool{}}
	for _, f := range fields {
		m.fields[strings.ToLower(f)] = true
	}
	return m
}

// Mask returns the body, read in its source's format, as it may be logged.
// secret names the fields its scheme reads as credentials (the source's
// SecretFields): masked whatever the configured fields are.
func (m *masker) Mask(format string, body []byte, secret []string) string {
	return truncate(m.masked(format, body, secret))
}

// masked is the body with personal data masked: as JSON when it parses in
// its source's format, else as text. Bytes that are not UTF-8 are replaced,
// so what is left can be shown as text.
func (m *masker) masked(format string, body []byte, secret []string) string {
	parsed, err := rules.ParseBody(format, body)
	if err != nil {
		if len(secret) > 0 {
			return maskedValue // a credential may be anywhere in what does not parse
		}
		return maskText(strings.ToValidUTF8(string(body), "\uFFFD"))
	}
	out, err := json.Marshal(m.walk(parsed, secret))
	if err != nil {
		return ""
	}
	return string(out)
}

func (m *masker) walk(v any, secret []string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if m.fields[strings.ToLower(k)] || slices.ContainsFunc(secret, func(f string) bool { return strings.EqualFold(f, k) }) {
				out[k] = maskedValue
				continue
			}
			out[k] = m.walk(val, secret)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = m.walk(val, secret)
		}
		return out
	case string:
		return maskText(t)
	}
	return v
}

func maskText(s string) string {
	s = emailPattern.ReplaceAllString(s, maskedValue)
	return phonePattern.ReplaceAllString(s, maskedValue)
}

func truncate(s string) string {
	if len(s) <= maxLoggedBody {
		return s
	}
	return s[:maxLoggedBody] + "…"
}

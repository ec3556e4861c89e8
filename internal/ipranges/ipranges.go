// Package ipranges holds the addresses providers send webhooks from, and the
// allowlists a source is limited to: CIDRs, single addresses and provider
// names. Each named range ships with the list as it was published on a known
// date, and can be refreshed from the provider's own machine-readable list
// while the gateway runs; a refresh that fails keeps the list it had.
package ipranges

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/hookgate/hookgate/internal/closest"
)

// ParseEntry reads one allowlist entry that is an address or a CIDR, IPv4 or
// IPv6; a single address is its own /32 or /128. Host bits after the prefix
// length are dropped, as in Caddy's trusted_proxies.
func ParseEntry(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR (such as 192.0.2.0/24 or 2001:db8::/32)", s)
		}
		return normalize(p), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not an address or a CIDR", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// normalize masks a prefix and turns an IPv4-mapped IPv6 one into IPv4, so
// that it matches the unmapped client addresses Contains is asked about.
func normalize(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked()
}

// IsAddress reports whether an entry is written as an address or CIDR rather
// than a provider name: names hold no digits-and-dots or colons.
func IsAddress(s string) bool {
	return strings.ContainsAny(s, ":/") || (s != "" && strings.Trim(s, "0123456789.") == "")
}

// List is one named range as the gateway uses it now: the bundled prefixes
// until a refresh replaces them.
type List struct {
	Range
	current atomic.Pointer[[]netip.Prefix]
}

// Prefixes returns the list's current prefixes; callers must not change them.
func (l *List) Prefixes() []netip.Prefix { return *l.current.Load() }

func (l *List) contains(a netip.Addr) bool {
	for _, p := range *l.current.Load() {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Set is a compiled allowlist. Named ranges are read at each request, so a
// refresh reaches every source that names them without a reload.
type Set struct {
	prefixes []netip.Prefix
	named    []*List
}

// Contains reports whether a client address is in the set. IPv4-mapped IPv6
// addresses (::ffff:192.0.2.1) count as their IPv4 address; zones are ignored.
func (s *Set) Contains(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range s.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	for _, l := range s.named {
		if l.contains(a) {
			return true
		}
	}
	return false
}

// String lists the set's entries as written, for logs.
func (s *Set) String() string {
	out := make([]string, 0, len(s.prefixes)+len(s.named))
	for _, p := range s.prefixes {
		out = append(out, p.String())
	}
	for _, l := range s.named {
		out = append(out, l.Name)
	}
	return strings.Join(out, ", ")
}

// Named reports whether the set uses any provider range.
func (s *Set) Named() bool { return len(s.named) > 0 }

// Compile builds a set from entries (addresses, CIDRs and names of this
// registry's ranges). An unknown name is an error that suggests close ones.
func (r *Registry) Compile(entries []string) (*Set, error) {
	s := &Set{}
	for _, e := range entries {
		if IsAddress(e) {
			p, err := ParseEntry(e)
			if err != nil {
				return nil, err
			}
			s.prefixes = append(s.prefixes, p)
			continue
		}
		l, ok := r.lists[strings.ToLower(e)]
		if !ok {
			return nil, r.unknown(e)
		}
		if !slices.Contains(s.named, l) {
			s.named = append(s.named, l)
		}
	}
	return s, nil
}

func (r *Registry) unknown(name string) error {
	hint := ""
	if close := r.Suggest(name); len(close) > 0 {
		hint = "; did you mean " + strings.Join(close, ", ") + "?"
	}
	return fmt.Errorf("%q is not an address, a CIDR or a named range%s (named ranges: %s)", name, hint, strings.Join(r.Names(), ", "))
}

// Check reports what is wrong with an entry, nil when Compile would take it.
func (r *Registry) Check(entry string) error {
	_, err := r.Compile([]string{entry})
	return err
}

// Suggest returns the names close to an unknown one.
func (r *Registry) Suggest(name string) []string { return closest.Names(name, r.Names()) }

package ingest

import (
	"net/url"
	"path"
	"strings"
)

// Matching is deliberately loose: backends commonly route /Webhooks/Github/,
// /webhooks//github and /webhooks/github;x to the same handler, so each of
// those must be verified here rather than passed on unsigned.

// maxUnescapes bounds how many layers of percent-encoding a path loses
// before matching, so %252F and %2F both count as a slash.
const maxUnescapes = 3

// PathKey reduces a request path to the form sources are matched on: percent
// escapes decoded (repeatedly), backslashes read as slashes, ";parameters"
// dropped from every segment, lower case, duplicate slashes merged, "." and
// ".." resolved, and no trailing slash.
func PathKey(p string) string {
	if isPlainPath(p) {
		return p
	}
	for range maxUnescapes {
		if !strings.Contains(p, "%") {
			break
		}
		u, err := url.PathUnescape(p)
		if err != nil {
			break
		}
		p = u
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if strings.Contains(p, ";") {
		segs := strings.Split(p, "/")
		for i, s := range segs {
			segs[i], _, _ = strings.Cut(s, ";")
		}
		p = strings.Join(segs, "/")
	}
	p = path.Clean("/" + strings.ToLower(p))
	return p
}

// isPlainPath reports whether p is already in matching form, which nearly
// every real request is; it saves the allocations of the general case.
func isPlainPath(p string) bool {
	if p == "" || p[0] != '/' || (len(p) > 1 && p[len(p)-1] == '/') {
		return false
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c >= 'A' && c <= 'Z', c == '%', c == ';', c == '\\':
			return false
		case c == '/' && i+1 < len(p) && (p[i+1] == '/' || p[i+1] == '.'):
			return false
		}
	}
	return true
}

// claimKey is a claimed prefix in matching form, ending in a slash.
func claimKey(prefix string) string {
	k := PathKey(prefix)
	if k == "/" {
		return k
	}
	return k + "/"
}

// defaultClaims is the longest common parent folder of the source paths,
// unless that is the root: claiming "/" would take the whole site.
func defaultClaims(keys []string) []string {
	if len(keys) == 0 {
		return nil
	}
	common := parentOf(keys[0])
	for _, k := range keys[1:] {
		for !strings.HasPrefix(k, common) {
			common = parentOf(strings.TrimSuffix(common, "/"))
		}
	}
	if common == "/" {
		return nil
	}
	return []string{common}
}

// parentOf is the folder holding a matching-form path, with its slash.
func parentOf(key string) string {
	return key[:strings.LastIndexByte(key, '/')+1]
}

// claimed reports whether a matching-form path lies under a claimed prefix.
func (p *Pipeline) claimed(key string) bool {
	for _, c := range p.claims {
		if strings.HasPrefix(key, c) || key == c[:len(c)-1] {
			return true
		}
	}
	return false
}

// claimsPath reports whether the gateway answers this request path itself: the
// path of a source in any spelling, or any path under a claimed prefix.
// Everything else belongs to the next handler.
func (p *Pipeline) claimsPath(path string) bool {
	src, claimed := p.match(path)
	return src != nil || claimed
}

// match finds the source a path names, or whether it is claimed. A path
// that starts with "//" is also read the way URL parsers read a
// scheme-relative reference, "//host/path", since a backend may route it so.
func (p *Pipeline) match(path string) (*source, bool) {
	key := PathKey(path)
	if src := p.sources[key]; src != nil {
		return src, true
	}
	if p.claimed(key) {
		return nil, true
	}
	if rest, ok := afterAuthority(path); ok {
		key := PathKey(rest)
		if src := p.sources[key]; src != nil {
			return src, true
		}
		return nil, p.claimed(key)
	}
	return nil, false
}

// afterAuthority is what follows "//host" in a path that starts with two
// slashes (or backslashes).
func afterAuthority(path string) (string, bool) {
	path = strings.ReplaceAll(path, `\`, "/")
	rest, ok := strings.CutPrefix(path, "//")
	if !ok {
		return "", false
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "", false
	}
	return rest[i:], true
}

// Claimed returns the claimed prefixes, in matching form.
func (p *Pipeline) Claimed() []string { return p.claims }

// Unclaimed returns the paths of sources that lie outside every claimed
// prefix: a mistyped path near them passes to the next handler.
func (p *Pipeline) Unclaimed() []string {
	var out []string
	for key, s := range p.sources {
		if !p.claimed(key) {
			out = append(out, s.Path)
		}
	}
	return out
}

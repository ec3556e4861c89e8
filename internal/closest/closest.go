// Package closest finds the known names a mistyped one was meant to be, for
// "did you mean …?" in configuration errors.
package closest

import "strings"

// Names returns, in the order given, the names that contain the unknown
// one (case folded), are contained in it, or are at most two edits from it.
func Names(unknown string, names []string) []string {
	unknown = strings.ToLower(unknown)
	var out []string
	for _, n := range names {
		if strings.Contains(n, unknown) || strings.Contains(unknown, n) || editDistance(unknown, n) <= 2 {
			out = append(out, n)
		}
	}
	return out
}

// editDistance is the Levenshtein distance of two strings, by bytes.
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

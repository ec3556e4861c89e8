package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// DurationParser reads a duration written as text. It is Caddy's
// caddy.ParseDuration in the gateway (set by caddymodule, as this package
// imports no Caddy), so routes.yaml reads durations as a Caddyfile does:
// Go's units plus days ("7d12h"). The default here reads the same.
var DurationParser = parseDays

// parseDays reads Go durations with a d (24h) unit, the way
// caddy.ParseDuration does, for tools and tests that run without the
// gateway.
func parseDays(s string) (time.Duration, error) {
	inNumber, numStart := false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 'd' {
			days, err := strconv.ParseFloat(s[numStart:i], 64)
			if err != nil {
				return 0, err
			}
			s = s[:numStart] + strconv.FormatFloat(days*24, 'f', -1, 64) + "h" + s[i+1:]
			i, inNumber = numStart, false
			continue
		}
		if !inNumber {
			numStart = i
		}
		inNumber = c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+'
	}
	return time.ParseDuration(s)
}

// ParseDuration reads a duration as Caddy does: Go's units and days
// ("90s", "1h30m", "7d12h").
func ParseDuration(s string) (time.Duration, error) {
	d, err := DurationParser(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (use units like 500ms, 30s, 5m, 2h, 7d12h)", s)
	}
	return d, nil
}

// maxSize bounds a configured size: a terabyte is not a webhook.
const maxSize = 1 << 40

// ParseSize reads a byte count as Caddy's Caddyfile does (go-humanize):
// 512, 64KiB, 5MiB, 1.5MiB, 5mb, 10M (decimal units are powers of 1000).
func ParseSize(s string) (int64, error) {
	n, err := humanize.ParseBytes(strings.TrimSpace(s))
	if err != nil || n == 0 {
		return 0, fmt.Errorf("invalid size %q (use a positive number with an optional unit: 64KiB, 5MiB, 1.5MiB, 5mb, 10M)", s)
	}
	if n > maxSize {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n), nil
}

// ParseRate reads "50/s", "600/m", "3600/h" or a bare number per second.
func ParseRate(s string) (float64, error) {
	num, unit, hasUnit := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid rate %q (use a positive number per s, m or h: 50/s)", s)
	}
	if !hasUnit {
		return n, nil
	}
	switch strings.TrimSpace(unit) {
	case "s":
		return n, nil
	case "m":
		return n / 60, nil
	case "h":
		return n / 3600, nil
	}
	return 0, fmt.Errorf("invalid rate unit in %q (use s, m or h)", s)
}

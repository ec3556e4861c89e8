package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDuration accepts Go durations ("90s", "1h30m") and whole days ("7d").
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (use units like 500ms, 30s, 5m, 2h, 7d)", s)
	}
	return d, nil
}

var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"B", 1},
}

// ParseSize accepts a byte count with an optional unit: 512, 64KiB, 5MiB, 2MB.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	factor := int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid size %q (use a positive number with an optional unit: KiB, MiB, GiB, KB, MB, GB)", s)
	}
	if n > (1<<40)/factor {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * factor, nil
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

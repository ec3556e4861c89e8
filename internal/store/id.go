package store

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// ID is an event id: 48 bits of milliseconds and 80 random bits (a ULID), so
// ids sort by arrival and do not collide across instances.
type ID [16]byte

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// String returns the 26-character Crockford base32 form.
func (id ID) String() string {
	var out [26]byte
	// 26 characters carry 130 bits: two leading zero bits, then the id.
	bit := -2
	for i := range out {
		v := byte(0)
		for range 5 {
			v <<= 1
			if bit >= 0 {
				v |= id[bit/8] >> (7 - bit%8) & 1
			}
			bit++
		}
		out[i] = crockford[v]
	}
	return string(out[:])
}

// Time returns the millisecond time the id was made.
func (id ID) Time() time.Time {
	ms := int64(id[0])<<40 | int64(id[1])<<32 | int64(id[2])<<24 | int64(id[3])<<16 | int64(id[4])<<8 | int64(id[5])
	return time.UnixMilli(ms)
}

// ParseID parses the string form of an ID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 26 {
		return id, fmt.Errorf("invalid event id %q", s)
	}
	bit := -2
	for i := 0; i < len(s); i++ {
		v := decodeCrockford(s[i])
		if v < 0 || (i == 0 && v > 7) {
			return ID{}, fmt.Errorf("invalid event id %q", s)
		}
		for b := 4; b >= 0; b-- {
			if bit >= 0 {
				id[bit/8] |= byte(v>>b&1) << (7 - bit%8)
			}
			bit++
		}
	}
	return id, nil
}

func decodeCrockford(c byte) int {
	if c >= 'a' && c <= 'z' {
		c -= 'a' - 'A'
	}
	for i := 0; i < len(crockford); i++ {
		if crockford[i] == c {
			return i
		}
	}
	return -1
}

// MarshalJSON writes the string form.
func (id ID) MarshalJSON() ([]byte, error) { return json.Marshal(id.String()) }

// UnmarshalJSON reads the string form.
func (id *ID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	parsed, err := ParseID(s)
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}

// IDSource makes ids that increase even inside one millisecond. Each store
// has its own, so that one store's clock never shifts another's ids.
type IDSource struct {
	mu   sync.Mutex
	last ID
}

// Continue makes the ids that follow come after last, a stored id, even if
// the clock went back since it was made.
func (g *IDSource) Continue(last ID) {
	g.mu.Lock()
	g.last = last
	g.mu.Unlock()
}

// Next returns a new id for now.
func (g *IDSource) Next(now time.Time) ID {
	ms := uint64(now.UnixMilli())
	g.mu.Lock()
	defer g.mu.Unlock()
	var id ID
	for i := 0; i < 6; i++ {
		id[i] = byte(ms >> (40 - 8*i))
	}
	if id.Time().Compare(g.last.Time()) <= 0 {
		// Same or earlier millisecond: continue from the last id.
		id = g.last
		for i := 15; i >= 6; i-- {
			id[i]++
			if id[i] != 0 {
				break
			}
		}
	} else {
		_, _ = rand.Read(id[6:])
	}
	g.last = id
	return id
}

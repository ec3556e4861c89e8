package bolt

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// mappedKB is how much of the file at path this process has resident
// through its mappings, from /proc/self/smaps.
func mappedKB(t *testing.T, path string) int {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := strconv.FormatUint(info.Sys().(*syscall.Stat_t).Ino, 10)
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total, inFile := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			inFile = fields[4] == ino
		case inFile && len(fields) == 3 && fields[0] == "Rss:":
			kb, _ := strconv.Atoi(fields[1])
			total += kb
		}
	}
	return total
}

// TestMappedPagesAreReleased: pages of the file that a walk over every
// bucket mapped leave the resident set when the store releases them, and
// the store reads on as before.
func TestMappedPagesAreReleased(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	path := filepath.Join(t.TempDir(), "h.db")
	s := openTest(t, path, c)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 30 {
		wg.Go(func() {
			for n := range 100 {
				if _, err := s.Ingest(ctx, newEvent("s", fmt.Sprint("key-", w, "-", n), "body", c, "u")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	s.caughtUp()
	walk := func() {
		s.db.View(func(tx *bbolt.Tx) error {
			return tx.ForEach(func(_ []byte, b *bbolt.Bucket) error {
				return b.ForEach(func(_, _ []byte) error { return nil })
			})
		})
	}
	walk()
	before := mappedKB(t, path)
	if before < 256 {
		t.Fatalf("a walk over 3000 events maps %d KB of the file", before)
	}
	if err := s.db.View(func(*bbolt.Tx) error { return releaseMapping(path) }); err != nil {
		t.Fatal(err)
	}
	if after := mappedKB(t, path); after > before/10 {
		t.Fatalf("%d KB mapped after the release, %d before", after, before)
	}
	if st, err := s.Stats(); err != nil || st.Events != 3000 {
		t.Fatalf("after the release: %d events, %v", st.Events, err)
	}
}

package bolt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
)

func searchEvent(c *clock, source, typ, customer string, n int) *store.NewEvent {
	ne := newEvent(source, fmt.Sprint("evt_", n), fmt.Sprintf(`{"n":%d}`, n), c)
	ne.Event.Search = map[string]string{"type": typ, "customer": customer}
	return ne
}

// TestSearchIndex: a search term lists exactly the events with that value,
// newest first, page by page and within a time range, and a sweep takes
// their index keys with them.
func TestSearchIndex(t *testing.T) {
	c := &clock{now: time.Unix(1700000000, 0)}
	s := openTest(t, "", c)
	ctx := context.Background()
	var paid []store.ID
	for i := range 300 {
		typ := "invoice.created"
		if i%3 == 0 {
			typ = "invoice.paid"
		}
		res, err := s.Ingest(ctx, searchEvent(c, "stripe", typ, fmt.Sprint("cus_", i%7), i))
		if err != nil {
			t.Fatal(err)
		}
		if typ == "invoice.paid" {
			paid = append(paid, res.ID)
		}
		c.Add(time.Second)
	}
	term := &store.SearchTerm{Field: "type", Value: "invoice.paid"}
	var got []store.ID
	f := store.ListFilter{Search: term, Limit: 40}
	for {
		page, next, err := s.List(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			got = append(got, e.ID)
		}
		if next == nil {
			break
		}
		f.Before = next
	}
	if len(got) != len(paid) {
		t.Fatalf("%d events listed, want %d", len(got), len(paid))
	}
	for i := range got {
		if got[i] != paid[len(paid)-1-i] {
			t.Fatalf("listing %d is %s, want %s (newest first)", i, got[i], paid[len(paid)-1-i])
		}
	}
	// Two terms' worth of filters: the index and the others together.
	both, _, err := s.List(store.ListFilter{Search: &store.SearchTerm{Field: "customer", Value: "cus_0"}, Since: paid[10].Time(), Until: paid[20].Time(), Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range both {
		if e.ID.Time().Before(paid[10].Time()) || e.ID.Time().After(paid[20].Time()) {
			t.Fatalf("%s is outside the range", e.ID)
		}
	}
	// cus_0 is every 7th event, counted here between the 31st and 61st.
	want := 0
	for i := 30; i <= 60; i++ {
		if i%7 == 0 {
			want++
		}
	}
	if len(both) != want {
		t.Fatalf("%d events of cus_0 in the range, want %d", len(both), want)
	}
	if none, _, _ := s.List(store.ListFilter{Search: &store.SearchTerm{Field: "type", Value: "invoice"}}); len(none) != 0 {
		t.Fatalf("a search value matches exactly, got %d", len(none))
	}
	c.Add(time.Hour)
	if n, err := s.Sweep(ctx, c.Now(), 100); err != nil || n != 300 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	s.db.View(func(tx *bbolt.Tx) error {
		if n := tx.Bucket(bucketSearch).Stats().KeyN; n != 0 {
			t.Errorf("%d index keys left after the sweep", n)
		}
		return nil
	})
}

// BenchmarkSearch measures a search over a large store: HOOKGATE_SEARCH_EVENTS
// events (default 1,000,000), 100 event types and 50,000 customers, built
// once in HOOKGATE_SEARCH_DIR (default a temporary folder) and reused:
//
//	go test -run '^$' -bench Search -benchtime 20x ./internal/store/bolt/
func BenchmarkSearch(b *testing.B) {
	s, n := searchStore(b)
	for _, bc := range []struct {
		name string
		f    store.ListFilter
	}{
		{"customer/one-page", store.ListFilter{Search: &store.SearchTerm{Field: "customer", Value: "cus_123"}, Limit: 50}},
		{"type/first-page", store.ListFilter{Search: &store.SearchTerm{Field: "type", Value: "type_42"}, Limit: 50}},
		{"type/page-at-half", store.ListFilter{Search: &store.SearchTerm{Field: "type", Value: "type_42"}, Limit: 50, Until: time.Unix(1700000000, 0).Add(time.Duration(n/2/1000) * time.Second)}},
		{"unindexed-substring", store.ListFilter{Query: "no-such-key", Limit: 50}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				page, _, err := s.List(bc.f)
				if err != nil {
					b.Fatal(err)
				}
				if bc.f.Search != nil && len(page) == 0 {
					b.Fatal("the search found nothing")
				}
			}
		})
	}
}

var searchOnce struct {
	sync.Once
	s *Store
	n int
}

func searchStore(b *testing.B) (*Store, int) {
	searchOnce.Do(func() {
		n := 1_000_000
		if v := os.Getenv("HOOKGATE_SEARCH_EVENTS"); v != "" {
			n, _ = strconv.Atoi(v)
		}
		dir := os.Getenv("HOOKGATE_SEARCH_DIR")
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "hookgate-search"); err != nil {
				b.Fatal(err)
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("search-%d.db", n))
		_, statErr := os.Stat(path)
		c := &clock{now: time.Unix(1700000000, 0)}
		s, err := Open(path, Options{Now: c.Now})
		if err != nil {
			b.Fatal(err)
		}
		if statErr != nil {
			start := time.Now()
			var wg sync.WaitGroup
			work := make(chan int, 1024)
			for range 64 {
				wg.Go(func() {
					for i := range work {
						ne := newEvent("stripe", fmt.Sprint("evt_", i), fmt.Sprintf(`{"id":"evt_%d","type":"type_%d","customer":"cus_%d"}`, i, i%100, i%50000), c)
						ne.Event.Search = map[string]string{"type": fmt.Sprint("type_", i%100), "customer": fmt.Sprint("cus_", i%50000)}
						if _, err := s.Ingest(context.Background(), ne); err != nil {
							panic(err)
						}
					}
				})
			}
			for i := range n {
				if i%1000 == 0 {
					c.Add(time.Second)
				}
				work <- i
			}
			close(work)
			wg.Wait()
			b.Logf("stored %d events in %s", n, time.Since(start).Round(time.Second))
		}
		searchOnce.s, searchOnce.n = s, n
	})
	return searchOnce.s, searchOnce.n
}

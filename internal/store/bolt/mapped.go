package bolt

import (
	"time"

	bbolt "go.etcd.io/bbolt"
)

// releaseInterval is how often the store hands back the pages of its file
// that bbolt has mapped.
const releaseInterval = time.Second

// releaseMappedPages runs until the store closes, handing back mapped pages
// every releaseInterval. bbolt reads the file through a shared mapping,
// and every page a transaction touches, with the neighbours the kernel maps
// around it, stays in the process's resident set until it is unmapped: in
// time the whole file. Unmapped, a page stays in the page cache, where
// the kernel can reclaim it like any cached file data, and the next read
// maps it again at the cost of a minor fault.
func (s *Store) releaseMappedPages() {
	t := time.NewTicker(releaseInterval)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
			// A read transaction keeps bbolt from mapping the file again
			// meanwhile, so the range advised is still the file's.
			_ = s.db.View(func(*bbolt.Tx) error {
				return releaseMapping(s.path)
			})
		}
	}
}

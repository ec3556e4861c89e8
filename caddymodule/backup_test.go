package caddymodule

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	boltstore "github.com/hookgate/hookgate/internal/store/bolt"
)

// snapshots returns the bytes of a backup of a fresh store, and of a bbolt
// file that is no Hookgate store.
func snapshots(t *testing.T) (hookgate, foreign []byte) {
	t.Helper()
	dir := t.TempDir()
	s, err := boltstore.Open(filepath.Join(dir, "hookgate.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.Backup(&buf, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bolt.Open(filepath.Join(dir, "other.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var other bytes.Buffer
	if err := db.View(func(tx *bolt.Tx) error { _, err := tx.WriteTo(&other); return err }); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), other.Bytes()
}

// TestDownloadBackup: only a complete copy that opens as a Hookgate store
// becomes the file; anything else fails and leaves neither the file nor
// its .tmp behind.
func TestDownloadBackup(t *testing.T) {
	good, foreign := snapshots(t)
	garbage := bytes.Repeat([]byte("not a database "), 1000)
	serve := func(body []byte, length int, status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/hookgate/backup" || r.URL.Query().Get("store") != "/var/lib/x.db" {
				http.Error(w, r.URL.String(), http.StatusNotFound)
				return
			}
			if status != http.StatusOK {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				w.Write(body)
				return
			}
			w.Header().Set("Hookgate-Store", "/var/lib/x.db")
			if length >= 0 {
				w.Header().Set("Content-Length", strconv.Itoa(length))
			}
			w.WriteHeader(http.StatusOK)
			w.Write(body)
			if length < 0 {
				w.(http.Flusher).Flush() // chunked: no length announced
			}
		}
	}
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string // "" = success
	}{
		{"complete", serve(good, len(good), 200), ""},
		{"cut short", serve(good[:len(good)/2], len(good), 200), "bytes"},
		{"no length", serve(good, -1, 200), "no length"},
		{"not bbolt", serve(garbage, len(garbage), 200), "does not open"},
		{"not hookgate", serve(foreign, len(foreign), 200), "not a Hookgate store"},
		{"refused", serve([]byte(`{"error":"store jetstream:X is on NATS JetStream"}`), 0, 501), "NATS JetStream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			to := filepath.Join(t.TempDir(), "backup.db")
			res, err := downloadBackup(&adminClient{base: srv.URL, store: "/var/lib/x.db"}, to, false)
			_, statErr := os.Stat(to)
			_, tmpErr := os.Stat(to + ".tmp")
			if !os.IsNotExist(tmpErr) {
				t.Errorf("%s.tmp left behind: %v", to, tmpErr)
			}
			if tc.want == "" {
				if err != nil || statErr != nil || res.Bytes != int64(len(good)) || res.Store != "/var/lib/x.db" {
					t.Fatalf("download: %+v, %v; file: %v", res, err, statErr)
				}
				if got, _ := os.ReadFile(to); !bytes.Equal(got, good) {
					t.Fatal("the file differs from what was served")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if !os.IsNotExist(statErr) {
				t.Fatalf("a failed download left %s: %v", to, statErr)
			}
		})
	}

	// A .tmp already there (another backup, or an interrupted one) is left
	// alone unless --force.
	srv := httptest.NewServer(serve(good, len(good), 200))
	defer srv.Close()
	c := &adminClient{base: srv.URL, store: "/var/lib/x.db"}
	to := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(to+".tmp", []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := downloadBackup(c, to, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("over an existing .tmp: %v", err)
	}
	if got, _ := os.ReadFile(to + ".tmp"); string(got) != "someone else's" {
		t.Fatal("the existing .tmp was touched")
	}
	if _, err := downloadBackup(c, to, true); err != nil {
		t.Fatalf("--force over a stale .tmp: %v", err)
	}
}

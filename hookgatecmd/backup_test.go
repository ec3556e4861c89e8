package hookgatecmd

import (
	"archive/tar"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hookgate/hookgate/internal/store"
	boltstore "github.com/hookgate/hookgate/internal/store/bolt"
)

// snapshots returns the bytes of a backup of a store, and of an archive
// shaped like one whose file is a bbolt file but no Hookgate store.
func snapshots(t *testing.T) (hookgate, foreign []byte) {
	t.Helper()
	dir := t.TempDir()
	s, err := boltstore.Open(filepath.Join(dir, "hookgate.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest(context.Background(), &store.NewEvent{Event: &store.Event{Source: "s", Body: []byte("kept")}}); err != nil {
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
	return buf.Bytes(), archive(t, map[string][]byte{boltstore.BackupFile: other.Bytes()})
}

// archive makes a tar of the named files.
func archive(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Size: int64(len(data)), Mode: 0o600, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDownloadBackup: only a complete copy that opens as a Hookgate store
// becomes the file; anything else fails and leaves neither the file nor
// its .tmp behind.
func TestDownloadBackup(t *testing.T) {
	good, foreign := snapshots(t)
	garbage := bytes.Repeat([]byte("not a database "), 1000)
	notBolt := archive(t, map[string][]byte{boltstore.BackupFile: garbage})
	escape := archive(t, map[string][]byte{boltstore.BackupFile + ".bodies/../../x.seg": garbage})
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
		{"not an archive", serve(garbage, len(garbage), 200), "archive"},
		{"not bbolt", serve(notBolt, len(notBolt), 200), "does not open"},
		{"outside the store", serve(escape, len(escape), 200), "not part of a store"},
		{"not hookgate", serve(foreign, len(foreign), 200), "not a Hookgate store"},
		{"refused", serve([]byte(`{"error":"store jetstream:X is on NATS JetStream"}`), 0, 501), "NATS JetStream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			to := filepath.Join(t.TempDir(), "backup.db")
			res, err := downloadBackup(&adminClient{base: srv.URL, store: "/var/lib/x.db"}, to, false)
			_, statErr := os.Stat(to)
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(to), ".hookgate-backup-*")); len(left) != 0 {
				t.Errorf("working folders left behind: %v", left)
			}
			if tc.want == "" {
				if err != nil || statErr != nil || res.Bytes != int64(len(good)) || res.Store != "/var/lib/x.db" || res.Events != 1 {
					t.Fatalf("download: %+v, %v; file: %v", res, err, statErr)
				}
				s, err := boltstore.Open(to, boltstore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				events, _, err := s.List(store.ListFilter{})
				if err != nil || len(events) != 1 {
					t.Fatalf("the copy lists %d events: %v", len(events), err)
				}
				if rec, err := s.Event(events[0].ID); err != nil || string(rec.Event.Body) != "kept" {
					t.Fatalf("the copy's event: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if !os.IsNotExist(statErr) {
				t.Fatalf("a failed download left %s: %v", to, statErr)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(to), "x.seg")); !os.IsNotExist(err) {
				t.Fatalf("an entry wrote outside the store: %v", err)
			}
		})
	}

	// Names already beside the target (another backup's, an interrupted
	// one's, or planted) are never touched: the working copy is a folder
	// of its own.
	srv := httptest.NewServer(serve(good, len(good), 200))
	defer srv.Close()
	c := &adminClient{base: srv.URL, store: "/var/lib/x.db"}
	to := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(to+".tmp", []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := downloadBackup(c, to, false); err != nil {
		t.Fatalf("beside an existing .tmp: %v", err)
	}
	if got, _ := os.ReadFile(to + ".tmp"); string(got) != "someone else's" {
		t.Fatal("the existing .tmp was touched")
	}
	if _, err := downloadBackup(c, to, true); err != nil {
		t.Fatalf("--force over an earlier copy: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(to), ".hookgate-backup-*")); len(left) != 0 {
		t.Fatalf("working folders left behind: %v", left)
	}
}

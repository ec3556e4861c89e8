package bolt

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/hookgate/hookgate/internal/store"
)

// DiskUsage is what the store takes on disk, and what its file system has
// left: the bbolt file, the body log's segments, and the file system's
// free and total bytes (statfs, as df shows them to a non-root user).
func (s *Store) DiskUsage() (store.DiskUsage, error) {
	var u store.DiskUsage
	fi, err := os.Stat(s.path)
	if err != nil {
		return u, err
	}
	u.DB = fi.Size()
	entries, err := os.ReadDir(bodyLogDir(s.path))
	if err != nil && !os.IsNotExist(err) {
		return u, err
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			u.Bodies += info.Size()
		}
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(s.path, &fs); err != nil {
		return u, err
	}
	u.Free = int64(fs.Bavail) * int64(fs.Bsize)
	u.Size = int64(fs.Blocks) * int64(fs.Bsize)
	return u, nil
}

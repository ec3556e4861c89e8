package bolt

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync flushes a file's data, and its size when it grew, without
// waiting for its other metadata, as bbolt syncs its own file.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

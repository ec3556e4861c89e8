package bolt

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// releaseMapping advises the kernel that this process no longer needs the
// pages of its shared, read-only mappings of the file at path: they leave
// its resident set and stay in the page cache. The mapping is found in
// /proc/self/maps by the file's device and inode.
func releaseMapping(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset major:minor inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "r--s" || fields[4] != strconv.FormatUint(st.Ino, 10) {
			continue
		}
		major, minor, ok := strings.Cut(fields[3], ":")
		if !ok || parseHex(major) != uint64(unix.Major(st.Dev)) || parseHex(minor) != uint64(unix.Minor(st.Dev)) {
			continue
		}
		from, to, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, end := parseHex(from), parseHex(to)
		if end <= start {
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("releasing mapped pages of %s: %w", path, errno)
		}
	}
	return sc.Err()
}

func parseHex(s string) uint64 {
	v, _ := strconv.ParseUint(s, 16, 64)
	return v
}

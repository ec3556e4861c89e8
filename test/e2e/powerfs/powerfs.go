// Package powerfs is a FUSE file system for tests that can lose power. It
// mounts over a backing directory and holds every change in memory, as a
// page cache would, until it is made durable the way Linux promises:
//
//   - a file's writes and size changes reach the backing file when the file
//     is fsynced (fsync or fdatasync);
//   - a new, renamed or removed name reaches the backing directory when its
//     directory is fsynced; a file's own fsync does not make its name durable.
//
// Reads, read(2) and mmap alike, see the latest state, synced or not. Cut
// drops everything not yet durable, optionally tearing the last unsynced
// write of each file, unmounts, and leaves in the backing directory exactly
// what a disk would have kept: a plain directory tree that can be mounted
// again or opened directly.
//
// The backing directory always holds the durable state: a file or directory
// whose name is durable lives at that name; one whose name is not (created
// but its directory not yet fsynced, or removed durably while still open)
// lives in the hidden folder .powerfs under its inode number, which Cut
// removes, as fsck frees orphaned inodes.
package powerfs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// pageSize is the unit in which unsynced writes are held, as the page cache
// holds them.
const pageSize = 4096

// sectorSize is the unit a torn write keeps: a disk writes whole sectors.
const sectorSize = 512

// orphans is the folder in the backing directory that holds what has no
// durable name.
const orphans = ".powerfs"

// Options configure a mount.
type Options struct {
	// Debug logs every FUSE request.
	Debug bool
	// JournaledNames makes an fsync of any file also make every name change
	// made before it durable, in order, as ext4 and XFS do in practice:
	// their journal commits every metadata change of the running
	// transaction. Without it, only the folder's own fsync does, which is
	// all fsync(2) promises.
	JournaledNames bool
}

// FS is one mounted power-loss file system.
type FS struct {
	mu         sync.Mutex
	backing    string
	mountpoint string
	server     *fuse.Server
	root       *dirNode
	nextIno    uint64
	// dead is set by Cut and Close: every request after it fails with EIO,
	// as a disk without power answers nothing.
	dead bool
	// pending holds the namespace changes not yet durable, oldest first.
	pending []*dirOp
	// open holds the files whose backing file is open.
	open map[*fileNode]struct{}
	// fileSyncs and dirSyncs count the fsyncs served.
	fileSyncs, dirSyncs int
	// journaled is Options.JournaledNames.
	journaled bool
}

// Mount mounts a power-loss file system at mountpoint over backing, an
// existing directory whose contents are taken as durable. It needs root (the
// mount is made with mount(2) directly, without fusermount) and /dev/fuse.
func Mount(mountpoint, backing string, opts *Options) (*FS, error) {
	if opts == nil {
		opts = &Options{}
	}
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, err
	}
	// A test that died before its Cut leaves orphans: they were never durable.
	if err := os.RemoveAll(filepath.Join(backing, orphans)); err != nil {
		return nil, fmt.Errorf("powerfs: %w", err)
	}
	p := &FS{backing: backing, mountpoint: mountpoint, nextIno: 1, open: map[*fileNode]struct{}{}, journaled: opts.JournaledNames}
	p.root = p.newDir(0o755)
	if err := p.load(p.root, backing); err != nil {
		return nil, fmt.Errorf("powerfs: reading %s: %w", backing, err)
	}
	second := time.Second
	server, err := fs.Mount(mountpoint, p.root, &fs.Options{
		EntryTimeout: &second,
		AttrTimeout:  &second,
		MountOptions: fuse.MountOptions{
			// mount(2) as root: the fuse3 package's fusermount is not needed.
			DirectMountStrict: true,
			FsName:            "powerfs",
			Name:              "powerfs",
			Debug:             opts.Debug,
			// No writeback cache (go-fuse never asks for one) and no
			// direct_io: writes go through to Write at once, the kernel's
			// page cache stays coherent with mmap, and a killed process
			// leaves nothing behind in the kernel that Cut does not see.
		},
	})
	if err != nil {
		return nil, fmt.Errorf("powerfs: mounting %s over %s (needs root and /dev/fuse): %w", mountpoint, backing, err)
	}
	p.server = server
	return p, nil
}

// load reads the durable tree under path into dir.
func (p *FS) load(dir *dirNode, path string) error {
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if dir == p.root && e.Name() == orphans {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		var child entry
		switch {
		case info.IsDir():
			d := p.newDir(uint32(info.Mode().Perm()))
			if err := p.load(d, filepath.Join(path, e.Name())); err != nil {
				return err
			}
			child = d
		case info.Mode().IsRegular():
			f := p.newFile(uint32(info.Mode().Perm()))
			f.size, f.durSize, f.low = info.Size(), info.Size(), info.Size()
			f.mtime = info.ModTime()
			child = f
		default:
			return fmt.Errorf("%s: only files and directories are supported", filepath.Join(path, e.Name()))
		}
		b := child.base()
		b.durParent, b.durName = dir, e.Name()
		dir.durChildren[e.Name()] = child
		dir.loaded = append(dir.loaded, child)
	}
	return nil
}

func (p *FS) newDir(perm uint32) *dirNode {
	d := &dirNode{durChildren: map[string]entry{}}
	d.node = node{pfs: p, ino: p.nextIno, perm: perm, mtime: time.Now()}
	p.nextIno++
	return d
}

func (p *FS) newFile(perm uint32) *fileNode {
	f := &fileNode{dirty: map[int64][]byte{}}
	f.node = node{pfs: p, ino: p.nextIno, perm: perm, mtime: time.Now()}
	p.nextIno++
	return f
}

// Mountpoint is where the file system is mounted.
func (p *FS) Mountpoint() string { return p.mountpoint }

// Syncs returns how many file and directory fsyncs the file system served.
func (p *FS) Syncs() (files, dirs int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fileSyncs, p.dirSyncs
}

// CutOptions choose what a power cut keeps of the unsynced state.
type CutOptions struct {
	// Tear keeps a random prefix, in whole 512-byte sectors, of each file's
	// last unsynced write, where it overwrites durable bytes: the write the
	// disk was in the middle of. Bytes past the durable size are not kept,
	// since the size change that would make them visible was not durable.
	Tear bool
	// Rand chooses the torn prefixes; nil uses a random seed.
	Rand *rand.Rand
}

// CutReport says what a power cut dropped, for the message of a test that
// finds a loss.
type CutReport struct {
	// Ops are the namespace changes that were not durable, oldest first,
	// such as "create /hookgate.db".
	Ops []string
	// Files are the files with unsynced writes or size changes.
	Files []string
	// Torn are the writes kept in part.
	Torn []string
	// Orphans are the files and directories that had no durable name,
	// with the bytes they held durably.
	Orphans []string
	// Note tells of a connection the kernel kept after the unmount
	// although no process used it, which Cut aborted.
	Note string
}

func (r CutReport) String() string {
	s := fmt.Sprintf("%d namespace changes not durable", len(r.Ops))
	for _, op := range r.Ops {
		s += "\n  dropped: " + op
	}
	for _, f := range r.Files {
		s += "\n  unsynced: " + f
	}
	for _, t := range r.Torn {
		s += "\n  torn: " + t
	}
	for _, o := range r.Orphans {
		s += "\n  orphan removed: " + o
	}
	if r.Note != "" {
		s += "\n  " + r.Note
	}
	return s
}

// Cut cuts the power: everything not durable is dropped, the mount is
// taken away, and the backing directory is left as a disk would be. Stop
// the processes that use the mount first (kill -9 is the point): a process
// still writing would see EIO.
func (p *FS) Cut(opts CutOptions) (CutReport, error) {
	rng := opts.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	p.mu.Lock()
	if p.dead {
		p.mu.Unlock()
		return CutReport{}, errors.New("powerfs: already cut or closed")
	}
	p.dead = true
	var report CutReport
	for _, op := range p.pending {
		report.Ops = append(report.Ops, op.String())
	}
	p.pending = nil
	var errs []error
	p.volatileFiles(func(f *fileNode) {
		if f.unsynced() {
			report.Files = append(report.Files, fmt.Sprintf("%s: size %d, durable %d, %d pages unsynced", pathOf(&f.node), f.size, f.durSize, len(f.dirty)))
		}
	})
	if opts.Tear {
		// Only a file with a durable name keeps anything of a torn write.
		p.durableFiles(func(f *fileNode) {
			torn, err := f.tear(rng)
			if err != nil {
				errs = append(errs, err)
			} else if torn != "" {
				report.Torn = append(report.Torn, f.objPath()[len(p.backing):]+": "+torn)
			}
		})
	}
	p.closeObjects()
	report.Orphans = p.orphanList()
	p.mu.Unlock()
	if err := os.RemoveAll(filepath.Join(p.backing, orphans)); err != nil {
		errs = append(errs, err)
	}
	note, err := p.unmount()
	report.Note = note
	errs = append(errs, err)
	return report, errors.Join(errs...)
}

// Close syncs everything, as a clean shutdown does, and unmounts.
func (p *FS) Close() error {
	p.mu.Lock()
	if p.dead {
		p.mu.Unlock()
		return errors.New("powerfs: already cut or closed")
	}
	var errs []error
	p.volatileFiles(func(f *fileNode) {
		if err := f.sync(); err != nil {
			errs = append(errs, err)
		}
	})
	errs = append(errs, p.commitAll())
	p.dead = true
	p.closeObjects()
	p.mu.Unlock()
	if err := os.RemoveAll(filepath.Join(p.backing, orphans)); err != nil {
		errs = append(errs, err)
	}
	_, err := p.unmount()
	errs = append(errs, err)
	return errors.Join(errs...)
}

// unmount detaches the mount even if the kernel still holds a reference
// (a killed process's files are released asynchronously), then waits for
// the server to end. If the kernel keeps the connection although no
// process uses the mount, it is aborted, and note says so: what the disk
// keeps is already in the backing directory, and every request since the
// cut failed.
func (p *FS) unmount() (note string, err error) {
	id, dev := mountOf(p.mountpoint)
	if err := syscall.Unmount(p.mountpoint, syscall.MNT_DETACH); err != nil {
		return "", fmt.Errorf("powerfs: unmounting %s: %w", p.mountpoint, err)
	}
	served := make(chan struct{})
	go func() { p.server.Wait(); close(served) }()
	select {
	case <-served:
		return "", nil
	case <-time.After(5 * time.Second):
	}
	users := usersOf(id, dev)
	err = abort(dev)
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		err = errors.Join(err, errors.New("the server still runs after the abort"))
	}
	if err == nil && users == "" {
		return fmt.Sprintf("the kernel kept the connection of %s 5 s after the unmount although no process used it: aborted", p.mountpoint), nil
	}
	if users == "" {
		users = "no process has a file open there"
	}
	return "", fmt.Errorf("powerfs: %s was still in use 5 s after it was unmounted (%s); connection aborted: %v", p.mountpoint, users, err)
}

// mountOf reads the mount's id and device ("0:47") from mountinfo.
func mountOf(mountpoint string) (id, dev string) {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == mountpoint {
			id, dev = f[0], f[2]
		}
	}
	return id, dev
}

// usersOf names the processes with a file open on the mount or mapped from
// it; "" if none.
func usersOf(id, dev string) string {
	var major, minor int
	fmt.Sscanf(dev, "%d:%d", &major, &minor)
	mapped := fmt.Sprintf(" %02x:%02x ", major, minor)
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var users []string
	for _, proc := range procs {
		open := 0
		infos, _ := filepath.Glob(proc + "/fdinfo/*")
		for _, info := range infos {
			if b, err := os.ReadFile(info); err == nil && strings.Contains(string(b), "mnt_id:\t"+id+"\n") {
				open++
			}
		}
		maps, _ := os.ReadFile(proc + "/maps")
		if open > 0 || strings.Contains(string(maps), mapped) {
			comm, _ := os.ReadFile(proc + "/comm")
			users = append(users, fmt.Sprintf("pid %s (%s): %d files open, mapped %v",
				filepath.Base(proc), strings.TrimSpace(string(comm)), open, strings.Contains(string(maps), mapped)))
		}
	}
	return strings.Join(users, "; ")
}

// abort aborts the FUSE connection of device dev through fusectl, mounting
// it if needed.
func abort(dev string) error {
	var major, minor int
	if _, err := fmt.Sscanf(dev, "%d:%d", &major, &minor); err != nil || major != 0 {
		return fmt.Errorf("no FUSE connection for device %q", dev)
	}
	const ctl = "/sys/fs/fuse/connections"
	path := filepath.Join(ctl, strconv.Itoa(minor), "abort")
	if _, err := os.Stat(path); err != nil {
		if err := syscall.Mount("fusectl", ctl, "fusectl", 0, ""); err != nil {
			return fmt.Errorf("mounting fusectl: %w", err)
		}
	}
	return os.WriteFile(path, []byte("1"), 0o200)
}

// volatileFiles calls fn with every file the mount shows. p.mu is held.
func (p *FS) volatileFiles(fn func(*fileNode)) {
	var walk func(in *fs.Inode)
	walk = func(in *fs.Inode) {
		for _, ch := range in.Children() {
			switch n := ch.Operations().(type) {
			case *fileNode:
				fn(n)
			case *dirNode:
				walk(&n.Inode)
			}
		}
	}
	walk(&p.root.Inode)
}

// durableFiles calls fn with every file that has a durable name. p.mu is
// held.
func (p *FS) durableFiles(fn func(*fileNode)) {
	var walk func(d *dirNode)
	walk = func(d *dirNode) {
		for _, ch := range d.durChildren {
			switch n := ch.(type) {
			case *fileNode:
				fn(n)
			case *dirNode:
				walk(n)
			}
		}
	}
	walk(p.root)
}

// closeObjects closes every backing file held open. p.mu is held.
func (p *FS) closeObjects() {
	for f := range p.open {
		f.obj.Close()
		f.obj = nil
	}
	clear(p.open)
}

// orphanList names what the orphan folder holds.
func (p *FS) orphanList() []string {
	entries, _ := os.ReadDir(filepath.Join(p.backing, orphans))
	var out []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		kind := "file"
		if info.IsDir() {
			kind = "directory"
		}
		out = append(out, fmt.Sprintf("%s of inode %s (%d bytes durable)", kind, e.Name(), info.Size()))
	}
	slices.Sort(out)
	return out
}

// pathOf is an entry's current name under the mount.
func pathOf(n *node) string {
	if n.ino == 1 {
		return "/"
	}
	if _, parent := n.Inode.Parent(); parent == nil {
		return fmt.Sprintf("inode %d (unlinked)", n.ino)
	}
	return "/" + n.Inode.Path(nil)
}

// entry is a file or a directory.
type entry interface {
	fs.InodeEmbedder
	base() *node
}

// node is what files and directories share.
type node struct {
	fs.Inode
	pfs *FS
	ino uint64
	// durParent and durName are the entry's durable name; durParent is nil
	// while it has none, and its object is then in the orphan folder.
	durParent *dirNode
	durName   string
	perm      uint32
	mtime     time.Time
}

func (n *node) base() *node { return n }

// objPath is where the entry's durable content is in the backing directory.
func (n *node) objPath() string {
	if n.durParent == nil {
		if n.ino == 1 {
			return n.pfs.backing
		}
		return filepath.Join(n.pfs.backing, orphans, strconv.FormatUint(n.ino, 10))
	}
	return filepath.Join(n.durParent.objPath(), n.durName)
}

func (n *node) attr(out *fuse.Attr, mode uint32) {
	out.Ino = n.ino
	out.Mode = mode | n.perm
	out.SetTimes(nil, &n.mtime, &n.mtime)
	out.Blksize = pageSize
}

// statfs reports the backing file system's figures.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var st syscall.Statfs_t
	if err := syscall.Statfs(n.pfs.backing, &st); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStatfsT(&st)
	return 0
}

// commitAll makes every pending name change durable, oldest first.
func (p *FS) commitAll() error {
	var errs []error
	for _, op := range p.pending {
		if err := op.commit(); err != nil {
			errs = append(errs, err)
		}
	}
	p.pending = nil
	return errors.Join(errs...)
}

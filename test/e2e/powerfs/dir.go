package powerfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dirNode is a directory. Its current children are go-fuse's tree of
// inodes; its durable children are durChildren.
type dirNode struct {
	node
	durChildren map[string]entry
	// loaded holds the children read at mount until OnAdd adds them.
	loaded []entry
}

var (
	_ fs.NodeOnAdder   = (*dirNode)(nil)
	_ fs.NodeGetattrer = (*dirNode)(nil)
	_ fs.NodeSetattrer = (*dirNode)(nil)
	_ fs.NodeCreater   = (*dirNode)(nil)
	_ fs.NodeMkdirer   = (*dirNode)(nil)
	_ fs.NodeUnlinker  = (*dirNode)(nil)
	_ fs.NodeRmdirer   = (*dirNode)(nil)
	_ fs.NodeRenamer   = (*dirNode)(nil)
	_ fs.NodeFsyncer   = (*dirNode)(nil)
	_ fs.NodeStatfser  = (*dirNode)(nil)
)

func stable(e entry) fs.StableAttr {
	mode := uint32(syscall.S_IFREG)
	if _, ok := e.(*dirNode); ok {
		mode = syscall.S_IFDIR
	}
	return fs.StableAttr{Mode: mode, Ino: e.base().ino}
}

// OnAdd adds the children read at mount. Every inode is persistent: the
// tree is the file system's current namespace, not a cache of it.
func (d *dirNode) OnAdd(ctx context.Context) {
	for _, ch := range d.loaded {
		d.AddChild(ch.base().durName, d.NewPersistentInode(ctx, ch, stable(ch)), false)
	}
	d.loaded = nil
}

// Getattr implements fs.NodeGetattrer.
func (d *dirNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.pfs.mu.Lock()
	defer d.pfs.mu.Unlock()
	if d.pfs.dead {
		return syscall.EIO
	}
	d.attr(&out.Attr, syscall.S_IFDIR)
	out.Nlink = 2
	return 0
}

// Setattr implements fs.NodeSetattrer: a mode change is kept, not made
// durable; nothing the tests use depends on it.
func (d *dirNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	d.pfs.mu.Lock()
	if mode, ok := in.GetMode(); ok {
		d.perm = mode & 0o7777
	}
	d.pfs.mu.Unlock()
	return d.Getattr(ctx, fh, out)
}

// Create implements fs.NodeCreater.
func (d *dirNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	p := d.pfs
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return nil, nil, 0, syscall.EIO
	}
	if d.GetChild(name) != nil {
		return nil, nil, 0, syscall.EEXIST
	}
	f := p.newFile(mode & 0o7777)
	in := d.NewPersistentInode(ctx, f, stable(f))
	p.pending = append(p.pending, &dirOp{kind: opCreate, from: d, name: name, x: f, desc: "create " + join(d, name)})
	f.getattr(&out.Attr)
	return in, nil, 0, 0
}

// Mkdir implements fs.NodeMkdirer.
func (d *dirNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	p := d.pfs
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return nil, syscall.EIO
	}
	if d.GetChild(name) != nil {
		return nil, syscall.EEXIST
	}
	sub := p.newDir(mode & 0o7777)
	in := d.NewPersistentInode(ctx, sub, stable(sub))
	p.pending = append(p.pending, &dirOp{kind: opMkdir, from: d, name: name, x: sub, desc: "mkdir " + join(d, name)})
	sub.attr(&out.Attr, syscall.S_IFDIR)
	return in, 0
}

// Unlink implements fs.NodeUnlinker.
func (d *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	p := d.pfs
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return syscall.EIO
	}
	ch := d.GetChild(name)
	if ch == nil {
		return syscall.ENOENT
	}
	f, ok := ch.Operations().(*fileNode)
	if !ok {
		return syscall.EISDIR
	}
	p.pending = append(p.pending, &dirOp{kind: opUnlink, from: d, name: name, x: f, desc: "unlink " + join(d, name)})
	return 0
}

// Rmdir implements fs.NodeRmdirer.
func (d *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	p := d.pfs
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return syscall.EIO
	}
	ch := d.GetChild(name)
	if ch == nil {
		return syscall.ENOENT
	}
	sub, ok := ch.Operations().(*dirNode)
	if !ok {
		return syscall.ENOTDIR
	}
	if len(sub.Children()) > 0 {
		return syscall.ENOTEMPTY
	}
	p.pending = append(p.pending, &dirOp{kind: opRmdir, from: d, name: name, x: sub, desc: "rmdir " + join(d, name)})
	return 0
}

// Rename implements fs.NodeRenamer; RENAME_EXCHANGE is not supported.
func (d *dirNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	p := d.pfs
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return syscall.EIO
	}
	to, ok := newParent.(*dirNode)
	if !ok || flags&fs.RENAME_EXCHANGE != 0 {
		return syscall.EINVAL
	}
	ch := d.GetChild(name)
	if ch == nil {
		return syscall.ENOENT
	}
	x := ch.Operations().(entry)
	var y entry
	if old := to.GetChild(newName); old != nil {
		y = old.Operations().(entry)
		if flags&renameNoReplace != 0 {
			return syscall.EEXIST
		}
		if y == x {
			return 0
		}
		_, xDir := x.(*dirNode)
		yd, yDir := y.(*dirNode)
		switch {
		case xDir && !yDir:
			return syscall.ENOTDIR
		case !xDir && yDir:
			return syscall.EISDIR
		case yDir && len(yd.Children()) > 0:
			return syscall.ENOTEMPTY
		}
	}
	p.pending = append(p.pending, &dirOp{kind: opRename, from: d, name: name, to: to, newName: newName, x: x, y: y,
		desc: "rename " + join(d, name) + " to " + join(to, newName)})
	return 0
}

// Fsync implements fs.NodeFsyncer: it makes this directory's changes
// durable, with the earlier changes they depend on.
func (d *dirNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	p := d.pfs
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return syscall.EIO
	}
	p.dirSyncs++
	if err := p.commitDir(d); err != nil {
		return fs.ToErrno(err)
	}
	return 0
}

// join is the current path of name in d, for messages.
func join(d *dirNode, name string) string {
	if d.ino == 1 {
		return "/" + name
	}
	return pathOf(&d.node) + "/" + name
}

type opKind int

const (
	opCreate opKind = iota
	opMkdir
	opUnlink
	opRmdir
	opRename
)

// dirOp is one namespace change not yet durable.
type dirOp struct {
	kind opKind
	// from and name: the entry created or removed, or the source of a rename.
	from *dirNode
	name string
	// to and newName: the destination of a rename.
	to      *dirNode
	newName string
	// x is the entry created, removed or renamed; y the one a rename replaced.
	x, y entry
	desc string
}

func (op *dirOp) String() string { return op.desc }

// in says whether op changes d's entries.
func (op *dirOp) in(d *dirNode) bool { return op.from == d || op.to == d }

// mustPrecede says whether the earlier change e must be durable before op
// can be: they change the same name or the same inode, or op removes a
// directory whose entries e changes.
func (op *dirOp) mustPrecede(e *dirOp) bool {
	sameName := func(d *dirNode, name string) bool {
		return d != nil && (e.from == d && e.name == name || e.to == d && e.newName == name)
	}
	sameInode := func(x entry) bool { return x != nil && (e.x == x || e.y == x) }
	if sameName(op.from, op.name) || sameName(op.to, op.newName) || sameInode(op.x) || sameInode(op.y) {
		return true
	}
	for _, gone := range []entry{op.x, op.y} {
		if sub, ok := gone.(*dirNode); ok && (op.kind == opRmdir || gone == op.y) && e.in(sub) {
			return true
		}
	}
	return false
}

// commitDir makes the pending changes to d durable, with every earlier
// change they depend on, in their order. p.mu is held.
func (p *FS) commitDir(d *dirNode) error {
	chosen := make([]bool, len(p.pending))
	for i, op := range p.pending {
		chosen[i] = op.in(d)
	}
	// From the newest down, so that a change pulled in is itself looked at.
	for j := len(p.pending) - 1; j >= 0; j-- {
		if !chosen[j] {
			continue
		}
		for i := range j {
			if !chosen[i] && p.pending[j].mustPrecede(p.pending[i]) {
				chosen[i] = true
			}
		}
	}
	var rest []*dirOp
	for i, op := range p.pending {
		if !chosen[i] {
			rest = append(rest, op)
			continue
		}
		if err := op.commit(); err != nil {
			return fmt.Errorf("powerfs: %s: %w", op, err)
		}
	}
	p.pending = rest
	return nil
}

// commit applies the change to the backing directory.
func (op *dirOp) commit() error {
	switch op.kind {
	case opCreate, opMkdir:
		return place(op.x, op.from, op.name)
	case opRename:
		return place(op.x, op.to, op.newName)
	default:
		if b := op.x.base(); b.durParent == op.from && b.durName == op.name {
			return detach(op.x)
		}
	}
	return nil
}

// place gives x the durable name name in d, replacing what was there.
func place(x entry, d *dirNode, name string) error {
	dir, err := d.object()
	if err != nil {
		return err
	}
	if cur := d.durChildren[name]; cur != nil && cur != x {
		if err := detach(cur); err != nil {
			return err
		}
	}
	b := x.base()
	dst := filepath.Join(dir, name)
	src := b.objPath()
	if _, err := os.Lstat(src); err == nil {
		if err := os.Rename(src, dst); err != nil {
			return err
		}
	} else if _, isDir := x.(*dirNode); isDir {
		if err := os.Mkdir(dst, os.FileMode(b.perm)); err != nil {
			return err
		}
	} else {
		// Created and never synced: durably an empty file.
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, os.FileMode(b.perm))
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if b.durParent != nil {
		delete(b.durParent.durChildren, b.durName)
	}
	b.durParent, b.durName = d, name
	d.durChildren[name] = x
	return nil
}

// detach takes x's durable name away; its content moves to the orphan
// folder, where an open file can still be synced and Cut removes it.
func detach(x entry) error {
	b := x.base()
	if b.durParent == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(b.pfs.backing, orphans), 0o700); err != nil {
		return err
	}
	if err := os.Rename(b.objPath(), filepath.Join(b.pfs.backing, orphans, strconv.FormatUint(b.ino, 10))); err != nil {
		return err
	}
	delete(b.durParent.durChildren, b.durName)
	b.durParent, b.durName = nil, ""
	return nil
}

// object is the directory's folder in the backing directory, made in the
// orphan folder if the directory has no durable name yet.
func (d *dirNode) object() (string, error) {
	path := d.objPath()
	if d.durParent == nil && d.ino != 1 {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return "", err
		}
	}
	return path, nil
}

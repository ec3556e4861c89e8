package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/hookgate/hookgate/test/e2e/powerfs"
)

// TestJetStreamPowerLoss puts the store_dir of each node of a three-node
// JetStream cluster (nodes in network namespaces of their own, as in
// TestJetStreamPartitions) on a power-loss file system, and, under load
// through two gateways, cuts the power of all three at once: every node
// killed, everything none of them flushed dropped, a write in flight torn,
// then restarted on what their disks kept.
//
// The file system keeps names as ext4's journal does (a file's fsync makes
// every earlier name change durable): NATS fsyncs the files it writes but
// not their folders. With sync_interval: always (each write flushed before
// the quorum acknowledges it) no event answered 2xx may be lost.
//
// What is measured, not failed on: HOOKGATE_JETSTREAM_POWERCUTS_DEFAULT_SYNC=1
// adds a round with NATS's default (flushed every two minutes), and
// HOOKGATE_JETSTREAM_POWERCUTS_STRICT=1 one with sync_interval: always on a
// file system that keeps a name only once its folder is fsynced, as
// fsync(2) promises. HOOKGATE_JETSTREAM_POWERCUTS sets the number of cuts
// per round (default 1).
func TestJetStreamPowerLoss(t *testing.T) {
	cuts := envCount(t, "HOOKGATE_JETSTREAM_POWERCUTS", 1)
	requireNetAdmin(t)
	faults := make([]partitionFault, 0, cuts)
	for range cuts {
		faults = append(faults, powerCut())
	}
	t.Run("sync_always", func(t *testing.T) {
		stats := runPartitionRound(t, partitionRound{syncAlways: true, powerLoss: true, baseline: 3 * time.Second, settle: 8 * time.Second, faults: faults, quick: true})
		logPartitionStats(t, "power cuts, sync_interval always", stats)
	})
	if os.Getenv("HOOKGATE_JETSTREAM_POWERCUTS_DEFAULT_SYNC") != "" {
		t.Run("sync_default", func(t *testing.T) {
			stats := runPartitionRound(t, partitionRound{syncAlways: false, powerLoss: true, expectLoss: true, baseline: 3 * time.Second, settle: 8 * time.Second, faults: faults, quick: true})
			logPartitionStats(t, "power cuts, sync_interval default", stats)
		})
	}
	if os.Getenv("HOOKGATE_JETSTREAM_POWERCUTS_STRICT") != "" {
		t.Run("sync_always_strict_names", func(t *testing.T) {
			stats := runPartitionRound(t, partitionRound{syncAlways: true, powerLoss: true, strictNames: true, expectLoss: true, baseline: 3 * time.Second, settle: 8 * time.Second, faults: faults, quick: true})
			logPartitionStats(t, "power cuts, sync_interval always, names durable only by their folder's fsync", stats)
		})
	}
}

// powerLossDisks mounts a power-loss file system for each of three nodes
// (journaledNames: see powerfs.Options) and returns the mount points, for their store_dir, and the cut that
// drops what none of them flushed and mounts what their disks kept again.
// lastCut is told what the last cut dropped.
func powerLossDisks(t *testing.T, journaledNames bool, lastCut *[]string) ([]string, func(*testing.T)) {
	t.Helper()
	var mounts, disks []string
	fss := make([]*powerfs.FS, 3)
	for i := range fss {
		disk, mnt := t.TempDir(), t.TempDir()
		fsys, err := powerfs.Mount(mnt, disk, &powerfs.Options{JournaledNames: journaledNames})
		if err != nil {
			t.Fatalf("%v\n%s mounts a FUSE file system: it needs root and /dev/fuse", err, t.Name())
		}
		fss[i] = fsys
		mounts, disks = append(mounts, mnt), append(disks, disk)
	}
	// Registered before the cluster's teardown, so it runs after the nodes
	// are stopped.
	t.Cleanup(func() {
		for _, fsys := range fss {
			fsys.Cut(powerfs.CutOptions{})
		}
	})
	cut := func(t *testing.T) {
		*lastCut = (*lastCut)[:0]
		for i, fsys := range fss {
			report, err := fsys.Cut(powerfs.CutOptions{Tear: true})
			if err != nil {
				t.Fatalf("cutting the power of node %d: %v", i+1, err)
			}
			*lastCut = append(*lastCut, fmt.Sprintf("n%d: %d files with unsynced writes, %d names, %d torn", i+1, len(report.Files), len(report.Ops), len(report.Torn)))
			if fss[i], err = powerfs.Mount(mounts[i], disks[i], &powerfs.Options{JournaledNames: journaledNames}); err != nil {
				t.Fatalf("mounting node %d's disk again: %v", i+1, err)
			}
		}
		t.Logf("power cut: %v", *lastCut)
	}
	return mounts, cut
}

// Command powerfs mounts the power-loss file system by hand, to reproduce a
// finding outside the tests:
//
//	go run ./test/e2e/powerfs/cmd/powerfs -backing /tmp/disk /tmp/mnt
//
// SIGUSR1 cuts the power (tearing each file's last unsynced write) and
// prints what was dropped; SIGINT or SIGTERM syncs everything and unmounts,
// as a clean shutdown would. Either way the backing directory is then what
// the disk holds. Needs root and /dev/fuse.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hookgate/hookgate/test/e2e/powerfs"
)

func main() {
	backing := flag.String("backing", "", "the directory that plays the disk")
	debug := flag.Bool("debug", false, "log every FUSE request")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: powerfs -backing DIR MOUNTPOINT  (SIGUSR1 cuts the power, SIGINT unmounts cleanly)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *backing == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	fsys, err := powerfs.Mount(flag.Arg(0), *backing, &powerfs.Options{Debug: *debug})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGUSR1, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("mounted %s over %s; kill -USR1 %d cuts the power\n", flag.Arg(0), *backing, os.Getpid())
	if <-signals == syscall.SIGUSR1 {
		report, err := fsys.Cut(powerfs.CutOptions{Tear: true})
		fmt.Println("power cut:", report)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := fsys.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("synced and unmounted")
}

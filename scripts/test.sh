#!/usr/bin/env bash
# The test command: installs what the tests need, then vets and runs every
# test, unit and end-to-end. On Debian with Go and nothing else:
#
#   sudo env "PATH=$PATH" ./scripts/test.sh     (or ./scripts/test.sh as root)
#
# What the tests need besides Go, and why:
#   chromium  the event inspector's browser tests (test/e2e/inspector_test.go)
#   strace    TestStoreUnwritable injects write errors into the live gateway; the
#             bench counts the gateway's fdatasyncs with it
#   wrk       the bench's throughput figures (its smoke run is a test)
#   systemd   systemd-analyze checks examples/systemd/hookgate.service (TestSystemdUnitVerifies)
#   prometheus  promtool checks and unit-tests examples/prometheus/alerts.yml (TestAlertRulesAndDashboard)
#   caddy     TestIntoThePackagedCaddy swaps Debian's packaged Caddy for a build with
#             Hookgate (dpkg-divert), as docs/install.md's "I already run Caddy" does, and back
#   openssh-client  ssh-keygen signs and verifies the release's SHA256SUMS (tools/release)
#   iproute2, nftables  TestJetStreamPartitions puts NATS nodes in network namespaces
#             (ip netns, veth, a bridge, tc) and partitions them with nftables rules
#   root      TestDiskFull and TestStoreUnwritableAtStartup mount a small tmpfs;
#             TestPowerLoss, TestPowerLossDuringSweep and the powerfs tests mount a FUSE file system with
#             mount(2) (no fusermount, so no fuse3 package), which needs /dev/fuse;
#             TestJetStreamPartitions creates network namespaces
# As root, the missing tools are installed with apt-get. Otherwise the script
# names what is missing and the command that installs it, and fails: none of
# these tests skips itself when its tool is missing.
#
# Extra arguments go to `go test` (e.g. -run TestDiskFull ./test/e2e/).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null 2>&1 || { echo "scripts/test.sh: go is not on PATH (with sudo: sudo env \"PATH=\$PATH\" $0)" >&2; exit 1; }

# tool package: the command the tests run and the Debian package that has it.
missing=()
for pair in chromium:chromium strace:strace systemd-analyze:systemd mount:mount promtool:prometheus tc:iproute2 nft:nftables caddy:caddy ssh-keygen:openssh-client wrk:wrk; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done

if [ "$(id -u)" -ne 0 ]; then
	echo "scripts/test.sh needs root: TestDiskFull and TestStoreUnwritableAtStartup mount a tmpfs." >&2
	if [ ${#missing[@]} -gt 0 ]; then
		echo "Missing: ${missing[*]}. Install with:" >&2
		echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
		echo "or let the script install them as it runs:" >&2
	else
		echo "Run it as root:" >&2
	fi
	echo "  sudo env \"PATH=\$PATH\" $0${*:+ $*}" >&2
	exit 1
fi

if [ ${#missing[@]} -gt 0 ]; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "scripts/test.sh: missing ${missing[*]}, and there is no apt-get to install them; install them and run it again." >&2
		exit 1
	fi
	echo "Installing ${missing[*]} (apt-get)"
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

# Root is not always enough: a container needs CAP_SYS_ADMIN to mount.
probe="$(mktemp -d)"
if ! err="$(mount -t tmpfs -o size=1m tmpfs "$probe" 2>&1)"; then
	rmdir "$probe"
	echo "scripts/test.sh: cannot mount a tmpfs ($err); TestDiskFull needs to." >&2
	echo "In a container, run it with --cap-add SYS_ADMIN (and SYS_PTRACE for strace) or --privileged." >&2
	exit 1
fi
umount "$probe"
rmdir "$probe"
if [ ! -c /dev/fuse ]; then
	modprobe fuse 2>/dev/null || true
fi
if [ ! -c /dev/fuse ]; then
	echo "scripts/test.sh: there is no /dev/fuse; TestPowerLoss and the powerfs tests mount a FUSE file system." >&2
	echo "Load the module (modprobe fuse), or in a container pass --device /dev/fuse with --cap-add SYS_ADMIN." >&2
	exit 1
fi
# Nor, in a container, to create network namespaces (TestJetStreamPartitions does).
probe_ns="hgp$$-probe"
if ! err="$(ip netns add "$probe_ns" 2>&1)"; then
	echo "scripts/test.sh: cannot create a network namespace ($err); TestJetStreamPartitions needs to." >&2
	echo "In a container, run it with --cap-add SYS_ADMIN --cap-add NET_ADMIN or --privileged." >&2
	exit 1
fi
ip netns del "$probe_ns"

# The end-to-end tests, the bench and the xcaddy tool are modules of their
# own (go.work joins them), so that what only they use stays out of the
# module graph of builds that add Hookgate to Caddy; ./... alone would not
# reach them.
modules=(./... ./test/e2e/... ./bench/... ./tools/xcaddybuild/...)
go version
go vet "${modules[@]}"
if [ $# -gt 0 ]; then
	go test -timeout 30m "$@"
else
	# -count=1: the end-to-end tests build and run the binary in a child
	# process, which Go's test cache does not see; a cached pass could hide
	# a change to the gateway.
	go test -count=1 -timeout 30m "${modules[@]}"
fi

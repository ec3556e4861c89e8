package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestJetStreamPartitions runs two gateways on a three-node JetStream
// cluster whose nodes live in network namespaces of their own, under
// concurrent signed load spread over both, and partitions the network:
// no event answered 2xx may be lost, and every other answer must be a 503.
// Duplicates are counted and reported.
//
// By default (under a minute) the cluster flushes every write
// (sync_interval: always) and the leader of the events stream is isolated
// for 8 s; repeat deliveries are counted until every ACKed event has been
// delivered, not until the store has settled. HOOKGATE_PARTITION_MINUTES=N
// instead runs rounds until N minutes have passed, each on a fresh cluster,
// alternating sync_interval always and NATS's default, each going through
// every fault: the stream leader isolated, one other node isolated,
// flapping lossy links, the gateways cut off from every node, and, with
// sync_interval always, every node killed at once and restarted.
//
// HOOKGATE_PARTITION_LOGS=DIR keeps the logs of every node and gateway of
// each round there. It needs root: see netCluster.
func TestJetStreamPartitions(t *testing.T) {
	minutes := envCount(t, "HOOKGATE_PARTITION_MINUTES", 0)
	requireNetAdmin(t)
	if minutes == 0 {
		// Quick: within CI's time, repeats after AckWait are left uncounted.
		stats := runPartitionRound(t, partitionRound{syncAlways: true, baseline: 3 * time.Second, settle: 8 * time.Second,
			faults: []partitionFault{isolateLeader(8 * time.Second)}, quick: true})
		logPartitionStats(t, "sync_interval always", stats)
		return
	}
	deadline := time.Now().Add(time.Duration(minutes) * time.Minute)
	totals := map[bool][]phaseStats{}
	for round := 1; time.Now().Before(deadline); round++ {
		syncAlways := round%2 == 1
		faults := []partitionFault{
			isolateLeader(20 * time.Second),
			isolateMinority(20 * time.Second),
			flapping(30 * time.Second),
			cutGateways(8 * time.Second),
		}
		if syncAlways {
			faults = append(faults, powerCut())
		}
		ok := t.Run(fmt.Sprintf("round%02d_sync_%s", round, syncName(syncAlways)), func(t *testing.T) {
			stats := runPartitionRound(t, partitionRound{syncAlways: syncAlways, baseline: 5 * time.Second, settle: 15 * time.Second, faults: faults})
			logPartitionStats(t, "sync_interval "+syncName(syncAlways), stats)
			totals[syncAlways] = mergeStats(totals[syncAlways], stats)
		})
		if !ok {
			break // the failed round's logs are the evidence; more rounds add none
		}
	}
	for _, syncAlways := range []bool{true, false} {
		if len(totals[syncAlways]) > 0 {
			logPartitionStats(t, fmt.Sprintf("all rounds with sync_interval %s, %d minutes", syncName(syncAlways), minutes), totals[syncAlways])
		}
	}
}

func syncName(always bool) string {
	if always {
		return "always"
	}
	return "default"
}

// partitionRound is one cluster's life: a healthy baseline, then each fault
// in turn, each followed by a healed settle period, all under load.
type partitionRound struct {
	syncAlways       bool
	baseline, settle time.Duration
	faults           []partitionFault
	// quick leaves out waiting for the store to settle (work stream empty,
	// every event dispatched), which waits out AckWait (the upstream's
	// timeout plus 30 s) when an acknowledgement was lost: repeats that
	// would come after that are not counted.
	quick bool
	// powerLoss puts each node's store_dir on a power-loss file system
	// (powerfs), so killing every node at once (powerCut) also drops what
	// the nodes never flushed to disk.
	powerLoss bool
	// strictNames, with powerLoss, keeps a name change durable only once
	// its folder is fsynced, as fsync(2) promises; otherwise a file's fsync
	// also makes every earlier name change durable, as ext4's journal does.
	strictNames bool
	// expectLoss counts ACKed events lost instead of failing on them: the
	// measure of what NATS's default sync_interval gives up to a power cut.
	expectLoss bool
}

// partitionFault is one fault: start applies it and says what it did; it is
// held for hold, then the cluster is healed.
type partitionFault struct {
	name string
	hold time.Duration
	// gatewaysCut marks a fault during which no write can reach a node.
	gatewaysCut bool
	start       func(c *netCluster) string
	// stop, when set, ends what start began before the cluster is healed.
	stop func()
}

// leaderOf finds the node leading the events stream, retrying while an
// election from the previous fault settles.
func leaderOf(c *netCluster) int {
	c.t.Helper()
	var err error
	for range 60 {
		var i int
		if i, err = c.streamLeader("HGE2E"); err == nil {
			return i
		}
		time.Sleep(500 * time.Millisecond)
	}
	c.t.Fatalf("no leader for HGE2E: %v", err)
	return 0
}

func isolateLeader(hold time.Duration) partitionFault {
	return partitionFault{name: "stream leader isolated", hold: hold, start: func(c *netCluster) string {
		i := leaderOf(c)
		conns := c.clientConns(i)
		c.applyFaults(func(f *clusterFaults) { f.isolated[i] = true })
		return fmt.Sprintf("%s, leader of HGE2E, holding %d gateway connections", c.nodes[i].name, conns)
	}}
}

func isolateMinority(hold time.Duration) partitionFault {
	return partitionFault{name: "one follower isolated", hold: hold, start: func(c *netCluster) string {
		i := (leaderOf(c) + 1 + rand.IntN(2)) % len(c.nodes)
		conns := c.clientConns(i)
		c.applyFaults(func(f *clusterFaults) { f.isolated[i] = true })
		return fmt.Sprintf("%s, a follower of HGE2E, holding %d gateway connections", c.nodes[i].name, conns)
	}}
}

// flapping makes a random set of the nodes' links lossy (and slow) every
// one to three seconds.
func flapping(hold time.Duration) partitionFault {
	done := make(chan struct{})
	var wg sync.WaitGroup
	f := partitionFault{name: "flapping lossy links", hold: hold}
	var changes atomic.Int64
	f.start = func(c *netCluster) string {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				pick := rand.IntN(7) + 1 // a non-empty subset of the three nodes
				c.applyFaults(func(f *clusterFaults) {
					for i := range c.nodes {
						f.lossy[i] = pick&(1<<i) != 0
					}
				})
				changes.Add(1)
				select {
				case <-done:
					return
				case <-time.After(time.Duration(1000+rand.IntN(2000)) * time.Millisecond):
				}
			}
		}()
		return fmt.Sprintf("%d%% loss each way and a 2 Mbit/s link on a random set of nodes, changed every 1-3 s", lossyPercent)
	}
	f.stop = func() { close(done); wg.Wait() }
	return f
}

func cutGateways(hold time.Duration) partitionFault {
	return partitionFault{name: "gateways cut off from every node", hold: hold, gatewaysCut: true, start: func(c *netCluster) string {
		c.applyFaults(func(f *clusterFaults) { f.gatewaysCut = true })
		return "the nodes still see each other"
	}}
}

func powerCut() partitionFault {
	return partitionFault{name: "every node killed at once", start: func(c *netCluster) string {
		start := time.Now()
		c.powerCut()
		return fmt.Sprintf("SIGKILL to all three, restarted, taking writes again after %s", time.Since(start).Round(100*time.Millisecond))
	}}
}

// runPartitionRound runs one round and checks it; it returns the figures
// of each phase.
func runPartitionRound(t *testing.T, r partitionRound) []phaseStats {
	start := time.Now()
	opts := netClusterOptions{SyncAlways: r.syncAlways}
	var lastCut []string
	if r.powerLoss {
		opts.StoreDirs, opts.PowerLoss = powerLossDisks(t, !r.strictNames, &lastCut)
	}
	c := startNetCluster(t, opts)
	clusterUp := time.Since(start)
	// The phase is noted at each delivery, for the figures.
	var deliveredIn sync.Map // request number -> phase
	load := &partitionLoad{}
	up := newRecorder(t, "", func(n int) int {
		deliveredIn.Store(n, load.currentPhase())
		return 200
	})
	passthrough := newRecorder(t, "", nil)
	routes := sharedRoutes(c.URLs(), 3, up.addr)
	gateways := []*gateway{startSharedGateway(t, routes, passthrough.addr), startSharedGateway(t, routes, passthrough.addr)}
	gatewaysUp := time.Since(start)
	if dir := os.Getenv("HOOKGATE_PARTITION_LOGS"); dir != "" {
		// Runs before the gateways and nodes are stopped, even after a failure.
		t.Cleanup(func() { keepPartitionLogs(t, filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "-")), c, gateways) })
	}
	load.start(t, gateways, 50)

	var cuts [][2]time.Time
	phases := []string{"baseline"}
	began := []time.Time{time.Now()} // when each phase began
	time.Sleep(r.baseline)
	for _, f := range r.faults {
		load.setPhase(f.name)
		phases = append(phases, f.name)
		began = append(began, time.Now())
		from := time.Now()
		detail := f.start(c)
		applied := time.Now()
		time.Sleep(f.hold)
		if f.stop != nil {
			f.stop()
		}
		healing := time.Now()
		c.heal()
		if f.gatewaysCut {
			cuts = append(cuts, [2]time.Time{applied, healing})
		}
		t.Logf("%s: %s, for %s", f.name, detail, healing.Sub(from).Round(100*time.Millisecond))
		healed := f.name + ", healed"
		load.setPhase(healed)
		phases = append(phases, healed)
		began = append(began, time.Now())
		time.Sleep(r.settle)
	}
	began = append(began, time.Now()) // the end of the last phase
	load.finish()
	loadDone := time.Since(start)
	events := load.results()

	// Every answer is a 2xx or a 503; no 2xx is answered from within a cut,
	// when no write can have reached a node.
	var wrong, cutAcks, lostLines []string
	defer func() {
		reportSome(t, "answers neither 200 nor 503", wrong)
		reportSome(t, "200 answers while no node could be reached", cutAcks)
		if r.expectLoss {
			t.Logf("%d ACKed events lost or missing from the events stream (counted, as expected without sync_interval: always); the last power cut dropped: %s", len(lostLines), strings.Join(lastCut, "; "))
			for _, line := range lostLines[:min(len(lostLines), 5)] {
				t.Log(line)
			}
			return
		}
		reportSome(t, "ACKed events lost", lostLines)
	}()
	byDelivery := map[string]*partitionEvent{}
	acked := map[string]*partitionEvent{}
	for _, e := range events {
		byDelivery[e.delivery] = e
		for _, a := range e.attempts {
			switch {
			case a.status == http.StatusOK:
				acked[a.eventID] = e
				for _, cut := range cuts {
					if a.start.After(cut[0]) && a.end.Before(cut[1]) {
						cutAcks = append(cutAcks, fmt.Sprintf("delivery %s was answered 200 (event %s) while no node could be reached", e.delivery, a.eventID))
					}
				}
			case a.status != http.StatusServiceUnavailable:
				wrong = append(wrong, fmt.Sprintf("delivery %s (sent during %q) was answered %d %s", e.delivery, e.phase, a.status, a.err))
			}
		}
	}

	// Every ACKed event reaches the upstream, and the store holds it.
	deadline := time.Now().Add(3 * time.Minute)
	if r.expectLoss {
		deadline = time.Now().Add(time.Minute)
	}
	var lost []string
	for {
		got := up.byEvent()
		lost = lost[:0]
		for id := range acked {
			if len(got[id]) == 0 {
				lost = append(lost, id)
			}
		}
		if len(lost) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range lost {
		e := acked[id]
		lostLines = append(lostLines, fmt.Sprintf("ACKed event %s (delivery %s, sent during %q, answers %s) was never delivered", id, e.delivery, e.phase, e.answers()))
	}
	// Deliveries still queued are worked off before duplicates are counted:
	// a delivery whose acknowledgement was lost comes again after AckWait.
	var work, undispatched uint64
	var qerr error
	for deadline := time.Now().Add(3 * time.Minute); !r.quick && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if work, undispatched, qerr = c.queued("HGE2E"); qerr == nil && work == 0 && undispatched == 0 {
			break
		}
	}
	if qerr != nil || work != 0 || undispatched != 0 {
		t.Errorf("the store did not settle: %d work messages, %d events not dispatched (%v)", work, undispatched, qerr)
	}
	ackedIDs := make([]string, 0, len(acked))
	for id := range acked {
		ackedIDs = append(ackedIDs, id)
	}
	if missing, err := c.missingEvents("HGE2E", ackedIDs); err != nil && r.expectLoss {
		lostLines = append(lostLines, fmt.Sprintf("the events stream cannot be read (%v): every ACKed event not delivered before the cut is gone with it", err))
	} else if err != nil {
		t.Errorf("reading the events stream: %v", err)
	} else {
		for _, id := range missing {
			e := acked[id]
			lostLines = append(lostLines, fmt.Sprintf("ACKed event %s (delivery %s, sent during %q) is not in the events stream", id, e.delivery, e.phase))
		}
	}

	// The figures, by the phase an event was first sent in.
	stats := map[string]*phaseStats{}
	for _, p := range phases {
		stats[p] = &phaseStats{phase: p}
	}
	lostSet := map[string]bool{}
	for _, id := range lost {
		lostSet[id] = true
	}
	eventsOf := map[string]map[string]bool{} // delivery id -> event ids delivered
	attemptsOf := map[string][]string{}      // event id -> Hookgate-Attempt of each delivery, and its phase
	for n, req := range up.all() {
		if !req.Answered {
			continue
		}
		d, id := req.Header.Get("X-GitHub-Delivery"), req.Header.Get("Hookgate-Event-Id")
		if eventsOf[d] == nil {
			eventsOf[d] = map[string]bool{}
		}
		phase, _ := deliveredIn.Load(n + 1)
		attemptsOf[id] = append(attemptsOf[id], fmt.Sprintf("attempt %s during %q", req.Header.Get("Hookgate-Attempt"), phase))
		if eventsOf[d][id] {
			if s := stats[fmt.Sprint(phase)]; s != nil {
				s.redeliveredHere++
			}
			if e := byDelivery[d]; e != nil {
				stats[e.phase].deliveredTwice++
			}
		}
		eventsOf[d][id] = true
	}
	shown := 0
	for id, attempts := range attemptsOf {
		if len(attempts) > 1 && shown < 3 {
			shown++
			t.Logf("event %s delivered %d times: %s", id, len(attempts), strings.Join(attempts, ", "))
		}
	}
	for _, e := range events {
		s := stats[e.phase]
		s.events++
		ok := false
		for _, a := range e.attempts {
			switch a.status {
			case http.StatusOK:
				ok = true
				if lostSet[a.eventID] {
					s.lost++
				}
			case http.StatusServiceUnavailable:
				s.refused[a.gateway]++
			}
		}
		if ok {
			s.acked++
		} else if len(eventsOf[e.delivery]) > 0 {
			s.refusedDelivered++
		}
		if len(eventsOf[e.delivery]) > 1 {
			s.storedTwice++
		}
	}
	// The longest time each gateway answered no 200, over the gaps between
	// its 200s that overlap each phase.
	var okAt [2][]time.Time
	for _, e := range events {
		for _, a := range e.attempts {
			if a.status == http.StatusOK {
				okAt[a.gateway] = append(okAt[a.gateway], a.end)
			}
		}
	}
	for g := range okAt {
		times := append([]time.Time{began[0]}, okAt[g]...)
		times = append(times, began[len(began)-1])
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		for i, p := range phases {
			from, to := began[i], began[i+1]
			for j := 1; j < len(times); j++ {
				if times[j].After(from) && times[j-1].Before(to) {
					stats[p].noACK[g] = max(stats[p].noACK[g], times[j].Sub(times[j-1]))
				}
			}
		}
	}
	t.Logf("cluster up after %s, gateways after %s, load done after %s, checked after %s",
		clusterUp.Round(100*time.Millisecond), gatewaysUp.Round(100*time.Millisecond), loadDone.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
	var out []phaseStats
	for _, p := range phases {
		out = append(out, *stats[p])
	}
	return out
}

// reportSome fails the test with the first 20 of a kind of failure, and
// how many there were.
func reportSome(t *testing.T, what string, lines []string) {
	t.Helper()
	if len(lines) == 0 {
		return
	}
	shown := lines[:min(len(lines), 20)]
	t.Errorf("%d %s:\n%s", len(lines), what, strings.Join(shown, "\n"))
}

// keepPartitionLogs copies the round's node and gateway logs into dir.
func keepPartitionLogs(t *testing.T, dir string, c *netCluster, gateways []*gateway) {
	t.Helper()
	err := os.MkdirAll(dir, 0o755)
	for i, g := range gateways {
		err = errors.Join(err, os.WriteFile(filepath.Join(dir, fmt.Sprintf("gateway-%c.log", 'a'+i)), []byte(g.log.String()), 0o644))
	}
	for _, n := range c.nodes {
		b, rerr := os.ReadFile(n.logPath)
		err = errors.Join(err, rerr, os.WriteFile(filepath.Join(dir, n.name+".log"), b, 0o644))
	}
	if err != nil {
		t.Errorf("keeping the logs: %v", err)
		return
	}
	t.Logf("logs kept in %s", dir)
}

// phaseStats are the figures of one phase of a round. Events count by the
// phase they were first sent in; redeliveredHere by the phase the repeat
// arrived in.
type phaseStats struct {
	phase string
	// events sent; acked: answered 200 at least once; lost: answered 200
	// but never delivered.
	events, acked, lost int
	// refused: 503 answers by each gateway (an event may get several);
	// refusedDelivered:
	// events never answered 200 yet delivered (stored, but the answer
	// came too late).
	refused          [2]int
	refusedDelivered int
	// deliveredTwice: repeat deliveries of one stored event (a settled
	// attempt whose acknowledgement did not reach JetStream);
	// storedTwice: provider deliveries stored as two events (a 503 for a
	// write that was in fact stored, then the provider's retry).
	deliveredTwice, storedTwice int
	redeliveredHere             int
	// noACK: the longest time each gateway answered no 200, over the gaps
	// that overlap the phase (the most of any round, in merged figures).
	noACK [2]time.Duration
}

func mergeStats(into, add []phaseStats) []phaseStats {
	for _, s := range add {
		i := slices.IndexFunc(into, func(x phaseStats) bool { return x.phase == s.phase })
		if i < 0 {
			into = append(into, phaseStats{phase: s.phase})
			i = len(into) - 1
		}
		x := &into[i]
		x.events += s.events
		x.acked += s.acked
		x.lost += s.lost
		x.refused[0] += s.refused[0]
		x.refused[1] += s.refused[1]
		x.refusedDelivered += s.refusedDelivered
		x.deliveredTwice += s.deliveredTwice
		x.storedTwice += s.storedTwice
		x.redeliveredHere += s.redeliveredHere
		x.noACK[0], x.noACK[1] = max(x.noACK[0], s.noACK[0]), max(x.noACK[1], s.noACK[1])
	}
	return into
}

func logPartitionStats(t *testing.T, title string, stats []phaseStats) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", title)
	fmt.Fprintf(&b, "  %-44s %7s %7s %5s %11s %11s %9s %9s %11s %13s\n", "phase", "events", "ACKed", "lost", "503s a/b", "503+stored", "dup.deliv", "dup.store", "repeats in", "no 2xx a/b")
	total := phaseStats{phase: "total"}
	for _, s := range stats {
		fmt.Fprintf(&b, "  %-44s %7d %7d %5d %11s %11d %9d %9d %11d %13s\n", s.phase, s.events, s.acked, s.lost, fmt.Sprintf("%d/%d", s.refused[0], s.refused[1]), s.refusedDelivered, s.deliveredTwice, s.storedTwice, s.redeliveredHere,
			fmt.Sprintf("%.1f/%.1fs", s.noACK[0].Seconds(), s.noACK[1].Seconds()))
		s.phase = total.phase
		total = mergeStats([]phaseStats{total}, []phaseStats{s})[0]
	}
	fmt.Fprintf(&b, "  %-44s %7d %7d %5d %11s %11d %9d %9d %11d %13s", "total", total.events, total.acked, total.lost, fmt.Sprintf("%d/%d", total.refused[0], total.refused[1]), total.refusedDelivered, total.deliveredTwice, total.storedTwice, total.redeliveredHere,
		fmt.Sprintf("%.1f/%.1fs", total.noACK[0].Seconds(), total.noACK[1].Seconds()))
	t.Log(b.String())
}

// partitionLoad sends unique GitHub-signed events to the gateways in turn
// and keeps every answer. A refused or failed request is sent again as a
// provider does (the same delivery id and body, up to four attempts, half a
// second apart, each to the other instance as a load balancer would), so a
// write refused but in fact stored shows up; no retry starts after finish.
type partitionLoad struct {
	t        *testing.T
	signer   signer
	client   *http.Client
	gateways []*gateway
	prefix   string
	next     atomic.Int64
	phase    atomic.Value // string
	stop     chan struct{}
	wg       sync.WaitGroup
	skipped  atomic.Int64 // ticks skipped with maxInFlight events waiting

	mu     sync.Mutex
	events []*partitionEvent
}

// partitionEvent is one provider delivery and the answers to its attempts.
type partitionEvent struct {
	delivery string
	phase    string
	attempts []partitionAttempt
}

type partitionAttempt struct {
	start, end time.Time
	gateway    int
	status     int // 0: no answer (err says why)
	err        string
	eventID    string
}

func (e *partitionEvent) answers() string {
	var parts []string
	for _, a := range e.attempts {
		if a.status == 0 {
			parts = append(parts, a.err)
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", a.status, a.eventID))
		}
	}
	return strings.Join(parts, "; ")
}

func (l *partitionLoad) currentPhase() string {
	if p, ok := l.phase.Load().(string); ok {
		return p
	}
	return "baseline"
}

func (l *partitionLoad) setPhase(p string) { l.phase.Store(p) }

// start sends rate events per second, each from a goroutine of its own, as
// independent providers do: an event waiting for its answer holds up no
// other. At most maxInFlight wait at once; a tick beyond is skipped.
func (l *partitionLoad) start(t *testing.T, gateways []*gateway, rate int) {
	const maxInFlight = 4000
	l.t, l.gateways, l.signer = t, gateways, newSigner(t, "github", "gh-e2e-secret-0123456789")
	l.prefix = fmt.Sprintf("part%d-", senders.Add(1))
	// Longer than any answer the gateway may take (a store operation is
	// bounded to 10 s, releasing a dedup key after it to 10 s more): a
	// timeout here is a hung request, reported as such.
	l.client = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	l.stop = make(chan struct{})
	slots := make(chan struct{}, maxInFlight)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for turn := 0; ; turn++ {
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
			select {
			case slots <- struct{}{}:
			default:
				l.skipped.Add(1)
				continue
			}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				l.send(turn)
				<-slots
			}()
		}
	}()
}

// finish stops sending and waits for the attempts in flight.
func (l *partitionLoad) finish() {
	close(l.stop)
	l.wg.Wait()
}

func (l *partitionLoad) results() []*partitionEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

func (l *partitionLoad) send(turn int) {
	n := l.next.Add(1)
	e := &partitionEvent{delivery: l.prefix + strconv.FormatInt(n, 10), phase: l.currentPhase()}
	body := []byte(`{"action":"opened","number":` + strconv.FormatInt(n, 10) + `,"sender":"` + l.prefix + `","pad":"` + strings.Repeat("x", 512) + `"}`)
	h := l.signer.sign(l.t, body, "")
	h.Set("X-GitHub-Delivery", e.delivery)
	h.Set("Content-Type", "application/json")
	for try := range 4 {
		if try > 0 {
			select {
			case <-l.stop:
				// No retry once the load ends: finish waits for none.
				l.record(e)
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
		gi := (turn + try) % len(l.gateways)
		req, _ := http.NewRequest(http.MethodPost, l.gateways[gi].url("/webhooks/github"), bytes.NewReader(body))
		req.Header = h.Clone()
		a := partitionAttempt{start: time.Now(), gateway: gi}
		resp, err := l.client.Do(req)
		a.end = time.Now()
		if err != nil {
			a.err = err.Error()
		} else {
			resp.Body.Close()
			a.status, a.eventID = resp.StatusCode, resp.Header.Get("Hookgate-Event-Id")
		}
		e.attempts = append(e.attempts, a)
		if a.status == http.StatusOK {
			break
		}
	}
	l.record(e)
}

func (l *partitionLoad) record(e *partitionEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// Package natstest starts real NATS servers with JetStream on loopback, in
// the calling process, for tests and the bench.
package natstest

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster is servers started by Start.
type Cluster struct {
	Nodes []*server.Server
}

// URLs lists the running servers' client URLs, comma-separated.
func (c *Cluster) URLs() string {
	var urls []string
	for _, ns := range c.Nodes {
		if ns.Running() {
			urls = append(urls, ns.ClientURL())
		}
	}
	return strings.Join(urls, ",")
}

// Stop shuts every server down.
func (c *Cluster) Stop() {
	for _, ns := range c.Nodes {
		ns.Shutdown()
		ns.WaitForShutdown()
	}
}

// Start starts n servers (clustered when n > 1) storing under dir, and
// returns once the cluster can place a stream on all of them. Like NATS's
// default, the servers flush their files to disk every two minutes.
func Start(n int, dir string) (*Cluster, error) { return start(n, dir, false) }

// StartSyncAlways is Start with every write flushed to disk before it is
// acknowledged (sync_interval: always), as a deployment that must keep
// acknowledged events through a power loss runs.
func StartSyncAlways(n int, dir string) (*Cluster, error) { return start(n, dir, true) }

func start(n int, dir string, syncAlways bool) (*Cluster, error) {
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	c := &Cluster{}
	for i := range n {
		opts := &server.Options{ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: -1, JetStream: true,
			StoreDir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)), NoLog: true, NoSigs: true, SyncAlways: syncAlways}
		if n > 1 {
			opts.Cluster = server.ClusterOpts{Name: "hookgate-test", Host: "127.0.0.1", Port: ports[i]}
			opts.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		}
		ns, err := server.NewServer(opts)
		if err != nil {
			c.Stop()
			return nil, err
		}
		go ns.Start()
		c.Nodes = append(c.Nodes, ns)
		if !ns.ReadyForConnections(20 * time.Second) {
			c.Stop()
			return nil, fmt.Errorf("nats node %d did not start", i+1)
		}
	}
	if err := c.waitReady(n); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// freePorts picks n distinct loopback ports for the cluster links: all are
// held open until every one is chosen, so none is handed out twice.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func (c *Cluster) waitReady(replicas int) error {
	nc, err := nats.Connect(c.URLs())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "READY", Subjects: []string{"ready"}, Replicas: replicas})
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the NATS cluster did not form: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Package client is a typed schedsvc.v1 client that survives server restarts, with the Python
// client's behaviour (clients/schedsvc_client/client.py).
//
// The server keeps each cluster's snapshot in memory only; the client is the source of truth.
// So it remembers the desired state it pushed (nodes, namespaces, bound and nominated pods,
// budgets, storage) and the placements it was given, and when the server comes back with a new
// epoch (a restart) or refuses a patch with FAILED_PRECONDITION, it replays that state with
// replace=true (a staged replace when it needs several messages) and sends the request again.
// That is safe because Schedule is idempotent per pod uid. UNAVAILABLE and RESOURCE_EXHAUSTED
// are retried with backoff (the server's RetryInfo delay when it sends one) within the
// policy's budget. One Client owns one cluster's state.
package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// NotAttempted is the message of a placement the server did not reach within the budget.
const NotAttempted = "not attempted: deadline exceeded"

// Options configure a Client; the zero value is an insecure channel to cluster "default".
type Options struct {
	Cluster     string                           // "" = "default"
	Token       string                           // sent as "authorization: Bearer <token>"
	Credentials credentials.TransportCredentials // nil: insecure
	Retry       *RetryPolicy                     // nil: DefaultRetryPolicy()
	Timeout     time.Duration                    // per attempt; 0: none (the budget still bounds the call)
	DialOptions []grpc.DialOption
}

// TLSCredentials trusts caFile; with a certificate and key, the client side of mutual TLS.
func TLSCredentials(caFile, certFile, keyFile string) (credentials.TransportCredentials, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no certificate", caFile)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}

// Client is typed, retrying, resyncing access to one cluster of a schedsvc server. Safe for
// concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	stub    pb.ScheduleServiceClient
	cluster string
	token   string
	retry   RetryPolicy
	timeout time.Duration

	mu      sync.Mutex // guards state, epoch, floor, resyncs; held across a replay
	state   *desiredState
	epoch   string // the server incarnation our state lives in ("" = not known yet)
	floor   floor  // the last replace we made: answers below it came from a replaced state
	resyncs int
}

type floor struct {
	epoch      string
	generation uint64
}

// New connects to target (host:port).
func New(target string, opts Options) (*Client, error) {
	creds := opts.Credentials
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(target, append([]grpc.DialOption{grpc.WithTransportCredentials(creds)},
		opts.DialOptions...)...)
	if err != nil {
		return nil, err
	}
	retry := DefaultRetryPolicy()
	if opts.Retry != nil {
		retry = *opts.Retry
	}
	cluster := opts.Cluster
	if cluster == "" {
		cluster = "default"
	}
	return &Client{conn: conn, stub: pb.NewScheduleServiceClient(conn), cluster: cluster,
		token: opts.Token, retry: retry, timeout: opts.Timeout, state: newDesiredState()}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Epoch is the server incarnation the client's state lives in.
func (c *Client) Epoch() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// Resyncs is how many times the state was replayed.
func (c *Client) Resyncs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resyncs
}

// DesiredPods are the pods this client believes are on the cluster: pushed, or placed for it.
func (c *Client) DesiredPods() map[string]*pb.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cloneMap(c.state.pods)
}

func (c *Client) ctx(ctx context.Context) context.Context {
	if c.token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.token)
}

func (c *Client) deadline(ctx context.Context) time.Time {
	d := time.Now().Add(c.retry.Budget)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

// UpdateSnapshot pushes a change and remembers it. A patch carries the epoch it was meant
// for; if the server restarted since, the whole desired state (this change included) is
// replayed. req.Cluster is set to the client's cluster.
func (c *Client) UpdateSnapshot(ctx context.Context, req *pb.UpdateSnapshotRequest) (*pb.UpdateSnapshotResponse, error) {
	deadline := c.deadline(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	req.Cluster = c.cluster
	desired := c.state.copy()
	desired.apply(req)
	if !req.GetReplace() {
		req.ExpectedEpoch = c.epoch
	}
	resp, err := callWithRetry(c.ctx(ctx), c.retry, deadline, c.timeout,
		func(ctx context.Context) (*pb.UpdateSnapshotResponse, error) { return c.stub.UpdateSnapshot(ctx, req) })
	if err != nil {
		// our own epoch guard tripped (the user set no generation): the server restarted
		if status.Code(err) != codes.FailedPrecondition || req.GetExpectedGeneration() != 0 {
			return nil, err
		}
		if resp, err = c.replay(ctx, desired, deadline); err != nil {
			return nil, err
		}
	}
	c.state = desired
	c.epoch = resp.GetEpoch()
	if req.GetReplace() {
		c.floor = floor{resp.GetEpoch(), resp.GetGeneration()}
	}
	return resp, nil
}

// Resync replays the whole desired state with replace=true.
func (c *Client) Resync(ctx context.Context) (*pb.UpdateSnapshotResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replay(ctx, c.state, c.deadline(ctx))
}

// replay sends state in chunks; a restart between chunks starts it over, up to MaxResyncs
// times within the budget (call with mu held).
func (c *Client) replay(ctx context.Context, state *desiredState, deadline time.Time) (*pb.UpdateSnapshotResponse, error) {
	for restarts := 0; ; restarts++ {
		resp, err := c.replayOnce(ctx, state, deadline)
		if err != nil {
			if status.Code(err) != codes.FailedPrecondition {
				return nil, err
			}
			if restarts >= c.retry.MaxResyncs || !time.Now().Before(deadline) {
				return nil, fmt.Errorf("%w: the server restarted during each of %d replays: %v",
					ErrResync, restarts+1, err)
			}
			continue
		}
		c.epoch = resp.GetEpoch()
		c.floor = floor{resp.GetEpoch(), resp.GetGeneration()}
		c.resyncs++
		return resp, nil
	}
}

func (c *Client) replayOnce(ctx context.Context, state *desiredState, deadline time.Time) (*pb.UpdateSnapshotResponse, error) {
	chunks := state.replayChunks(c.retry.ReplayChunk)
	staged := len(chunks) > 1
	var resp *pb.UpdateSnapshotResponse
	for k, req := range chunks {
		req.Cluster = c.cluster
		if resp == nil {
			req.Replace = true
		} else {
			req.ExpectedEpoch, req.StagedReplace = resp.GetEpoch(), resp.GetStagedReplace()
		}
		if staged {
			req.Stage, req.Commit = true, k == len(chunks)-1
		}
		var err error
		resp, err = callWithRetry(c.ctx(ctx), c.retry, deadline, c.timeout,
			func(ctx context.Context) (*pb.UpdateSnapshotResponse, error) { return c.stub.UpdateSnapshot(ctx, req) })
		if err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// resyncIf replays unless another goroutine already did (or, given seenFloor, unless any
// replace of ours was made) since the failed call was sent.
func (c *Client) resyncIf(ctx context.Context, seenEpoch string, seenResyncs int, deadline time.Time, seenFloor *floor) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch == seenEpoch && c.resyncs == seenResyncs && (seenFloor == nil || c.floor == *seenFloor) {
		_, err := c.replay(ctx, c.state, deadline)
		return err
	}
	return nil
}

// superseded: resp came from a state that is gone (call with mu held).
func (c *Client) superseded(resp *pb.ScheduleResponse) bool {
	if c.epoch != "" && resp.GetEpoch() != c.epoch {
		return true
	}
	return resp.GetEpoch() == c.floor.epoch && resp.GetGeneration() < c.floor.generation
}

// record remembers placed pods as bound; false when the answer came from a superseded state.
func (c *Client) record(pods []*pb.Pod, placements []*pb.Placement, resp *pb.ScheduleResponse) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.superseded(resp) {
		return false
	}
	for i, pl := range placements {
		if pl.GetOutcome() == pb.Placement_SCHEDULED && pl.GetNodeName() != "" {
			c.state.bind(pods[i], pl.GetNodeName())
		}
	}
	return true
}

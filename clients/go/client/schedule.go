package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

func (c *Client) countResync(n int) (int, error) {
	if n >= c.retry.MaxResyncs {
		return n, fmt.Errorf("%w: server changed %d times during one call", ErrResync, n)
	}
	return n + 1, nil
}

func (c *Client) seen() (string, int, floor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch, c.resyncs, c.floor
}

// Schedule returns one placement per pod, in order. It retries UNAVAILABLE and
// RESOURCE_EXHAUSTED with backoff, re-sends pods the server did not reach before a deadline,
// and replays the snapshot when the server restarted (new epoch) or refused with
// FAILED_PRECONDITION. A pod still unanswered when the budget runs out gets NotAttempted.
func (c *Client) Schedule(ctx context.Context, pods []*pb.Pod, dryRun bool) ([]*pb.Placement, error) {
	placements, _, err := c.ScheduleGroups(ctx, pods, dryRun)
	return placements, err
}

// ScheduleGroups is Schedule that also returns one result per pod group among the pods
// (GenericWorkload on), in the order first answered: a group's latest decided answer.
func (c *Client) ScheduleGroups(ctx context.Context, pods []*pb.Pod, dryRun bool) ([]*pb.Placement, []*pb.PodGroupResult, error) {
	var groupOrder []string
	groups := map[string]*pb.PodGroupResult{}
	out := make([]*pb.Placement, len(pods))
	todo := make([]int, len(pods))
	for i := range pods {
		todo[i] = i
	}
	deadline := c.deadline(ctx)
	resyncs := 0
	var err error
	for len(todo) > 0 {
		batch := make([]*pb.Pod, len(todo))
		for k, i := range todo {
			batch[k] = pods[i]
		}
		req := &pb.ScheduleRequest{Cluster: c.cluster, Pods: batch, DryRun: dryRun}
		seen, seenResyncs, seenFloor := c.seen()
		resp, callErr := callWithRetry(c.ctx(ctx), c.retry, deadline, c.timeout,
			func(ctx context.Context) (*pb.ScheduleResponse, error) { return c.stub.Schedule(ctx, req) })
		if callErr != nil {
			switch code := status.Code(callErr); {
			case code == codes.FailedPrecondition:
				// a restart noticed, or a replace (maybe our own replay) not yet committed
				if resyncs, err = c.countResync(resyncs); err != nil {
					return nil, nil, err
				}
				if err := c.resyncIf(ctx, seen, seenResyncs, deadline, nil); err != nil {
					return nil, nil, err
				}
				continue
			case code == codes.DeadlineExceeded && time.Now().Before(deadline) && ctx.Err() == nil:
				continue // our per-attempt timeout: what was placed comes back on retry
			default:
				return nil, nil, callErr
			}
		}
		if seen != "" && resp.GetEpoch() != seen {
			// a restarted server answered from an empty or stale cluster: replay, resend
			if resyncs, err = c.countResync(resyncs); err != nil {
				return nil, nil, err
			}
			if err := c.resyncIf(ctx, seen, seenResyncs, deadline, nil); err != nil {
				return nil, nil, err
			}
			continue
		}
		if seen == "" {
			c.mu.Lock()
			if c.epoch == "" {
				c.epoch = resp.GetEpoch()
			}
			c.mu.Unlock()
		}
		var idx []int
		var attempted []*pb.Placement
		var attemptedPods []*pb.Pod
		for k, pl := range resp.GetPlacements() {
			if pl.GetOutcome() != pb.Placement_OUTCOME_UNSPECIFIED {
				idx, attempted = append(idx, todo[k]), append(attempted, pl)
				attemptedPods = append(attemptedPods, pods[todo[k]])
			}
		}
		if !dryRun && !c.record(attemptedPods, attempted, resp) {
			// placed on a state since replaced (or a cluster deleted and made afresh): replay
			if resyncs, err = c.countResync(resyncs); err != nil {
				return nil, nil, err
			}
			if err := c.resyncIf(ctx, seen, seenResyncs, deadline, &seenFloor); err != nil {
				return nil, nil, err
			}
			continue
		}
		for k, i := range idx {
			out[i] = attempted[k]
		}
		for _, g := range resp.GetPodGroups() {
			if _, seen := groups[g.GetPodGroup()]; !seen {
				groupOrder = append(groupOrder, g.GetPodGroup())
				groups[g.GetPodGroup()] = g
			} else if g.GetOutcome() != pb.PodGroupResult_OUTCOME_UNSPECIFIED {
				groups[g.GetPodGroup()] = g
			}
		}
		next := todo[:0]
		for _, i := range todo {
			if out[i] == nil {
				next = append(next, i)
			}
		}
		todo = next
		if len(todo) > 0 && !time.Now().Before(deadline) {
			break
		}
	}
	for i, pl := range out {
		if pl == nil {
			out[i] = &pb.Placement{PodUid: pods[i].GetUid(), Message: NotAttempted}
		}
	}
	results := make([]*pb.PodGroupResult, len(groupOrder))
	for i, name := range groupOrder {
		results[i] = groups[name]
	}
	return out, results, nil
}

// ScheduleStream schedules batches over one stream, yielding each batch's placements in
// order. If the stream breaks (UNAVAILABLE) or the server restarted, the unanswered batches
// are sent again (idempotent per uid) through Schedule, and streaming resumes after them.
func (c *Client) ScheduleStream(ctx context.Context, batches iter.Seq[[]*pb.Pod], dryRun bool) iter.Seq2[[]*pb.Placement, error] {
	return func(yield func([]*pb.Placement, error) bool) {
		next, stop := iter.Pull(batches)
		defer stop()
		src := &batchSource{next: next}
		for {
			broken, ok := c.streamOnce(ctx, src, dryRun, yield)
			if !ok || !broken {
				return
			}
			// answer what the broken stream left unanswered, in order, then stream the rest
			for _, b := range src.takePending() {
				placements, err := c.Schedule(ctx, b, dryRun)
				if !yield(placements, err) || err != nil {
					return
				}
			}
			if src.exhausted() {
				return
			}
		}
	}
}

// batchSource is the caller's batches, pulled by one stream attempt at a time; each pulled
// batch stays pending until its answer comes. Pulling may block (a caller waiting for work):
// it holds only pullMu, so answers keep flowing meanwhile.
type batchSource struct {
	pullMu  sync.Mutex // one pull at a time: iter.Pull's next is not safe for concurrent use
	mu      sync.Mutex // guards pending and done
	next    func() ([]*pb.Pod, bool)
	pending [][]*pb.Pod
	done    bool
}

func (s *batchSource) pull() ([]*pb.Pod, bool) {
	s.pullMu.Lock()
	defer s.pullMu.Unlock()
	if s.exhausted() {
		return nil, false
	}
	b, ok := s.next()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		s.done = true
		return nil, false
	}
	s.pending = append(s.pending, b)
	return b, true
}

func (s *batchSource) answered() []*pb.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.pending[0]
	s.pending = s.pending[1:]
	return b
}

func (s *batchSource) takePending() [][]*pb.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out
}

func (s *batchSource) exhausted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// streamOnce is one stream attempt: broken when it must be resumed, ok false when the caller
// stopped or an error was yielded.
func (c *Client) streamOnce(ctx context.Context, src *batchSource, dryRun bool,
	yield func([]*pb.Placement, error) bool) (broken, ok bool) {
	sctx, cancel := context.WithCancel(c.ctx(ctx))
	defer cancel()
	stream, err := c.stub.ScheduleStream(sctx)
	if err != nil {
		return c.streamFailed(err, yield)
	}
	sendDone := make(chan struct{})
	go func() { // the sender stops pulling once the attempt is over
		defer close(sendDone)
		for sctx.Err() == nil {
			b, more := src.pull()
			if !more {
				_ = stream.CloseSend()
				return
			}
			if stream.Send(&pb.ScheduleRequest{Cluster: c.cluster, Pods: b, DryRun: dryRun}) != nil {
				return
			}
		}
	}()
	defer func() { cancel(); <-sendDone }()
	seen, _, _ := c.seen()
	for {
		resp, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return false, true
			}
			return c.streamFailed(err, yield)
		}
		if seen != "" && resp.GetEpoch() != seen {
			return true, true // the batch stays pending and is re-sent
		}
		b := src.answered()
		if seen == "" {
			c.mu.Lock()
			if c.epoch == "" {
				c.epoch = resp.GetEpoch()
			}
			seen = c.epoch
			c.mu.Unlock()
		}
		placements := resp.GetPlacements()
		if unattempted(placements) || (!dryRun && !c.record(b, placements, resp)) {
			if placements, err = c.Schedule(ctx, b, dryRun); err != nil {
				yield(nil, err)
				return false, false
			}
		}
		if !yield(placements, nil) {
			return false, false
		}
	}
}

func (c *Client) streamFailed(err error, yield func([]*pb.Placement, error) bool) (bool, bool) {
	code := status.Code(err)
	if retryable(code) || code == codes.FailedPrecondition {
		return true, true
	}
	yield(nil, err)
	return false, false
}

func unattempted(placements []*pb.Placement) bool {
	for _, p := range placements {
		if p.GetOutcome() == pb.Placement_OUTCOME_UNSPECIFIED {
			return true
		}
	}
	return false
}

// Explain is every node's verdict for pod; nothing assumed. Retried like Schedule.
func (c *Client) Explain(ctx context.Context, pod *pb.Pod) (*pb.ExplainResponse, error) {
	req := &pb.ExplainRequest{Cluster: c.cluster, Pod: pod}
	return ask(c, ctx, func(ctx context.Context) (*pb.ExplainResponse, error) { return c.stub.Explain(ctx, req) })
}

// ExplainPodGroup explains the members of one PodGroup as its pod group cycle would try them
// (GenericWorkload on), on a copy of the cluster: nothing placed, no cycle consumed.
func (c *Client) ExplainPodGroup(ctx context.Context, members []*pb.Pod) (*pb.ExplainResponse, error) {
	req := &pb.ExplainRequest{Cluster: c.cluster, PodGroupMembers: members}
	return ask(c, ctx, func(ctx context.Context) (*pb.ExplainResponse, error) { return c.stub.Explain(ctx, req) })
}

// Simulate runs steps on a fork of the cluster (unchanged).
func (c *Client) Simulate(ctx context.Context, steps []*pb.SimulationStep) (*pb.SimulateResponse, error) {
	req := &pb.SimulateRequest{Cluster: c.cluster, Steps: steps}
	return ask(c, ctx, func(ctx context.Context) (*pb.SimulateResponse, error) { return c.stub.Simulate(ctx, req) })
}

// ask is a read, retried; refused while our replay's staged replace is open, asked again.
func ask[T any](c *Client, ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	deadline := c.deadline(ctx)
	for attempt := 0; ; attempt++ {
		resp, err := callWithRetry(c.ctx(ctx), c.retry, deadline, c.timeout, fn)
		if err == nil || status.Code(err) != codes.FailedPrecondition ||
			attempt >= c.retry.MaxResyncs || !time.Now().Before(deadline) {
			return resp, err
		}
		c.mu.Lock()   // a replay of ours holds it until its commit
		c.mu.Unlock() //nolint:staticcheck // waiting for the replay is the point
		time.Sleep(min(c.retry.MaxBackoff, time.Duration(50<<attempt)*time.Millisecond))
	}
}

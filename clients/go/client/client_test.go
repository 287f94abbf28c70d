package client

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/schedsvc/schedsvc/clients/go/internal/servertest"
	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

func node(name, cpu string) *pb.Node {
	return &pb.Node{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name},
		Allocatable: map[string]string{"cpu": cpu, "memory": "8Gi", "pods": "110"}}
}

func pod(uid, cpu string) *pb.Pod {
	return &pb.Pod{Uid: uid, Name: uid, Namespace: "default",
		Containers: []*pb.Container{{Name: "c", Requests: map[string]string{"cpu": cpu}}}}
}

func fastRetry() *RetryPolicy {
	p := DefaultRetryPolicy()
	p.Budget = 30 * time.Second
	p.MaxBackoff = 200 * time.Millisecond
	return &p
}

// A node of 1 cpu holds one 600m pod: a second one fits only if the first is forgotten, so
// the second placement tells whether the client replayed its state into the restarted server.
func TestRestartIsResyncedAndPlacementsRemembered(t *testing.T) {
	port := servertest.FreePort(t)
	srv := servertest.Start(t, port)
	c, err := New(srv.Address, Options{Retry: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.UpdateSnapshot(ctx, &pb.UpdateSnapshotRequest{Replace: true,
		UpsertNodes: []*pb.Node{node("n0", "1")}}); err != nil {
		t.Fatal(err)
	}
	first, err := c.Schedule(ctx, []*pb.Pod{pod("a", "600m")}, false)
	if err != nil || first[0].GetNodeName() != "n0" {
		t.Fatalf("first pod: %v %v", first, err)
	}
	epoch := c.Epoch()
	srv.Stop()
	servertest.Start(t, port)
	second, err := c.Schedule(ctx, []*pb.Pod{pod("b", "600m")}, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Resyncs() != 1 || c.Epoch() == epoch {
		t.Fatalf("resyncs %d, epoch %q (was %q): the restart was not noticed", c.Resyncs(), c.Epoch(), epoch)
	}
	if got := second[0].GetOutcome(); got != pb.Placement_UNSCHEDULABLE {
		t.Fatalf("second pod %v: the replay lost the first pod's placement", second[0])
	}
	if p := c.DesiredPods()["a"]; p.GetNodeName() != "n0" {
		t.Fatalf("desired pods %v", c.DesiredPods())
	}
}

// The server comes up after the first attempt: UNAVAILABLE is retried with backoff.
func TestUnavailableIsRetried(t *testing.T) {
	port := servertest.FreePort(t)
	c, err := New(fmt.Sprintf("127.0.0.1:%d", port), Options{Retry: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		time.Sleep(500 * time.Millisecond)
		servertest.Start(t, port)
	}()
	resp, err := c.UpdateSnapshot(context.Background(), &pb.UpdateSnapshotRequest{Replace: true,
		UpsertNodes: []*pb.Node{node("n0", "2")}})
	if err != nil || resp.GetNodes() != 1 {
		t.Fatalf("%v %v", resp, err)
	}
}

func TestStreamAnswersEachBatchInOrder(t *testing.T) {
	srv := servertest.Start(t, 0)
	c, err := New(srv.Address, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.UpdateSnapshot(ctx, &pb.UpdateSnapshotRequest{Replace: true,
		UpsertNodes: []*pb.Node{node("n0", "1"), node("n1", "1")}}); err != nil {
		t.Fatal(err)
	}
	batches := [][]*pb.Pod{{pod("a", "600m")}, {pod("b", "600m"), pod("c", "600m")}}
	var got [][]string
	for placements, err := range c.ScheduleStream(ctx, func(yield func([]*pb.Pod) bool) {
		for _, b := range batches {
			if !yield(b) {
				return
			}
		}
	}, false) {
		if err != nil {
			t.Fatal(err)
		}
		var uids []string
		for _, p := range placements {
			uids = append(uids, p.GetPodUid()+":"+p.GetOutcome().String())
		}
		got = append(got, uids)
	}
	want := "[[a:SCHEDULED] [b:SCHEDULED c:UNSCHEDULABLE]]"
	if fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %s (two 1-cpu nodes hold two 600m pods)", got, want)
	}
	if len(c.DesiredPods()) != 2 {
		t.Fatalf("placed pods not remembered: %v", c.DesiredPods())
	}
}

// busyServer answers RESOURCE_EXHAUSTED with a RetryInfo delay once, then a placement.
type busyServer struct {
	pb.UnimplementedScheduleServiceServer
	calls []time.Time
}

func (s *busyServer) Schedule(_ context.Context, req *pb.ScheduleRequest) (*pb.ScheduleResponse, error) {
	s.calls = append(s.calls, time.Now())
	if len(s.calls) == 1 {
		st, _ := status.New(codes.ResourceExhausted, "busy").WithDetails(
			&errdetails.RetryInfo{RetryDelay: durationpb.New(700 * time.Millisecond)})
		return nil, st.Err()
	}
	return &pb.ScheduleResponse{Epoch: "e1", Placements: []*pb.Placement{{PodUid: req.Pods[0].Uid,
		Outcome: pb.Placement_SCHEDULED, NodeName: "n0"}}}, nil
}

func TestRetryInfoDelayIsHonoured(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	busy := &busyServer{}
	pb.RegisterScheduleServiceServer(gs, busy)
	go func() { _ = gs.Serve(l) }()
	defer gs.Stop()
	policy := DefaultRetryPolicy()
	policy.InitialBackoff = time.Millisecond // jitter alone would retry at once
	c, err := New(l.Addr().String(), Options{Retry: &policy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	placements, err := c.Schedule(context.Background(), []*pb.Pod{pod("a", "1")}, true)
	if err != nil || placements[0].GetNodeName() != "n0" {
		t.Fatalf("%v %v", placements, err)
	}
	if len(busy.calls) != 2 {
		t.Fatalf("%d calls, want 2", len(busy.calls))
	}
	if gap := busy.calls[1].Sub(busy.calls[0]); gap < 700*time.Millisecond {
		t.Fatalf("retried after %v, before the server's RetryInfo delay of 700ms", gap)
	}
}

// A refusal is final: only UNAVAILABLE and RESOURCE_EXHAUSTED are retried.
func TestInvalidArgumentIsNotRetried(t *testing.T) {
	srv := servertest.Start(t, 0)
	c, err := New(srv.Address, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.UpdateSnapshot(context.Background(), &pb.UpdateSnapshotRequest{Replace: true,
		UpsertNodes: []*pb.Node{{Name: "bad", Allocatable: map[string]string{"cpu": "lots"}}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("got %v, want INVALID_ARGUMENT", err)
	}
}

package client

import (
	"context"
	"fmt"
	"testing"

	"github.com/schedsvc/schedsvc/clients/go/internal/servertest"
	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// The server restarts after the first batch is answered: the broken stream's batches are sent
// again after a resync (the first batch's pod replayed as bound), and streaming resumes. Two
// 1-cpu nodes hold two 600m pods, so the third batch fits only if the replay forgot a pod.
func TestStreamResumesAfterARestart(t *testing.T) {
	port := servertest.FreePort(t)
	srv := servertest.Start(t, port)
	c, err := New(srv.Address, Options{Retry: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.UpdateSnapshot(ctx, &pb.UpdateSnapshotRequest{Replace: true,
		UpsertNodes: []*pb.Node{node("n0", "1"), node("n1", "1")}}); err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{})
	batches := func(yield func([]*pb.Pod) bool) {
		if !yield([]*pb.Pod{pod("a", "600m")}) {
			return
		}
		<-answered
		srv.Stop()
		servertest.Start(t, port)
		for _, uid := range []string{"b", "c"} {
			if !yield([]*pb.Pod{pod(uid, "600m")}) {
				return
			}
		}
	}
	var got []string
	for placements, err := range c.ScheduleStream(ctx, batches, false) {
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range placements {
			got = append(got, p.GetPodUid()+":"+p.GetOutcome().String())
		}
		if len(got) == 1 {
			close(answered)
		}
	}
	want := "[a:SCHEDULED b:SCHEDULED c:UNSCHEDULABLE]"
	if fmt.Sprint(got) != want || c.Resyncs() != 1 {
		t.Fatalf("got %v after %d resyncs, want %s after 1", got, c.Resyncs(), want)
	}
}

package client

import (
	"context"
	"testing"

	"github.com/schedsvc/schedsvc/clients/go/internal/servertest"
	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

func member(uid, group string) *pb.Pod {
	p := pod(uid, "600m")
	p.SchedulingGroup = &pb.PodSchedulingGroup{PodGroupName: group}
	return p
}

func gang(name string, minCount int32) *pb.PodGroup {
	return &pb.PodGroup{Name: name, Namespace: "default", Spec: &pb.PodGroupSpec{
		SchedulingPolicy: &pb.PodGroupSchedulingPolicy{Gang: &pb.GangSchedulingPolicy{MinCount: minCount}}}}
}

// With GenericWorkload on, a gang of two on two 1-cpu nodes is placed whole, and one of three
// members known is GATED (kube's PreEnqueue), nothing placed; the PodGroups are part of the
// state a resync replays.
func TestScheduleGroupsReturnsEachGroupsOutcome(t *testing.T) {
	srv := servertest.Start(t, 0, "--feature-gates", "GenericWorkload=true")
	c, err := New(srv.Address, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.UpdateSnapshot(ctx, &pb.UpdateSnapshotRequest{Replace: true,
		UpsertNodes:     []*pb.Node{node("n0", "1"), node("n1", "1")},
		UpsertPodGroups: []*pb.PodGroup{gang("pair", 2), gang("trio", 3)}}); err != nil {
		t.Fatal(err)
	}
	placements, groups, err := c.ScheduleGroups(ctx, []*pb.Pod{member("a", "pair"),
		member("b", "pair"), member("x", "trio")}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 || groups[0].GetPodGroup() != "default/pair" ||
		groups[0].GetOutcome() != pb.PodGroupResult_SCHEDULED || groups[0].GetScheduled() != 2 ||
		groups[1].GetPodGroup() != "default/trio" || groups[1].GetOutcome() != pb.PodGroupResult_GATED {
		t.Fatalf("groups %v", groups)
	}
	if placements[0].GetNodeName() == "" || placements[1].GetNodeName() == "" ||
		placements[0].GetNodeName() == placements[1].GetNodeName() || placements[2].GetNodeName() != "" {
		t.Fatalf("placements %v", placements)
	}
	explained, err := c.ExplainPodGroup(ctx, []*pb.Pod{member("x", "trio")})
	if err != nil || explained.GetPodGroup().GetOutcome() != pb.PodGroupResult_GATED {
		t.Fatalf("explained %v (%v): one of three is GATED", explained.GetPodGroup(), err)
	}
	c.mu.Lock()
	replay := c.state.replayChunks(100)
	c.mu.Unlock()
	if len(replay) != 1 || len(replay[0].UpsertPodGroups) != 2 || len(replay[0].UpsertPods) != 2 {
		t.Fatalf("the replayed state lacks the groups or the placed members: %v", replay)
	}
}

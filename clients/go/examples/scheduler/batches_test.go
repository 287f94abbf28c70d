package main

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

func pending(name, group string) pendingPod {
	p := &pb.Pod{Uid: name}
	if group != "" {
		p.SchedulingGroup = &pb.PodSchedulingGroup{PodGroupName: group}
	}
	return pendingPod{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}, p}
}

// A group's pending members travel in one request, at the place of its first member; a batch
// closes before a group that would overflow it.
func TestBatchesKeepAGroupWhole(t *testing.T) {
	in := []pendingPod{pending("a", ""), pending("g1", "g"), pending("b", ""), pending("g2", "g"),
		pending("c", ""), pending("g3", "g"), pending("d", "")}
	var got []string
	for _, b := range batches(in, 3) {
		var names []string
		for _, p := range b {
			names = append(names, p.pod.Name)
		}
		got = append(got, fmt.Sprint(names))
	}
	want := "[[a] [g1 g2 g3] [b c d]]"
	if fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

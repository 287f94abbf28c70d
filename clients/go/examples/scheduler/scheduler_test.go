package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/schedsvc/schedsvc/clients/go/client"
	"github.com/schedsvc/schedsvc/clients/go/internal/servertest"
)

const ours = "schedsvc-example"

func testNode(name string) *corev1.Node {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"),
		corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc}}
}

func testPod(name, scheduler, node, class, cpu string, created int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(time.Unix(int64(1700000000+created), 0))},
		Spec: corev1.PodSpec{SchedulerName: scheduler, NodeName: node, PriorityClassName: class,
			Containers: []corev1.Container{{Name: "c", Image: "app:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

// bindings makes the fake clientset's pods/binding act as the API server's: set spec.nodeName.
func bindings(cs *fake.Clientset) {
	cs.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		create := action.(k8stesting.CreateAction)
		if create.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := create.GetObject().(*corev1.Binding)
		obj, err := cs.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		pod.Spec.NodeName = b.Target.Name
		return true, nil, cs.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), pod, b.Namespace)
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// Two 1-cpu nodes: "victim" (600m, priority 0) on n0, "blocker" (600m, PriorityClass high)
// on n1. Ours, in kube's queue order: "urgent" (600m, high) fits nowhere, and preempts the
// victim (the blocker has its priority): nominated to n0, the victim evicted, bound there in
// the next round. "small" (300m) fits only n1 (n0 holds the victim and urgent's nomination).
// "gated" has a scheduling gate (not modelled: left pending), "theirs" names another
// scheduler.
func TestExampleSchedulerAgainstARealServer(t *testing.T) {
	srv := servertest.Start(t, 0)
	high := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}
	gated := testPod("gated", ours, "", "", "300m", 3)
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
	cs := fake.NewClientset(testNode("n0"), testNode("n1"), high,
		testPod("victim", "default-scheduler", "n0", "", "600m", 0),
		testPod("blocker", "default-scheduler", "n1", "high", "600m", 0),
		testPod("small", ours, "", "", "300m", 1), testPod("urgent", ours, "", "high", "600m", 2),
		gated, testPod("theirs", "default-scheduler", "", "", "300m", 4))
	bindings(cs)
	sched, err := client.New(srv.Address, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := NewScheduler(cs, sched, ours)
	s.BatchSize = 2
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	get := func(name string) *corev1.Pod {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return p
	}
	if n, err := s.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("first round bound %d (%v), want 1", n, err)
	}
	if node := get("small").Spec.NodeName; node != "n1" {
		t.Fatalf("small on %q, want n1", node)
	}
	if get("victim") != nil {
		t.Fatal("the preemption victim on n0 was not evicted")
	}
	if nn := get("urgent").Status.NominatedNodeName; nn != "n0" {
		t.Fatalf("urgent nominated to %q, want n0", nn)
	}
	podLister := s.factory.Core().V1().Pods().Lister()
	waitFor(t, "the informer to see the nomination and the eviction", func() bool {
		p, err := podLister.Pods("default").Get("urgent")
		_, gone := podLister.Pods("default").Get("victim")
		return err == nil && p.Status.NominatedNodeName == "n0" && gone != nil
	})
	if n, err := s.RunOnce(ctx); err != nil || n != 1 {
		t.Fatalf("second round bound %d (%v), want 1", n, err)
	}
	if node := get("urgent").Spec.NodeName; node != "n0" {
		t.Fatalf("urgent on %q, want n0 (its nominated node)", node)
	}
	for _, name := range []string{"gated", "theirs"} {
		if node := get(name).Spec.NodeName; node != "" {
			t.Fatalf("%s bound to %s: not ours to place", name, node)
		}
	}
	waitFor(t, "the informer to see the bindings", func() bool {
		p, err := podLister.Pods("default").Get("urgent")
		return err == nil && p.Spec.NodeName == "n0"
	})
	if n, err := s.RunOnce(ctx); err != nil || n != 0 {
		t.Fatalf("third round bound %d (%v): nothing is left to place", n, err)
	}
}

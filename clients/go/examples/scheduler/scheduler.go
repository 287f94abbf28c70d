package main

import (
	"context"
	"fmt"
	"log"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/schedsvc/schedsvc/clients/go/client"
	"github.com/schedsvc/schedsvc/clients/go/kube"
	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// Scheduler is an external scheduler: informers over a clientset give it the cluster, schedsvc
// gives it kube-scheduler's decisions, and it writes them back (bindings, nominations,
// evictions), as kube-scheduler would.
type Scheduler struct {
	Name      string // pods with this spec.schedulerName are ours
	Profile   string // the service's profile that schedules them (default-scheduler)
	BatchSize int    // pods per Schedule request
	Lenient   bool   // schedule pods with unmodelled fields without them (reported)

	cs      kubernetes.Interface
	sched   *client.Client
	factory informers.SharedInformerFactory

	mu      sync.Mutex
	assumed map[string]string // uid -> node: bound by us, not yet seen bound by the informer
}

// NewScheduler wires the informers the conversion reads.
func NewScheduler(cs kubernetes.Interface, sched *client.Client, name string) *Scheduler {
	f := informers.NewSharedInformerFactory(cs, 0)
	// asking for an informer registers it with the factory, which Start then runs
	_ = []cache.SharedIndexInformer{f.Core().V1().Nodes().Informer(),
		f.Core().V1().Pods().Informer(), f.Core().V1().Namespaces().Informer(),
		f.Core().V1().Services().Informer(), f.Core().V1().ReplicationControllers().Informer(),
		f.Apps().V1().ReplicaSets().Informer(), f.Apps().V1().StatefulSets().Informer(),
		f.Policy().V1().PodDisruptionBudgets().Informer(),
		f.Scheduling().V1().PriorityClasses().Informer(),
		f.Scheduling().V1beta1().PodGroups().Informer(), f.Scheduling().V1beta1().Workloads().Informer()}
	return &Scheduler{Name: name, Profile: "default-scheduler", BatchSize: 100, cs: cs, sched: sched, factory: f,
		assumed: map[string]string{}}
}

// Start starts the informers and waits for their caches.
func (s *Scheduler) Start(ctx context.Context) error {
	s.factory.Start(ctx.Done())
	for typ, ok := range s.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer cache for %v did not sync", typ)
		}
	}
	return nil
}

// context is what pods read from other objects: default-spreading selectors and priorities.
func (s *Scheduler) context() (*kube.Selecting, *kube.PriorityClasses, error) {
	f := s.factory
	var err error
	sel := &kube.Selecting{}
	if sel.Services, err = f.Core().V1().Services().Lister().List(labels.Everything()); err != nil {
		return nil, nil, err
	}
	if sel.ReplicationControllers, err = f.Core().V1().ReplicationControllers().Lister().List(labels.Everything()); err != nil {
		return nil, nil, err
	}
	if sel.ReplicaSets, err = f.Apps().V1().ReplicaSets().Lister().List(labels.Everything()); err != nil {
		return nil, nil, err
	}
	if sel.StatefulSets, err = f.Apps().V1().StatefulSets().Lister().List(labels.Everything()); err != nil {
		return nil, nil, err
	}
	classes, err := f.Scheduling().V1().PriorityClasses().Lister().List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	return sel, kube.NewPriorityClasses(classes), nil
}

// RunOnce pushes the cluster as the informers see it, schedules every pending pod of ours in
// batches and writes the answers back; it returns how many pods were bound.
func (s *Scheduler) RunOnce(ctx context.Context) (int, error) {
	pending, err := s.sync(ctx)
	if err != nil {
		return 0, err
	}
	bound := 0
	for _, batch := range batches(pending, s.BatchSize) {
		pods := make([]*pb.Pod, len(batch))
		for i, p := range batch {
			pods[i] = p.converted
		}
		placements, groups, err := s.sched.ScheduleGroups(ctx, pods, false)
		if err != nil {
			return bound, err
		}
		for _, g := range groups { // workload-aware preemption: the group's victims
			if err := s.evict(ctx, g.GetVictims()); err != nil {
				return bound, err
			}
		}
		for i, pl := range placements {
			n, err := s.act(ctx, batch[i].pod, pl)
			if err != nil {
				return bound, err
			}
			bound += n
		}
	}
	return bound, nil
}

// batches cuts the pending pods into requests of about size pods, never splitting a pod
// group: its pending members go together, at the place of the first (the service schedules a
// group from one request, as kube's queue pops it whole).
func batches(pending []pendingPod, size int) [][]pendingPod {
	var units [][]pendingPod
	unitOf := map[string]int{}
	for _, p := range pending {
		group := p.converted.GetSchedulingGroup().GetPodGroupName()
		if group == "" {
			units = append(units, []pendingPod{p})
			continue
		}
		key := p.pod.Namespace + "/" + group
		if i, ok := unitOf[key]; ok {
			units[i] = append(units[i], p)
			continue
		}
		unitOf[key] = len(units)
		units = append(units, []pendingPod{p})
	}
	var out [][]pendingPod
	var cur []pendingPod
	for _, u := range units {
		if len(cur) > 0 && len(cur)+len(u) > size {
			out, cur = append(out, cur), nil
		}
		cur = append(cur, u...)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

type pendingPod struct {
	pod       *corev1.Pod
	converted *pb.Pod
}

// sync replaces the service's snapshot with the informers' view (nodes, namespaces, budgets,
// pods on nodes and nominated pods) and returns our pending pods in kube's queue order
// (priority, then creation time).
func (s *Scheduler) sync(ctx context.Context) ([]pendingPod, error) {
	selecting, classes, err := s.context()
	if err != nil {
		return nil, err
	}
	f := s.factory
	req := &pb.UpdateSnapshotRequest{Replace: true}
	nodes, err := f.Core().V1().Nodes().Lister().List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		converted, err := kube.NodeFromKube(n, "node "+n.Name)
		if err != nil {
			return nil, err
		}
		req.UpsertNodes = append(req.UpsertNodes, converted)
	}
	namespaces, err := f.Core().V1().Namespaces().Lister().List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, ns := range namespaces {
		converted, err := kube.NamespaceFromKube(ns, "namespace "+ns.Name)
		if err != nil {
			return nil, err
		}
		req.UpsertNamespaces = append(req.UpsertNamespaces, converted)
	}
	pdbs, err := f.Policy().V1().PodDisruptionBudgets().Lister().List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, b := range pdbs {
		converted, err := kube.PDBFromKube(b, "pdb "+b.Namespace+"/"+b.Name)
		if err != nil {
			return nil, err
		}
		req.UpsertPodDisruptionBudgets = append(req.UpsertPodDisruptionBudgets, converted)
	}
	report := kube.NewLoadReport()
	if err := s.syncGroups(req, report); err != nil {
		return nil, err
	}
	pods, err := f.Core().V1().Pods().Lister().List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var pending []pendingPod
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range pods {
		if kube.IsTerminal(p) {
			continue
		}
		if node, ok := s.assumed[string(p.UID)]; ok && p.Spec.NodeName == "" {
			p = p.DeepCopy() // bound by us, the informer has not seen it yet
			p.Spec.NodeName = node
		} else {
			delete(s.assumed, string(p.UID))
		}
		converted, err := kube.PodFromKube(p, "pod "+p.Namespace+"/"+p.Name, kube.PodOptions{
			DefaultSelector: kube.DefaultSelectorFor(p, selecting), PriorityClasses: classes,
			IgnoreUnmodelled: s.Lenient, Report: report})
		if err != nil {
			log.Printf("left pending: %v", err) // an unmodelled field: kube would answer otherwise
			continue
		}
		if p.Spec.NodeName != "" || p.Status.NominatedNodeName != "" {
			req.UpsertPods = append(req.UpsertPods, converted)
		}
		if p.Spec.NodeName == "" && p.Spec.SchedulerName == s.Name {
			converted.SchedulerName = s.Profile
			pending = append(pending, pendingPod{p, converted})
		}
	}
	if !report.Empty() {
		log.Printf("scheduled without unmodelled fields:\n%s", report.Render())
	}
	if _, err := s.sched.UpdateSnapshot(ctx, req); err != nil {
		return nil, err
	}
	sort.SliceStable(pending, func(i, j int) bool {
		a, b := pending[i], pending[j]
		if a.converted.Priority != b.converted.Priority {
			return a.converted.Priority > b.converted.Priority
		}
		return a.pod.CreationTimestamp.Before(&b.pod.CreationTimestamp)
	})
	return pending, nil
}

// evict deletes preemption victims (uid preconditions: the very pods the service chose).
func (s *Scheduler) evict(ctx context.Context, victims []*pb.Victim) error {
	for _, v := range victims {
		err := s.cs.CoreV1().Pods(v.GetNamespace()).Delete(ctx, v.GetName(), metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: ptrUID(v.GetUid())}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("evicting victim %s/%s: %w", v.GetNamespace(), v.GetName(), err)
		}
	}
	return nil
}

// syncGroups adds the scheduling.k8s.io/v1beta1 PodGroups and Workloads (what gang scheduling
// reads; the service reads them only with --feature-gates GenericWorkload=true, as kube).
func (s *Scheduler) syncGroups(req *pb.UpdateSnapshotRequest, report *kube.LoadReport) error {
	f := s.factory.Scheduling().V1beta1()
	groups, err := f.PodGroups().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	for _, g := range groups {
		converted, err := kube.PodGroupFromKube(g, "podgroup "+g.Namespace+"/"+g.Name, s.Lenient, report)
		if err != nil { // its members are then GATED (their PodGroup unknown): nothing placed
			log.Printf("left out: %v", err)
			continue
		}
		req.UpsertPodGroups = append(req.UpsertPodGroups, converted)
	}
	workloads, err := f.Workloads().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	for _, w := range workloads {
		converted, err := kube.WorkloadFromKube(w, "workload "+w.Namespace+"/"+w.Name, s.Lenient, report)
		if err != nil {
			log.Printf("left out: %v", err)
			continue
		}
		req.UpsertWorkloads = append(req.UpsertWorkloads, converted)
	}
	return nil
}

// act writes one placement back: a binding, or a nomination with its victims evicted (the pod
// comes back in a later round with its nominated node), or nothing (still unschedulable).
func (s *Scheduler) act(ctx context.Context, pod *corev1.Pod, pl *pb.Placement) (int, error) {
	switch {
	case pl.GetOutcome() == pb.Placement_SCHEDULED:
		err := s.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: pl.GetNodeName()}}, metav1.CreateOptions{})
		if err != nil {
			return 0, fmt.Errorf("binding %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		s.mu.Lock()
		s.assumed[string(pod.UID)] = pl.GetNodeName()
		s.mu.Unlock()
		return 1, nil
	case pl.GetNominatedNodeName() != "":
		if err := s.evict(ctx, pl.GetVictims()); err != nil {
			return 0, err
		}
		nominated := pod.DeepCopy()
		nominated.Status.NominatedNodeName = pl.GetNominatedNodeName()
		if _, err := s.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, nominated, metav1.UpdateOptions{}); err != nil {
			return 0, fmt.Errorf("nominating %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	default:
		log.Printf("%s/%s: %s", pod.Namespace, pod.Name, pl.GetMessage())
	}
	return 0, nil
}

package kube

// A cluster's objects into the snapshot parts of an UpdateSnapshotRequest
// (clients/schedsvc_client/kube.py's load_cluster).

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// Options is how a cluster is read.
type Options struct {
	// IgnoreUnmodelled drops an unmodelled field of a pod to schedule instead of refusing it,
	// counting it in the report.
	IgnoreUnmodelled bool
	// RescheduleAll reads every pod as a new one to schedule: spec.nodeName and status dropped.
	RescheduleAll bool
}

// Cluster is what Convert read, each list named as UpdateSnapshotRequest's upsert list.
type Cluster struct {
	Nodes                  []*pb.Node
	Pods                   []*pb.Pod
	Namespaces             []*pb.Namespace
	PodDisruptionBudgets   []*pb.PodDisruptionBudget
	PersistentVolumes      []*pb.PersistentVolume
	PersistentVolumeClaims []*pb.PersistentVolumeClaim
	StorageClasses         []*pb.StorageClass
	CSINodes               []*pb.CSINode
	CSIDrivers             []*pb.CSIDriver
	CSIStorageCapacities   []*pb.CSIStorageCapacity
	VolumeAttachments      []*pb.VolumeAttachment
	PodGroups              []*pb.PodGroup // scheduling.k8s.io/v1beta1, for gang scheduling
	Workloads              []*pb.Workload
	Report                 *LoadReport
}

// UpdateSnapshotRequest is the cluster as one request's upsert lists.
func (c *Cluster) UpdateSnapshotRequest() *pb.UpdateSnapshotRequest {
	return &pb.UpdateSnapshotRequest{UpsertNodes: c.Nodes, UpsertPods: c.Pods,
		UpsertNamespaces: c.Namespaces, UpsertPodDisruptionBudgets: c.PodDisruptionBudgets,
		UpsertPersistentVolumes: c.PersistentVolumes, UpsertPersistentVolumeClaims: c.PersistentVolumeClaims,
		UpsertStorageClasses: c.StorageClasses, UpsertCsiNodes: c.CSINodes, UpsertCsiDrivers: c.CSIDrivers,
		UpsertCsiStorageCapacities: c.CSIStorageCapacities, UpsertVolumeAttachments: c.VolumeAttachments,
		UpsertPodGroups: c.PodGroups, UpsertWorkloads: c.Workloads}
}

// Context gathers what pods read from other objects: the selecting objects behind default
// spreading, and the PriorityClasses.
func Context(items []Item) (*Selecting, *PriorityClasses) {
	s := &Selecting{}
	var classes []*schedulingv1.PriorityClass
	for _, it := range items {
		switch o := it.Object.(type) {
		case *corev1.Service:
			s.Services = append(s.Services, o)
		case *appsv1.ReplicaSet:
			s.ReplicaSets = append(s.ReplicaSets, o)
		case *appsv1.StatefulSet:
			s.StatefulSets = append(s.StatefulSets, o)
		case *corev1.ReplicationController:
			s.ReplicationControllers = append(s.ReplicationControllers, o)
		case *schedulingv1.PriorityClass:
			classes = append(classes, o)
		}
	}
	return s, NewPriorityClasses(classes)
}

// Convert reads nodes, pods, namespaces, PodDisruptionBudgets, the storage objects and the
// scheduling.k8s.io/v1beta1 PodGroups and Workloads of gang scheduling. Each
// pod's default spreading selector comes from the Services, ReplicaSets, StatefulSets and
// ReplicationControllers among the items, and a pod without spec.priority takes its
// PriorityClass's value from them. Succeeded and Failed pods are left out, as kube-scheduler
// leaves them out. The first error, in the Python client's order, is an *ObjectError.
func Convert(items []Item, opts Options) (*Cluster, error) {
	selecting, classes := Context(items)
	if selecting.empty() {
		selecting = nil
	}
	out := &Cluster{Report: NewLoadReport()}
	for _, it := range items {
		if err := out.addCore(it, selecting, classes, opts); err != nil {
			return nil, err
		}
	}
	for _, it := range items {
		if pdb, ok := it.Object.(*policyv1.PodDisruptionBudget); ok {
			b, err := PDBFromKube(pdb, it.Path)
			if err != nil {
				return nil, err
			}
			out.PodDisruptionBudgets = append(out.PodDisruptionBudgets, b)
		}
	}
	for _, it := range items {
		if err := out.addStorage(it, opts); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *Cluster) addCore(it Item, selecting *Selecting, classes *PriorityClasses, opts Options) error {
	switch o := it.Object.(type) {
	case *corev1.Node:
		n, err := NodeFromKube(o, it.Path)
		if err != nil {
			return err
		}
		c.Nodes = append(c.Nodes, n)
	case *corev1.Pod:
		if IsTerminal(o) {
			c.Report.TerminalPods++
			return nil
		}
		if opts.RescheduleAll {
			fresh := o.DeepCopy()
			fresh.Spec.NodeName, fresh.Status = "", corev1.PodStatus{}
			o = fresh
		}
		p, err := PodFromKube(o, it.Path, PodOptions{DefaultSelector: DefaultSelectorFor(o, selecting),
			PriorityClasses: classes, IgnoreUnmodelled: opts.IgnoreUnmodelled, Report: c.Report})
		if err != nil {
			return err
		}
		c.Pods = append(c.Pods, p)
	case *corev1.Namespace:
		ns, err := NamespaceFromKube(o, it.Path)
		if err != nil {
			return err
		}
		c.Namespaces = append(c.Namespaces, ns)
	case nil:
		c.Report.UnusedKinds[it.Kind]++
	}
	return nil
}

func (c *Cluster) addStorage(it Item, opts Options) (err error) {
	switch o := it.Object.(type) {
	case *corev1.PersistentVolume:
		v, e := PVFromKube(o, it.Path)
		c.PersistentVolumes, err = append(c.PersistentVolumes, v), e
	case *corev1.PersistentVolumeClaim:
		v, e := PVCFromKube(o, it.Path)
		c.PersistentVolumeClaims, err = append(c.PersistentVolumeClaims, v), e
	case *storagev1.StorageClass:
		v, e := StorageClassFromKube(o, it.Path)
		c.StorageClasses, err = append(c.StorageClasses, v), e
	case *storagev1.CSINode:
		v, e := CSINodeFromKube(o, it.Path)
		c.CSINodes, err = append(c.CSINodes, v), e
	case *storagev1.CSIDriver:
		v, e := CSIDriverFromKube(o, it.Path)
		c.CSIDrivers, err = append(c.CSIDrivers, v), e
	case *storagev1.CSIStorageCapacity:
		v, e := CSIStorageCapacityFromKube(o, it.Path)
		c.CSIStorageCapacities, err = append(c.CSIStorageCapacities, v), e
	case *storagev1.VolumeAttachment:
		v, e := VolumeAttachmentFromKube(o, it.Path)
		c.VolumeAttachments, err = append(c.VolumeAttachments, v), e
	case *schedulingv1beta1.PodGroup:
		v, e := PodGroupFromKube(o, it.Path, opts.IgnoreUnmodelled, c.Report)
		c.PodGroups, err = append(c.PodGroups, v), e
	case *schedulingv1beta1.Workload:
		v, e := WorkloadFromKube(o, it.Path, opts.IgnoreUnmodelled, c.Report)
		c.Workloads, err = append(c.Workloads, v), e
	}
	return err
}

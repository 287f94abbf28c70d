package client

// The desired snapshot of one cluster (clients/schedsvc_client/desired_state.py): what a
// replay after a server restart sends back, in chunks the server accepts.

import (
	"sort"

	"google.golang.org/protobuf/proto"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

type named interface {
	proto.Message
	GetName() string
}

type namespacedNamed interface {
	named
	GetNamespace() string
}

func nsKey(namespace, name string) string {
	if namespace == "" {
		namespace = "default"
	}
	return namespace + "/" + name
}

// desiredState is the snapshot this client last pushed or learned.
type desiredState struct {
	nodes      map[string]*pb.Node
	pods       map[string]*pb.Pod // bound or nominated pods, by uid
	namespaces map[string]*pb.Namespace
	pdbs       map[string]*pb.PodDisruptionBudget  // "namespace/name"
	storage    map[string]map[string]proto.Message // by upsert list, then key
}

func newDesiredState() *desiredState {
	s := &desiredState{nodes: map[string]*pb.Node{}, pods: map[string]*pb.Pod{},
		namespaces: map[string]*pb.Namespace{}, pdbs: map[string]*pb.PodDisruptionBudget{},
		storage: map[string]map[string]proto.Message{}}
	for _, l := range storageLists {
		s.storage[l.upsert] = map[string]proto.Message{}
	}
	return s
}

func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *desiredState) copy() *desiredState {
	out := &desiredState{nodes: cloneMap(s.nodes), pods: cloneMap(s.pods),
		namespaces: cloneMap(s.namespaces), pdbs: cloneMap(s.pdbs),
		storage: map[string]map[string]proto.Message{}}
	for k, v := range s.storage {
		out.storage[k] = cloneMap(v)
	}
	return out
}

// storageList is one of UpdateSnapshotRequest's keyed lists (storage objects, PodGroups,
// Workloads), kept by name or "namespace/name".
type storageList struct {
	upsert     string
	upserts    func(*pb.UpdateSnapshotRequest) []proto.Message
	removes    func(*pb.UpdateSnapshotRequest) []string
	add        func(*pb.UpdateSnapshotRequest, proto.Message)
	namespaced bool
}

func msgs[T proto.Message](items []T) []proto.Message {
	out := make([]proto.Message, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

var storageLists = []storageList{
	{"persistent_volumes", func(r *pb.UpdateSnapshotRequest) []proto.Message { return msgs(r.UpsertPersistentVolumes) },
		(*pb.UpdateSnapshotRequest).GetRemovePersistentVolumes,
		func(r *pb.UpdateSnapshotRequest, m proto.Message) {
			r.UpsertPersistentVolumes = append(r.UpsertPersistentVolumes, m.(*pb.PersistentVolume))
		}, false},
	{"persistent_volume_claims", func(r *pb.UpdateSnapshotRequest) []proto.Message { return msgs(r.UpsertPersistentVolumeClaims) },
		(*pb.UpdateSnapshotRequest).GetRemovePersistentVolumeClaims,
		func(r *pb.UpdateSnapshotRequest, m proto.Message) {
			r.UpsertPersistentVolumeClaims = append(r.UpsertPersistentVolumeClaims, m.(*pb.PersistentVolumeClaim))
		}, true},
	{"storage_classes", func(r *pb.UpdateSnapshotRequest) []proto.Message { return msgs(r.UpsertStorageClasses) },
		(*pb.UpdateSnapshotRequest).GetRemoveStorageClasses,
		func(r *pb.UpdateSnapshotRequest, m proto.Message) {
			r.UpsertStorageClasses = append(r.UpsertStorageClasses, m.(*pb.StorageClass))
		}, false},
	{"csi_nodes", func(r *pb.UpdateSnapshotRequest) []proto.Message { return msgs(r.UpsertCsiNodes) },
		(*pb.UpdateSnapshotRequest).GetRemoveCsiNodes,
		func(r *pb.UpdateSnapshotRequest, m proto.Message) {
			r.UpsertCsiNodes = append(r.UpsertCsiNodes, m.(*pb.CSINode))
		}, false},
	{"csi_drivers", func(r *pb.UpdateSnapshotRequest) []proto.Message { return msgs(r.UpsertCsiDrivers) },
		(*pb.UpdateSnapshotRequest).GetRemoveCsiDrivers,
		func(r *pb.UpdateSnapshotRequest, m proto.Message) {
			r.UpsertCsiDrivers = append(r.UpsertCsiDrivers, m.(*pb.CSIDriver))
		}, false},
	{"csi_storage_capacities", func(r *pb.UpdateSnapshotRequest) []proto.Message { return msgs(r.UpsertCsiStorageCapacities) },
		(*pb.UpdateSnapshotRequest).GetRemoveCsiStorageCapacities,
		func(r *pb.UpdateSnapshotRequest, m proto.Message) {
			r.UpsertCsiStorageCapacities = append(r.UpsertCsiStorageCapacities, m.(*pb.CSIStorageCapacity))
		}, true},
	{"volume_attachments", func(r *pb.UpdateSnapshotRequest) []proto.Message { return msgs(r.UpsertVolumeAttachments) },
		(*pb.UpdateSnapshotRequest).GetRemoveVolumeAttachments,
		func(r *pb.UpdateSnapshotRequest, m proto.Message) {
			r.UpsertVolumeAttachments = append(r.UpsertVolumeAttachments, m.(*pb.VolumeAttachment))
		}, false},
	// scheduling.k8s.io/v1beta1 (gang scheduling): kept as the storage lists are
	{"pod_groups", func(r *pb.UpdateSnapshotRequest) []proto.Message { return msgs(r.UpsertPodGroups) },
		(*pb.UpdateSnapshotRequest).GetRemovePodGroups,
		func(r *pb.UpdateSnapshotRequest, m proto.Message) {
			r.UpsertPodGroups = append(r.UpsertPodGroups, m.(*pb.PodGroup))
		}, true},
	{"workloads", func(r *pb.UpdateSnapshotRequest) []proto.Message { return msgs(r.UpsertWorkloads) },
		(*pb.UpdateSnapshotRequest).GetRemoveWorkloads,
		func(r *pb.UpdateSnapshotRequest, m proto.Message) {
			r.UpsertWorkloads = append(r.UpsertWorkloads, m.(*pb.Workload))
		}, true},
}

func storageKey(m proto.Message, namespaced bool) string {
	if namespaced {
		o := m.(namespacedNamed)
		return nsKey(o.GetNamespace(), o.GetName())
	}
	return m.(named).GetName()
}

// apply mirrors the server's update order: replace, remove nodes (and their pods), namespaces,
// nodes, remove pods, upsert pods, budgets, storage.
func (s *desiredState) apply(req *pb.UpdateSnapshotRequest) {
	if req.GetReplace() {
		*s = *newDesiredState()
	}
	gone := map[string]bool{}
	for _, name := range req.GetRemoveNodes() {
		delete(s.nodes, name)
		gone[name] = true
	}
	for uid, p := range s.pods {
		if gone[p.GetNodeName()] {
			delete(s.pods, uid)
		}
	}
	for _, ns := range req.GetUpsertNamespaces() {
		s.namespaces[ns.GetName()] = ns
	}
	for _, n := range req.GetUpsertNodes() {
		s.nodes[n.GetName()] = n
	}
	for _, uid := range req.GetRemovePods() {
		delete(s.pods, uid)
	}
	for _, p := range req.GetUpsertPods() {
		s.pods[p.GetUid()] = p
	}
	for _, key := range req.GetRemovePodDisruptionBudgets() {
		delete(s.pdbs, key)
	}
	for _, b := range req.GetUpsertPodDisruptionBudgets() {
		s.pdbs[nsKey(b.GetNamespace(), b.GetName())] = b
	}
	for _, l := range storageLists {
		objects := s.storage[l.upsert]
		for _, key := range l.removes(req) {
			delete(objects, key)
		}
		for _, o := range l.upserts(req) {
			objects[storageKey(o, l.namespaced)] = o
		}
	}
}

// bind remembers pod as placed on node (no longer nominated anywhere).
func (s *desiredState) bind(pod *pb.Pod, node string) {
	bound := proto.Clone(pod).(*pb.Pod)
	bound.NodeName, bound.NominatedNodeName = node, ""
	s.pods[pod.GetUid()] = bound
}

func sortedValues[V any](m map[string]V) []V {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]V, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// replayChunks is the state as requests of at most chunk objects each, in the order the
// server needs them (a pod's node before the pod); always at least one request.
func (s *desiredState) replayChunks(chunk int) []*pb.UpdateSnapshotRequest {
	var adds []func(*pb.UpdateSnapshotRequest)
	for _, ns := range sortedValues(s.namespaces) {
		adds = append(adds, func(r *pb.UpdateSnapshotRequest) { r.UpsertNamespaces = append(r.UpsertNamespaces, ns) })
	}
	for _, b := range sortedValues(s.pdbs) {
		adds = append(adds, func(r *pb.UpdateSnapshotRequest) {
			r.UpsertPodDisruptionBudgets = append(r.UpsertPodDisruptionBudgets, b)
		})
	}
	for _, l := range storageLists {
		for _, o := range sortedValues(s.storage[l.upsert]) {
			adds = append(adds, func(r *pb.UpdateSnapshotRequest) { l.add(r, o) })
		}
	}
	for _, n := range sortedValues(s.nodes) {
		adds = append(adds, func(r *pb.UpdateSnapshotRequest) { r.UpsertNodes = append(r.UpsertNodes, n) })
	}
	for _, p := range sortedValues(s.pods) {
		adds = append(adds, func(r *pb.UpdateSnapshotRequest) { r.UpsertPods = append(r.UpsertPods, p) })
	}
	chunk = max(1, chunk)
	out := []*pb.UpdateSnapshotRequest{}
	for i := 0; i < max(1, len(adds)); i += chunk {
		req := &pb.UpdateSnapshotRequest{}
		for _, add := range adds[i:min(i+chunk, len(adds))] {
			add(req)
		}
		out = append(out, req)
	}
	return out
}

package kube

// scheduling.k8s.io/v1beta1 PodGroups and Workloads, and a pod's spec.schedulingGroup, for
// gang scheduling (clients/schedsvc_client/kube_pod_groups.py). The fields of the Alpha gates
// schedsvc does not model (a PodGroup's schedulingConstraints, resourceClaims,
// parentCompositePodGroupName, preemptionPolicy; a Workload's compositePodGroupTemplates) are
// refused naming the JSON path, or in the lenient mode dropped and reported.

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

const podGroupAPIVersion = "scheduling.k8s.io/v1beta1"

var whyPodGroupField = map[string]string{
	"schedulingConstraints": "TopologyAwareWorkloadScheduling (Alpha) places a group within " +
		"one topology domain",
	"resourceClaims":              "DRAWorkloadResourceClaims shares ResourceClaims among a group's pods",
	"parentCompositePodGroupName": "CompositePodGroup (Alpha) schedules a hierarchy of groups",
	"preemptionPolicy":            "PodGroupPreemptionPolicy (Alpha) gives the group its own policy",
	"compositePodGroupTemplates":  "CompositePodGroup (Alpha) templates hierarchies of groups",
}

func checkPodGroupAPI(api, path, kind string) error {
	if api != "" && api != podGroupAPIVersion {
		return objErr(join(path, "apiVersion"), "%s of %s is not read: only %s (kube v1.37's gang API; "+
			"v1.35's v1alpha1 Workload is not modelled)", kind, pyRepr(api), podGroupAPIVersion)
	}
	return nil
}

// unmodelledFields applies the policy to the set fields among names, in that order.
func unmodelledFields(set map[string]bool, names []string, path string, p fieldPolicy, who string) error {
	for _, name := range names {
		if set[name] {
			if err := p.unmodelled("spec."+name, whyPodGroupField[name], join(path, name), who); err != nil {
				return err
			}
		}
	}
	return nil
}

// groupSpec is what a PodGroup's spec and a PodGroupTemplate share.
type groupSpec struct {
	policy    schedulingv1beta1.PodGroupSchedulingPolicy
	mode      *schedulingv1beta1.DisruptionMode
	className string
	priority  *int32
}

func schedulingPolicy(p schedulingv1beta1.PodGroupSchedulingPolicy) *pb.PodGroupSchedulingPolicy {
	if p.Basic == nil && p.Gang == nil {
		return nil
	}
	out := &pb.PodGroupSchedulingPolicy{}
	if p.Basic != nil {
		out.Basic = &pb.BasicSchedulingPolicy{}
	}
	if p.Gang != nil {
		out.Gang = &pb.GangSchedulingPolicy{MinCount: p.Gang.MinCount}
	}
	return out
}

func disruptionMode(m *schedulingv1beta1.DisruptionMode) *pb.DisruptionMode {
	if m == nil {
		return nil
	}
	out := &pb.DisruptionMode{} // an empty union is sent: the server says what it lacks
	if m.Single != nil {
		out.Single = &pb.SingleDisruptionMode{}
	}
	if m.All != nil {
		out.All = &pb.AllDisruptionMode{}
	}
	return out
}

// PodGroupFromKube converts a scheduling.k8s.io/v1beta1 PodGroup: spec and status.conditions
// (what kube's pod group cycle reads and writes).
//
// With ignoreUnmodelled an unmodelled field is dropped and counted in report (which it needs).
func PodGroupFromKube(g *schedulingv1beta1.PodGroup, path string, ignoreUnmodelled bool, report *LoadReport) (*pb.PodGroup, error) {
	p := newPolicy(ignoreUnmodelled, report)
	if err := checkPodGroupAPI(g.APIVersion, path, "PodGroup"); err != nil {
		return nil, err
	}
	ns := namespaceOr(g.Namespace)
	sp := join(path, "spec")
	s := &g.Spec
	set := map[string]bool{"schedulingConstraints": s.SchedulingConstraints != nil,
		"resourceClaims":              len(s.ResourceClaims) > 0,
		"parentCompositePodGroupName": deref(s.ParentCompositePodGroupName) != "",
		"preemptionPolicy":            deref(s.PreemptionPolicy) != ""}
	if err := unmodelledFields(set, []string{"schedulingConstraints", "resourceClaims",
		"parentCompositePodGroupName", "preemptionPolicy"}, sp, p, "PodGroup "+ns+"/"+g.Name); err != nil {
		return nil, err
	}
	spec := &pb.PodGroupSpec{SchedulingPolicy: schedulingPolicy(s.SchedulingPolicy),
		DisruptionMode: disruptionMode(s.DisruptionMode), PriorityClassName: s.PriorityClassName,
		Priority: s.Priority}
	if s.WorkloadRef != nil {
		spec.WorkloadRef = &pb.WorkloadReference{WorkloadName: s.WorkloadRef.WorkloadName,
			TemplateName: s.WorkloadRef.TemplateName}
	}
	out := &pb.PodGroup{Name: g.Name, Namespace: ns, Uid: string(g.UID), Generation: g.Generation, Spec: spec}
	for _, c := range g.Status.Conditions {
		if out.Status == nil {
			out.Status = &pb.PodGroupStatus{}
		}
		out.Status.Conditions = append(out.Status.Conditions, &pb.PodGroupCondition{Type: c.Type,
			Status: string(c.Status), Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration})
	}
	return out, nil
}

// WorkloadFromKube converts a scheduling.k8s.io/v1beta1 Workload: its controllerRef and pod
// group templates (kept and validated by the server; no scheduling decision reads it).
func WorkloadFromKube(w *schedulingv1beta1.Workload, path string, ignoreUnmodelled bool, report *LoadReport) (*pb.Workload, error) {
	p := newPolicy(ignoreUnmodelled, report)
	if err := checkPodGroupAPI(w.APIVersion, path, "Workload"); err != nil {
		return nil, err
	}
	ns := namespaceOr(w.Namespace)
	sp, who := join(path, "spec"), "Workload "+ns+"/"+w.Name
	if err := unmodelledFields(map[string]bool{"compositePodGroupTemplates": len(w.Spec.CompositePodGroupTemplates) > 0},
		[]string{"compositePodGroupTemplates"}, sp, p, who); err != nil {
		return nil, err
	}
	out := &pb.Workload{Name: w.Name, Namespace: ns, Uid: string(w.UID)}
	spec := &pb.WorkloadSpec{}
	if ref := w.Spec.ControllerRef; ref != nil {
		spec.ControllerRef = &pb.TypedLocalObjectReference{ApiGroup: ref.APIGroup, Kind: ref.Kind, Name: ref.Name}
	}
	tp := join(sp, "podGroupTemplates")
	for i, t := range w.Spec.PodGroupTemplates {
		at := index(tp, i)
		set := map[string]bool{"schedulingConstraints": t.SchedulingConstraints != nil,
			"resourceClaims": len(t.ResourceClaims) > 0, "preemptionPolicy": deref(t.PreemptionPolicy) != ""}
		if err := unmodelledFields(set, []string{"schedulingConstraints", "resourceClaims", "preemptionPolicy"},
			at, p, who); err != nil {
			return nil, err
		}
		spec.PodGroupTemplates = append(spec.PodGroupTemplates, &pb.PodGroupTemplate{Name: t.Name,
			SchedulingPolicy: schedulingPolicy(t.SchedulingPolicy), DisruptionMode: disruptionMode(t.DisruptionMode),
			PriorityClassName: t.PriorityClassName, Priority: t.Priority})
	}
	if spec.ControllerRef != nil || len(spec.PodGroupTemplates) > 0 {
		out.Spec = spec
	}
	return out, nil
}

// setSchedulingGroup is spec.schedulingGroup.podGroupName (the pod's PodGroup, in its namespace).
func setSchedulingGroup(out *pb.Pod, spec *corev1.PodSpec) {
	if spec.SchedulingGroup != nil {
		out.SchedulingGroup = &pb.PodSchedulingGroup{PodGroupName: deref(spec.SchedulingGroup.PodGroupName)}
	}
}

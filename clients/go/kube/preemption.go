package kube

// What DefaultPreemption reads (clients/schedsvc_client/kube_preemption.py): a pod's
// preemptionPolicy, startTime and whether it is terminating because of a preemption, and
// policy/v1 PodDisruptionBudgets.

import (
	"sort"

	"google.golang.org/protobuf/types/known/timestamppb"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// terminatingByPreemption is kube's podTerminatingByPreemption: a deletionTimestamp and, as
// the first DisruptionTarget condition, status True with reason PreemptionByScheduler.
func terminatingByPreemption(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp == nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue && c.Reason == "PreemptionByScheduler"
		}
	}
	return false
}

func setPreemptionFields(out *pb.Pod, pod *corev1.Pod, path string) error {
	policy := string(deref(pod.Spec.PreemptionPolicy))
	if policy != "" && policy != "PreemptLowerPriority" && policy != "Never" {
		return objErr(join(path, "spec.preemptionPolicy"), "unknown preemption policy %s", pyRepr(policy))
	}
	out.PreemptionPolicy = policy
	if pod.Status.StartTime != nil {
		out.StartTime = timestamppb.New(pod.Status.StartTime.Time)
	}
	out.TerminatingByPreemption = terminatingByPreemption(pod)
	out.Terminating = pod.DeletionTimestamp != nil
	return nil
}

// PDBFromKube converts a policy/v1 PodDisruptionBudget: its selector, status.disruptionsAllowed
// and the names in status.disruptedPods (minAvailable/maxUnavailable are already folded into
// disruptionsAllowed by the disruption controller).
func PDBFromKube(pdb *policyv1.PodDisruptionBudget, path string) (*pb.PodDisruptionBudget, error) {
	if api := pdb.APIVersion; api != "" && api != "policy/v1" {
		return nil, objErr(join(path, "apiVersion"),
			"only policy/v1 PodDisruptionBudgets are read, not %s", pyRepr(api))
	}
	if pdb.Name == "" {
		return nil, objErr(join(path, "metadata.name"), "a PodDisruptionBudget needs a name")
	}
	disrupted := make([]string, 0, len(pdb.Status.DisruptedPods))
	for name := range pdb.Status.DisruptedPods {
		disrupted = append(disrupted, name)
	}
	sort.Strings(disrupted)
	if len(disrupted) == 0 {
		disrupted = nil
	}
	out := &pb.PodDisruptionBudget{Name: pdb.Name, Namespace: namespaceOr(pdb.Namespace),
		DisruptionsAllowed: pdb.Status.DisruptionsAllowed, DisruptedPods: disrupted}
	if pdb.Spec.Selector != nil {
		if err := parseInto(out, map[string]any{"selector": pdb.Spec.Selector}, join(path, "spec")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

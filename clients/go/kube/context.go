package kube

// What other objects add to a pod (clients/schedsvc_client/kube_context.py): its default
// spreading selector (kube's helper.DefaultSelector over the Services and the controller that
// select it) and its priority (the Priority admission plugin, from its PriorityClass).

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// Selecting holds the objects whose selectors make a pod's default spreading selector.
type Selecting struct {
	Services               []*corev1.Service
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	ReplicationControllers []*corev1.ReplicationController
}

func (s *Selecting) empty() bool {
	return s == nil || len(s.Services)+len(s.ReplicaSets)+len(s.StatefulSets)+
		len(s.ReplicationControllers) == 0
}

func namespaceOr(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

func controllerOf(meta *metav1.ObjectMeta) *metav1.OwnerReference {
	for i := range meta.OwnerReferences {
		if c := meta.OwnerReferences[i].Controller; c != nil && *c {
			return &meta.OwnerReferences[i]
		}
	}
	return nil
}

// DefaultSelectorFor is kube's helper.DefaultSelector for PodTopologySpread's default
// constraints: every Service in the pod's namespace whose non-empty selector matches the pod's
// labels contributes its selector, and the pod's controller (a ReplicationController, or an
// apps/v1 ReplicaSet or StatefulSet, found by name in the pod's namespace) contributes its
// selector. nil when nothing contributes. A selector kube cannot parse is skipped.
func DefaultSelectorFor(pod *corev1.Pod, s *Selecting) *pb.LabelSelector {
	if s == nil {
		return nil
	}
	ns := namespaceOr(pod.Namespace)
	labelSet := map[string]string{}
	for _, svc := range s.Services {
		if namespaceOr(svc.Namespace) != ns || len(svc.Spec.Selector) == 0 {
			continue
		}
		if matches(svc.Spec.Selector, pod.Labels) {
			for k, v := range svc.Spec.Selector {
				labelSet[k] = v
			}
		}
	}
	var expressions []*pb.LabelSelectorRequirement
	if owner := controllerOf(&pod.ObjectMeta); owner != nil {
		var sel *metav1.LabelSelector
		found := false
		switch [2]string{owner.APIVersion, owner.Kind} {
		case [2]string{"v1", "ReplicationController"}:
			for _, rc := range s.ReplicationControllers {
				if apiOK(rc.APIVersion, "v1") && namespaceOr(rc.Namespace) == ns && rc.Name == owner.Name {
					for k, v := range rc.Spec.Selector {
						labelSet[k] = v
					}
					break
				}
			}
		case [2]string{"apps/v1", "ReplicaSet"}:
			for _, rs := range s.ReplicaSets {
				if apiOK(rs.APIVersion, "apps/v1") && namespaceOr(rs.Namespace) == ns && rs.Name == owner.Name {
					sel, found = rs.Spec.Selector, true
					break
				}
			}
		case [2]string{"apps/v1", "StatefulSet"}:
			for _, ss := range s.StatefulSets {
				if apiOK(ss.APIVersion, "apps/v1") && namespaceOr(ss.Namespace) == ns && ss.Name == owner.Name {
					sel, found = ss.Spec.Selector, true
					break
				}
			}
		}
		if parsed := workloadSelector(sel); found && parsed != nil {
			for _, k := range sortedKeys(parsed.MatchLabels) {
				v := parsed.MatchLabels[k]
				if cur, ok := labelSet[k]; !ok || cur == v {
					labelSet[k] = v
				} else { // both must hold (and cannot): keep both, as selector.Add does
					expressions = append(expressions,
						&pb.LabelSelectorRequirement{Key: k, Operator: "In", Values: []string{v}})
				}
			}
			expressions = append(expressions, parsed.MatchExpressions...)
		}
	}
	if len(labelSet) == 0 && len(expressions) == 0 {
		return nil
	}
	if len(labelSet) == 0 {
		labelSet = nil
	}
	return &pb.LabelSelector{MatchLabels: labelSet, MatchExpressions: expressions}
}

// apiOK: an object read from JSON must carry the owner's apiVersion, as kube looks the
// controller up by group and kind; one from an informer has no TypeMeta and is of its type.
func apiOK(got, want string) bool { return got == "" || got == want }

func matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// workloadSelector is metav1.LabelSelectorAsSelector for a workload's selector; nil if it is
// nil or kube could not parse it.
func workloadSelector(sel *metav1.LabelSelector) *pb.LabelSelector {
	if sel == nil {
		return nil
	}
	out := &pb.LabelSelector{}
	if err := parseInto(out, map[string]any{"matchLabels": sel.MatchLabels,
		"matchExpressions": sel.MatchExpressions}, ""); err != nil {
		return nil
	}
	for _, r := range out.MatchExpressions {
		switch r.Operator {
		case "In", "NotIn":
			if len(r.Values) == 0 {
				return nil
			}
		case "Exists", "DoesNotExist":
			if len(r.Values) != 0 {
				return nil
			}
		default:
			return nil
		}
	}
	return out
}

// PriorityClasses are PriorityClass values by name, as the Priority admission plugin resolves
// spec.priority; the two system classes every cluster has are always there.
type PriorityClasses struct {
	Values        map[string]int32
	GlobalDefault *int32 // the value of the class marked globalDefault
}

// NewPriorityClasses reads the classes (unnamed ones are skipped).
func NewPriorityClasses(classes []*schedulingv1.PriorityClass) *PriorityClasses {
	out := &PriorityClasses{Values: map[string]int32{
		"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}}
	for _, pc := range classes {
		if pc.Name == "" {
			continue
		}
		out.Values[pc.Name] = pc.Value
		if pc.GlobalDefault {
			if out.GlobalDefault == nil || pc.Value < *out.GlobalDefault {
				v := pc.Value
				out.GlobalDefault = &v
			}
		}
	}
	return out
}

// Resolve is the pod's priority: its class's value, the global default without a class, or
// false for a class the classes do not define.
func (c *PriorityClasses) Resolve(className string) (int32, bool) {
	if c == nil {
		c = NewPriorityClasses(nil)
	}
	if className == "" {
		return deref(c.GlobalDefault), true
	}
	v, ok := c.Values[className]
	return v, ok
}

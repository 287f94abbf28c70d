package kube

// Fields of a pod kube-scheduler acts on and schedsvc does not model
// (clients/schedsvc_client/unmodelled.py): a pod to schedule that uses one would get an answer
// kube would not give. Strict mode (the default) refuses the field, naming its JSON path;
// lenient mode drops it and counts it in a LoadReport, so the difference is visible.

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

const (
	whySchedulingGates = "SchedulingGates keeps the pod out of scheduling until every gate is removed"
	whyResourceClaims  = "DynamicResources allocates the claims' devices from ResourceSlices and filters nodes by them"
	whyDeleting        = "kube-scheduler does not schedule a pod that is being deleted"
	declared           = "kube-scheduler v1.37's NodeDeclaredFeatures filter places the pod only on nodes declaring " +
		"the feature %s in status.declaredFeatures, which we do not model"
	whyStatusResources = "kube scores a pending pod with its status resources (in-place resize) but filters it on " +
		"its spec"
)

var (
	whyRestartAll       = fmt.Sprintf(declared, "RestartAllContainersOnContainerExits")
	whyHostNetworkUsers = fmt.Sprintf(declared, "UserNamespacesHostNetworkSupport")
	whyBindMountOptions = fmt.Sprintf(declared, "VolumeBindMountOptions")
)

// IgnoredField is one unmodelled field dropped in the lenient mode.
type IgnoredField struct {
	Field string // the field, list indexes elided: spec.schedulingGates
	Why   string
	Count int    // occurrences
	Pods  int    // distinct pods
	First string // the JSON path of the first occurrence
}

// LoadReport is what a conversion left out: fields ignored in the lenient mode, Succeeded and
// Failed pods (kube-scheduler's informer filters them out), object kinds nothing reads.
type LoadReport struct {
	Ignored      map[string]*IgnoredField
	TerminalPods int
	UnusedKinds  map[string]int
	podsSeen     map[[2]string]bool
}

// NewLoadReport is an empty report.
func NewLoadReport() *LoadReport {
	return &LoadReport{Ignored: map[string]*IgnoredField{}, UnusedKinds: map[string]int{},
		podsSeen: map[[2]string]bool{}}
}

func (r *LoadReport) ignore(name, why, path, pod string) {
	e := r.Ignored[name]
	if e == nil {
		e = &IgnoredField{Field: name, Why: why, First: path}
		r.Ignored[name] = e
	}
	e.Count++
	if !r.podsSeen[[2]string{name, pod}] {
		r.podsSeen[[2]string{name, pod}] = true
		e.Pods++
	}
}

// Empty reports whether nothing was left out.
func (r *LoadReport) Empty() bool {
	return len(r.Ignored) == 0 && r.TerminalPods == 0 && len(r.UnusedKinds) == 0
}

// Render is the report as the Python client's LoadReport.render() writes it.
func (r *LoadReport) Render() string {
	var lines []string
	for _, k := range sortedKeys(r.Ignored) {
		e := r.Ignored[k]
		lines = append(lines, fmt.Sprintf("ignored %s: %d time(s) in %d pod(s), first at %s (%s)",
			e.Field, e.Count, e.Pods, e.First, e.Why))
	}
	if r.TerminalPods > 0 {
		lines = append(lines, fmt.Sprintf(
			"left out %d Succeeded/Failed pod(s), as kube-scheduler does", r.TerminalPods))
	}
	if len(r.UnusedKinds) > 0 {
		kinds := make([]string, 0, len(r.UnusedKinds))
		for _, k := range sortedKeys(r.UnusedKinds) {
			kinds = append(kinds, fmt.Sprintf("%s (%d)", k, r.UnusedKinds[k]))
		}
		lines = append(lines, "not used: "+strings.Join(kinds, ", "))
	}
	return strings.Join(lines, "\n")
}

// fieldPolicy refuses an unmodelled field (strict) or records it in report (lenient).
type fieldPolicy struct {
	ignoreUnmodelled bool
	report           *LoadReport
}

func newPolicy(ignoreUnmodelled bool, report *LoadReport) fieldPolicy {
	if report == nil {
		report = NewLoadReport()
	}
	return fieldPolicy{ignoreUnmodelled, report}
}

func (p fieldPolicy) unmodelled(name, why, path, pod string) error {
	if !p.ignoreUnmodelled {
		return objErr(path, "not modelled: %s (load with ignore_unmodelled=True to schedule "+
			"without it; the difference is then reported)", why)
	}
	p.report.ignore(name, why, path, pod)
	return nil
}

// auditPendingPod applies the policy to every unmodelled field of a pod to be scheduled.
func auditPendingPod(pod *corev1.Pod, path string, p fieldPolicy, uid string) error {
	if pod.DeletionTimestamp != nil {
		if err := p.unmodelled("metadata.deletionTimestamp", whyDeleting,
			join(path, "metadata.deletionTimestamp"), uid); err != nil {
			return err
		}
	}
	if len(pod.Spec.SchedulingGates) > 0 {
		if err := p.unmodelled("spec.schedulingGates", whySchedulingGates,
			join(path, "spec.schedulingGates"), uid); err != nil {
			return err
		}
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		if err := p.unmodelled("spec.resourceClaims", whyResourceClaims,
			join(path, "spec.resourceClaims"), uid); err != nil {
			return err
		}
	}
	if err := auditDeclaredFeatures(&pod.Spec, path, p, uid); err != nil {
		return err
	}
	for _, list := range []struct {
		key string
		css []corev1.ContainerStatus
	}{{"containerStatuses", pod.Status.ContainerStatuses}, {"initContainerStatuses", pod.Status.InitContainerStatuses}} {
		listPath := join(path, "status."+list.key)
		for i, cs := range list.css {
			present := map[string]bool{"resources": cs.Resources != nil,
				"allocatedResources": cs.AllocatedResources != nil}
			for _, sub := range []string{"resources", "allocatedResources"} {
				if !present[sub] {
					continue
				}
				if err := p.unmodelled(fmt.Sprintf("status.%s[].%s", list.key, sub),
					whyStatusResources, fmt.Sprintf("%s[%d].%s", listPath, i, sub), uid); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// auditContainer is one container's restart rules and mount options.
type auditContainer struct {
	rules  []corev1.ContainerRestartRule
	mounts []corev1.VolumeMount
}

func auditDeclaredFeatures(spec *corev1.PodSpec, path string, p fieldPolicy, uid string) error {
	if spec.HostNetwork && spec.HostUsers != nil && !*spec.HostUsers {
		if err := p.unmodelled("spec.hostUsers",
			whyHostNetworkUsers+" (hostNetwork with hostUsers: false)",
			join(path, "spec.hostUsers"), uid); err != nil {
			return err
		}
	}
	lists := map[string][]auditContainer{}
	for _, c := range spec.Containers {
		lists["containers"] = append(lists["containers"], auditContainer{c.RestartPolicyRules, c.VolumeMounts})
	}
	for _, c := range spec.InitContainers {
		lists["initContainers"] = append(lists["initContainers"], auditContainer{c.RestartPolicyRules, c.VolumeMounts})
	}
	for _, c := range spec.EphemeralContainers {
		lists["ephemeralContainers"] = append(lists["ephemeralContainers"], auditContainer{nil, c.VolumeMounts})
	}
	for _, key := range []string{"containers", "initContainers", "ephemeralContainers"} {
		listPath := join(path, "spec."+key)
		for i, c := range lists[key] {
			at := index(listPath, i)
			for j, rule := range c.rules {
				if rule.Action == "RestartAllContainers" {
					if err := p.unmodelled(
						fmt.Sprintf("spec.%s[].restartPolicyRules[].action: RestartAllContainers", key),
						whyRestartAll, fmt.Sprintf("%s.restartPolicyRules[%d].action", at, j), uid); err != nil {
						return err
					}
				}
			}
			for j, m := range c.mounts {
				if len(m.BindMountOptions) > 0 {
					if err := p.unmodelled(
						fmt.Sprintf("spec.%s[].volumeMounts[].bindMountOptions", key), whyBindMountOptions,
						fmt.Sprintf("%s.volumeMounts[%d].bindMountOptions", at, j), uid); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

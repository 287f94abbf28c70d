package kube

// A v1.Pod (clients/schedsvc_client/kube_pod.py): identity, containers and their requests as
// kube counts them, priority, the pass-through scheduling parts, what preemption reads and
// what a simulated drain reads.

import (
	corev1 "k8s.io/api/core/v1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// PodOptions is what a pod's conversion reads besides the pod.
type PodOptions struct {
	// DefaultSelector is the pod's default spreading selector (DefaultSelectorFor); nil: none.
	DefaultSelector *pb.LabelSelector
	// PriorityClasses resolve a pod without spec.priority; nil: the system classes only.
	PriorityClasses *PriorityClasses
	// IgnoreUnmodelled drops an unmodelled field of a pod to schedule instead of refusing it,
	// counting it in Report (which it then needs).
	IgnoreUnmodelled bool
	Report           *LoadReport
}

// IsTerminal reports a Succeeded or Failed pod: kube-scheduler's informer filters it out.
func IsTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// PodFromKube converts a v1.Pod; path prefixes the JSON path of an error. A pod without
// spec.nodeName is one to schedule: an unmodelled field is refused, or dropped and reported
// with IgnoreUnmodelled. Without metadata.uid the uid is "namespace/name".
func PodFromKube(pod *corev1.Pod, path string, opts PodOptions) (*pb.Pod, error) {
	name, namespace, uid, err := identity(pod, path)
	if err != nil {
		return nil, err
	}
	nodeName := pod.Spec.NodeName
	policy := newPolicy(opts.IgnoreUnmodelled, opts.Report)
	if nodeName == "" {
		if err := auditPendingPod(pod, path, policy, uid); err != nil {
			return nil, err
		}
	}
	hostNetwork := pod.Spec.HostNetwork
	containers, err := convertContainers(pod.Spec.Containers, join(path, "spec.containers"), false, hostNetwork)
	if err != nil {
		return nil, err
	}
	inits, err := convertContainers(pod.Spec.InitContainers, join(path, "spec.initContainers"), true, hostNetwork)
	if err != nil {
		return nil, err
	}
	if nodeName != "" {
		if err := applyResize(containers, inits, pod.Status, join(path, "status")); err != nil {
			return nil, err
		}
	}
	out := &pb.Pod{Uid: uid, Name: name, Namespace: namespace, Labels: copyMap(pod.Labels),
		SchedulerName: pod.Spec.SchedulerName, Containers: containers, InitContainers: inits,
		NodeSelector: copyMap(pod.Spec.NodeSelector), NodeName: nodeName,
		NominatedNodeName: pod.Status.NominatedNodeName}
	if out.Priority, err = priority(pod, path, policy, opts.PriorityClasses, uid); err != nil {
		return nil, err
	}
	if out.Overhead, err = quantities(pod.Spec.Overhead, join(path, "spec.overhead")); err != nil {
		return nil, err
	}
	if pod.Spec.Resources != nil {
		requests, err := podLevelRequests(pod.Spec.Resources, path, containers, inits)
		if err != nil {
			return nil, err
		}
		if len(requests) > 0 {
			out.Resources = &pb.ResourceRequirements{Requests: requests}
		}
	}
	if out.Volumes, err = volumesFromKube(pod.Spec.Volumes, join(path, "spec.volumes")); err != nil {
		return nil, err
	}
	if err := passThrough(out, &pod.Spec, join(path, "spec")); err != nil {
		return nil, err
	}
	if err := setPreemptionFields(out, pod, path); err != nil {
		return nil, err
	}
	setDisruption(out, &pod.ObjectMeta)
	setSchedulingGroup(out, &pod.Spec)
	if opts.DefaultSelector != nil {
		out.DefaultSelector = opts.DefaultSelector
	}
	return out, nil
}

func passThrough(out *pb.Pod, spec *corev1.PodSpec, path string) error {
	passed := map[string]any{}
	if spec.Affinity != nil {
		passed["affinity"] = spec.Affinity
	}
	if spec.Tolerations != nil {
		passed["tolerations"] = spec.Tolerations
	}
	if spec.TopologySpreadConstraints != nil {
		passed["topologySpreadConstraints"] = spec.TopologySpreadConstraints
	}
	if len(passed) == 0 {
		return nil
	}
	return parseInto(out, passed, path)
}

func identity(pod *corev1.Pod, path string) (name, namespace, uid string, err error) {
	name, namespace, uid = pod.Name, namespaceOr(pod.Namespace), string(pod.UID)
	if uid == "" {
		if name == "" {
			return "", "", "", objErr(join(path, "metadata.name"), "a pod needs a uid or a name")
		}
		uid = namespace + "/" + name
	}
	return name, namespace, uid, nil
}

func convertContainers(cs []corev1.Container, listPath string, init, hostNetwork bool) ([]*pb.Container, error) {
	out := make([]*pb.Container, 0, len(cs))
	for i := range cs {
		c, err := convertContainer(&cs[i], index(listPath, i), init, hostNetwork)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func convertContainer(c *corev1.Container, path string, init, hostNetwork bool) (*pb.Container, error) {
	policy := string(deref(c.RestartPolicy))
	if policy != "" && (!init || policy != "Always") {
		return nil, objErr(join(path, "restartPolicy"),
			"only init containers may set it, and only to Always (a sidecar)")
	}
	requests, err := containerRequests(c.Resources, path)
	if err != nil {
		return nil, err
	}
	out := &pb.Container{Name: c.Name, Image: c.Image, Requests: requests, RestartPolicy: policy}
	portsPath := join(path, "ports")
	for i, p := range c.Ports {
		at := index(portsPath, i)
		for _, f := range []struct {
			key string
			v   int32
		}{{"containerPort", p.ContainerPort}, {"hostPort", p.HostPort}} {
			if f.v < 0 || f.v > 65535 {
				return nil, objErr(join(at, f.key), "%d is out of range [0, 65535]", f.v)
			}
		}
		hostPort := p.HostPort
		if hostNetwork && hostPort == 0 { // SetDefaults_Pod: hostNetwork ports are host ports
			hostPort = p.ContainerPort
		}
		out.Ports = append(out.Ports, &pb.ContainerPort{ContainerPort: p.ContainerPort,
			HostPort: hostPort, Protocol: string(p.Protocol), HostIp: p.HostIP})
	}
	return out, nil
}

// applyResize counts a bound pod's containers' resize status as kube does (app containers and
// sidecars; a plain init container's status is not consulted).
func applyResize(containers, inits []*pb.Container, status corev1.PodStatus, path string) error {
	statuses, err := containerStatuses(status, path)
	if err != nil || len(statuses) == 0 {
		return err
	}
	infeasible := resizeInfeasible(status)
	for _, c := range append(append([]*pb.Container(nil), containers...), inits...) {
		if c.RestartPolicy != "Always" && containsContainer(inits, c) {
			continue
		}
		var st *containerStatus
		if s, ok := statuses[c.Name]; ok {
			st = &s
		}
		c.Requests = resizedRequests(c.Requests, st, infeasible)
	}
	return nil
}

func containsContainer(list []*pb.Container, c *pb.Container) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

// priority is spec.priority, or what the Priority admission plugin would set from the class.
func priority(pod *corev1.Pod, path string, p fieldPolicy, classes *PriorityClasses, uid string) (int32, error) {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority, nil
	}
	className := pod.Spec.PriorityClassName
	if v, ok := classes.Resolve(className); ok {
		return v, nil
	}
	if pod.Spec.NodeName == "" { // a bound pod's priority matters only to preemption
		if err := p.unmodelled("spec.priorityClassName",
			"the PriorityClass "+pyRepr(className)+" is not in the input and spec.priority is unset; "+
				"priority decides which nominated pods count for this pod",
			join(path, "spec.priorityClassName"), uid); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

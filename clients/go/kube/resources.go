package kube

// A pod's requests as kube-scheduler counts them (clients/schedsvc_client/kube_resources.py):
// what the API server adds when it stores a pod (SetDefaults_Pod: a limit stands in for a
// missing request; with pod-level limits, a missing pod-level request is the containers'
// aggregate for cpu and memory, else the limit), and for a pod on a node, an in-place resize
// in progress: max(spec, status.resources.requests, status.allocatedResources) per container
// (only the status values while the resize is Infeasible).

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// quantityText is a quantity as the contract carries it; a negative one is refused.
func quantityText(q resource.Quantity, path string) (string, error) {
	text := q.String()
	if q.Sign() < 0 {
		return "", objErr(path, "negative quantity %s", pyRepr(text))
	}
	return text, nil
}

// quantities converts a ResourceList (requests, allocatable, ...), names in sorted order.
func quantities(list corev1.ResourceList, path string) (map[string]string, error) {
	if len(list) == 0 {
		return map[string]string{}, nil
	}
	out := make(map[string]string, len(list))
	for _, k := range sortedKeys(list) {
		if k == "" {
			return nil, objErr(path, "bad resource name %s", pyRepr(k))
		}
		text, err := quantityText(list[corev1.ResourceName(k)], join(path, k))
		if err != nil {
			return nil, err
		}
		out[k] = text
	}
	return out, nil
}

// containerRequests is resources.requests, a limit standing in for a missing request.
func containerRequests(res corev1.ResourceRequirements, path string) (map[string]string, error) {
	requests, err := quantities(res.Requests, join(path, "resources.requests"))
	if err != nil {
		return nil, err
	}
	limits, err := quantities(res.Limits, join(path, "resources.limits"))
	if err != nil {
		return nil, err
	}
	for k, v := range limits {
		if _, ok := requests[k]; !ok {
			requests[k] = v
		}
	}
	return requests, nil
}

func isSupportedPodLevelResource(name string) bool {
	return name == "cpu" || name == "memory" || strings.HasPrefix(name, "hugepages-")
}

// podLevelRequests is spec.resources.requests as the API server stores them
// (defaultPodRequests).
func podLevelRequests(
	res *corev1.ResourceRequirements, path string, containers, inits []*pb.Container,
) (map[string]string, error) {
	resPath := join(path, "spec.resources")
	requests, err := quantities(res.Requests, join(resPath, "requests"))
	if err != nil {
		return nil, err
	}
	limits, err := quantities(res.Limits, join(resPath, "limits"))
	if err != nil {
		return nil, err
	}
	for _, which := range []struct {
		name string
		m    map[string]string
	}{{"requests", requests}, {"limits", limits}} {
		for _, k := range sortedKeys(which.m) {
			if !isSupportedPodLevelResource(k) {
				return nil, objErr(join(resPath, which.name+"."+k),
					"not a supported pod-level resource (cpu, memory, hugepages-*): "+
						"the API server refuses it")
			}
		}
	}
	if len(limits) > 0 {
		aggregate := aggregateRequests(containers, inits)
		if v, ok := aggregate["cpu"]; ok {
			if _, set := requests["cpu"]; !set {
				requests["cpu"] = strconv.FormatInt(v, 10) + "m"
			}
		}
		if v, ok := aggregate["memory"]; ok {
			if _, set := requests["memory"]; !set {
				requests["memory"] = strconv.FormatInt(v, 10)
			}
		}
		for k, v := range limits {
			if _, ok := requests[k]; !ok {
				requests[k] = v
			}
		}
	}
	return requests, nil
}

// canonical is a request in the engine's units: millicores for cpu, else the value, rounded up.
func canonical(name, text string) int64 {
	q := resource.MustParse(text)
	if name == "cpu" {
		return q.MilliValue()
	}
	return q.Value()
}

func addInto(acc, req map[string]int64) {
	for k, v := range req {
		acc[k] += v
	}
}

func maxInto(acc, req map[string]int64) {
	for k, v := range req {
		if cur, ok := acc[k]; !ok || v > cur {
			acc[k] = v
		}
	}
}

// aggregateRequests is kube's PodRequests over the containers alone (sidecars included), the
// formula of the service's resourcehelper.pod_requests.
func aggregateRequests(containers, inits []*pb.Container) map[string]int64 {
	reqs := func(c *pb.Container) map[string]int64 {
		out := make(map[string]int64, len(c.GetRequests()))
		for k, v := range c.GetRequests() {
			out[k] = canonical(k, v)
		}
		return out
	}
	total := map[string]int64{}
	for _, c := range containers {
		addInto(total, reqs(c))
	}
	if len(inits) > 0 {
		sidecars, peak := map[string]int64{}, map[string]int64{}
		for _, c := range inits {
			req := reqs(c)
			if c.GetRestartPolicy() == "Always" {
				addInto(total, req)
				addInto(sidecars, req)
				maxInto(peak, sidecars)
			} else {
				step := map[string]int64{}
				addInto(step, req)
				addInto(step, sidecars)
				maxInto(peak, step)
			}
		}
		maxInto(total, peak)
	}
	return total
}

// containerStatus is what a resize reads of one container's status.
type containerStatus struct {
	hasResources bool
	actual       map[string]string
	allocated    map[string]string // nil: not reported
}

func containerStatuses(status corev1.PodStatus, path string) (map[string]containerStatus, error) {
	out := map[string]containerStatus{}
	for _, list := range []struct {
		key string
		css []corev1.ContainerStatus
	}{{"containerStatuses", status.ContainerStatuses}, {"initContainerStatuses", status.InitContainerStatuses}} {
		for i, cs := range list.css {
			at := index(join(path, list.key), i)
			st := containerStatus{hasResources: cs.Resources != nil, actual: map[string]string{}}
			var err error
			if cs.Resources != nil {
				if st.actual, err = quantities(cs.Resources.Requests, join(at, "resources.requests")); err != nil {
					return nil, err
				}
			}
			if cs.AllocatedResources != nil {
				if st.allocated, err = quantities(cs.AllocatedResources, join(at, "allocatedResources")); err != nil {
					return nil, err
				}
			}
			out[cs.Name] = st
		}
	}
	return out, nil
}

// resizeInfeasible is IsPodResizeInfeasible: a PodResizePending condition, reason Infeasible.
func resizeInfeasible(status corev1.PodStatus) bool {
	for _, c := range status.Conditions {
		if c.Type == "PodResizePending" {
			return c.Reason == "Infeasible"
		}
	}
	return false
}

func maxQuantityInto(acc, other map[string]string) {
	for k, v := range other {
		cur, ok := acc[k]
		if !ok {
			acc[k] = v
			continue
		}
		nv, cv := resource.MustParse(v), resource.MustParse(cur)
		if nv.Cmp(cv) > 0 {
			acc[k] = v
		}
	}
}

// resizedRequests is determineContainerReqs for a container of a pod on a node.
func resizedRequests(spec map[string]string, st *containerStatus, infeasible bool) map[string]string {
	if st == nil || !st.hasResources {
		return spec
	}
	out := map[string]string{}
	if !infeasible {
		for k, v := range spec {
			out[k] = v
		}
	}
	maxQuantityInto(out, st.actual)
	maxQuantityInto(out, st.allocated)
	return out
}

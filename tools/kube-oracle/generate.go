package main

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// genOptions describes the in-process bench workload of `sequence --generate`.
type genOptions struct {
	kind           string
	nodes, pods    int
	deploymentSize int
	// deployments > 0: that many Deployments scaling up in turns, runs of runLength pods
	// each (schedsvc's deployments workload), instead of consecutive ReplicaSets
	deployments, runLength   int
	nodeCPU, nodeMemory      string
	nodePods, podCPU, podMem string
}

var zones = []string{"zone-a", "zone-b", "zone-c"}

// generate builds the bench workload: nodes of 32 CPU / 128Gi / 110 pods in 3 zones (or
// --node-cpu/--node-memory/--node-pods), and
//   - plain: pods requesting 100m / 128Mi (or --pod-cpu/--pod-memory);
//   - deployment: the same pods, owned by ReplicaSets of deploymentSize pods each, every
//     ReplicaSet with a Service selecting its pods, so PodTopologySpread's system default
//     constraints (hostname and zone) apply;
//   - one-per-node: the same pods with a required pod anti-affinity on
//     kubernetes.io/hostname against their own label, so at most one lands per node.
func generate(o genOptions) (*Case, error) {
	if o.nodes < 0 || o.pods < 0 {
		return nil, fmt.Errorf("--nodes and --pods must be >= 0")
	}
	for _, d := range []struct {
		field *string
		def   string
	}{
		{&o.nodeCPU, "32"}, {&o.nodeMemory, "128Gi"}, {&o.nodePods, "110"}, {&o.podCPU, "100m"}, {&o.podMem, "128Mi"},
	} {
		if *d.field == "" {
			*d.field = d.def
		}
	}
	for _, q := range []string{o.nodeCPU, o.nodeMemory, o.nodePods, o.podCPU, o.podMem} {
		if _, err := resource.ParseQuantity(q); err != nil {
			return nil, fmt.Errorf("--generate: quantity %q: %v", q, err)
		}
	}
	c := &Case{ID: fmt.Sprintf("generate-%s-%dn-%dp", o.kind, o.nodes, o.pods)}
	for i := 0; i < o.nodes; i++ {
		name := fmt.Sprintf("node-%d", i)
		alloc := v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(o.nodeCPU),
			v1.ResourceMemory: resource.MustParse(o.nodeMemory),
			v1.ResourcePods:   resource.MustParse(o.nodePods),
		}
		c.Nodes = append(c.Nodes, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{
				v1.LabelHostname:     name,
				v1.LabelTopologyZone: zones[i%len(zones)],
			}},
			Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc,
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		})
	}
	base := func(name string, labels map[string]string) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-" + name), Labels: labels},
			Spec: v1.PodSpec{
				SchedulerName: v1.DefaultSchedulerName,
				Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
						v1.ResourceCPU:    resource.MustParse(o.podCPU),
						v1.ResourceMemory: resource.MustParse(o.podMem),
					}}}},
			},
		}
	}
	switch o.kind {
	case "plain":
		for i := 0; i < o.pods; i++ {
			c.PodsToSchedule = append(c.PodsToSchedule, base(fmt.Sprintf("pod-%d", i), map[string]string{"app": "plain"}))
		}
	case "one-per-node":
		for i := 0; i < o.pods; i++ {
			p := base(fmt.Sprintf("pod-%d", i), map[string]string{"app": "one-per-node"})
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "one-per-node"}},
					TopologyKey:   v1.LabelHostname,
				}},
			}}
			c.PodsToSchedule = append(c.PodsToSchedule, p)
		}
	case "deployment":
		if o.deployments > 0 {
			return interleaved(c, o, base)
		}
		if o.deploymentSize <= 0 {
			return nil, fmt.Errorf("--deployment-size must be > 0")
		}
		var objs []runtime.Object
		for start := 0; start < o.pods; start += o.deploymentSize {
			run := start / o.deploymentSize
			app := fmt.Sprintf("d%d", run)
			rs, svc := deployment(app)
			rs.Spec.Replicas = ptr.To(int32(min(o.deploymentSize, o.pods-start)))
			objs = append(objs, rs, svc)
			for i := start; i < min(start+o.deploymentSize, o.pods); i++ {
				p := base(fmt.Sprintf("%s-abc-%d", app, i), map[string]string{"app": app, "pod-template-hash": "abc"})
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name,
					UID: rs.UID, Controller: ptr.To(true)}}
				c.PodsToSchedule = append(c.PodsToSchedule, p)
			}
		}
		c.Objects = objs
	default:
		return nil, fmt.Errorf("--generate %q: want plain, deployment or one-per-node", o.kind)
	}
	return c, nil
}

// interleaved: `deployments` Deployments (a ReplicaSet and a Service each) whose pods come in
// turns, runs of runLength pods: pod i belongs to Deployment (i / runLength) % deployments.
func interleaved(c *Case, o genOptions, base func(string, map[string]string) *v1.Pod) (*Case, error) {
	if o.runLength <= 0 {
		return nil, fmt.Errorf("--run-length must be > 0")
	}
	var rss []*appsv1.ReplicaSet
	for d := 0; d < o.deployments; d++ {
		rs, svc := deployment(fmt.Sprintf("web-%d", d))
		rss = append(rss, rs)
		c.Objects = append(c.Objects, rs, svc)
	}
	for i := 0; i < o.pods; i++ {
		rs := rss[(i/o.runLength)%o.deployments]
		p := base(fmt.Sprintf("%s-%d", rs.Name, i), map[string]string{"app": rs.Labels["app"], "pod-template-hash": "abc"})
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name,
			UID: rs.UID, Controller: ptr.To(true)}}
		c.PodsToSchedule = append(c.PodsToSchedule, p)
	}
	return c, nil
}

// deployment is what stands behind a Deployment's pods: its ReplicaSet (pod-template-hash
// "abc") and a Service selecting app=`app`, so PodTopologySpread's system defaults apply.
func deployment(app string) (*appsv1.ReplicaSet, *v1.Service) {
	labels := map[string]string{"app": app, "pod-template-hash": "abc"}
	rs := &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: app + "-abc", Namespace: metav1.NamespaceDefault, UID: types.UID("uid-rs-" + app), Labels: labels},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
		},
	}
	svc := &v1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-svc-" + app)},
		Spec:       v1.ServiceSpec{Selector: map[string]string{"app": app}, Ports: []v1.ServicePort{{Port: 80}}},
	}
	return rs, svc
}

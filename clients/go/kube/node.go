package kube

import (
	corev1 "k8s.io/api/core/v1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// NodeFromKube converts a v1.Node. Allocatable falls back to capacity, as the API server
// defaults it.
func NodeFromKube(node *corev1.Node, path string) (*pb.Node, error) {
	if node.Name == "" {
		return nil, objErr(join(path, "metadata.name"), "a node needs a name")
	}
	allocKey, alloc := "allocatable", node.Status.Allocatable
	if alloc == nil {
		allocKey, alloc = "capacity", node.Status.Capacity
	}
	allocatable, err := quantities(alloc, join(path, "status."+allocKey))
	if err != nil {
		return nil, err
	}
	out := &pb.Node{Name: node.Name, Labels: copyMap(node.Labels), Allocatable: allocatable,
		Unschedulable: node.Spec.Unschedulable}
	if node.Spec.Taints != nil {
		if err := parseInto(out, map[string]any{"taints": node.Spec.Taints}, join(path, "spec")); err != nil {
			return nil, err
		}
	}
	if node.Status.Images != nil {
		if err := parseInto(out, map[string]any{"images": node.Status.Images}, join(path, "status")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NamespaceFromKube converts a v1.Namespace: its labels feed pod affinity's namespaceSelector.
func NamespaceFromKube(ns *corev1.Namespace, path string) (*pb.Namespace, error) {
	if ns.Name == "" {
		return nil, objErr(join(path, "metadata.name"), "a namespace needs a name")
	}
	return &pb.Namespace{Name: ns.Name, Labels: copyMap(ns.Labels)}, nil
}

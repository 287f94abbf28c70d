package kube

// Kubernetes objects out of `kubectl get -o json` output (clients/schedsvc_client/kube_files.py,
// JSON only): lists unwrapped (`kind: List`, NodeList, PodList, plain arrays), each object
// decoded into its client-go type, with the JSON path an error should name.

import (
	"bytes"
	"encoding/json"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
)

// Item is one object to convert: its kind, the JSON path errors name (`items[3]`), and the
// client-go object (*corev1.Pod, ...), or nil for a kind nothing reads.
type Item struct {
	Kind   string
	Path   string
	Object any
}

// newObject is the client-go type of each kind the conversion reads.
var newObject = map[string]func() any{
	"Node": func() any { return &corev1.Node{} }, "Pod": func() any { return &corev1.Pod{} },
	"Namespace":             func() any { return &corev1.Namespace{} },
	"Service":               func() any { return &corev1.Service{} },
	"ReplicationController": func() any { return &corev1.ReplicationController{} },
	"ReplicaSet":            func() any { return &appsv1.ReplicaSet{} },
	"StatefulSet":           func() any { return &appsv1.StatefulSet{} },
	"PriorityClass":         func() any { return &schedulingv1.PriorityClass{} },
	"PodDisruptionBudget":   func() any { return &policyv1.PodDisruptionBudget{} },
	"PersistentVolume":      func() any { return &corev1.PersistentVolume{} },
	"PersistentVolumeClaim": func() any { return &corev1.PersistentVolumeClaim{} },
	"StorageClass":          func() any { return &storagev1.StorageClass{} },
	"CSINode":               func() any { return &storagev1.CSINode{} },
	"CSIDriver":             func() any { return &storagev1.CSIDriver{} },
	"CSIStorageCapacity":    func() any { return &storagev1.CSIStorageCapacity{} },
	"VolumeAttachment":      func() any { return &storagev1.VolumeAttachment{} },
	"PodGroup":              func() any { return &schedulingv1beta1.PodGroup{} },
	"Workload":              func() any { return &schedulingv1beta1.Workload{} },
}

// DecodeList reads JSON text holding one object, a list or an array of them.
func DecodeList(data []byte) ([]Item, error) {
	var out []Item
	if err := flatten(json.RawMessage(data), "", "", &out); err != nil {
		return nil, err
	}
	return out, nil
}

func flatten(raw json.RawMessage, path, kindHint string, out *[]Item) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		return nil
	case raw[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return objErr(path, "%v", err)
		}
		for i, item := range items {
			if err := flatten(item, index(path, i), kindHint, out); err != nil {
				return err
			}
		}
		return nil
	case raw[0] != '{':
		return objErr(path, "expected a Kubernetes object")
	}
	var head struct {
		Kind  *string          `json:"kind"`
		Items *json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return objErr(path, "%v", err)
	}
	kind := kindHint
	if head.Kind != nil {
		kind = *head.Kind
	}
	if head.Items != nil && (kind == "" || strings.HasSuffix(kind, "List")) {
		itemKind := ""
		if kind != "" && kind != "List" {
			itemKind = strings.TrimSuffix(kind, "List")
		}
		var items []json.RawMessage
		if err := json.Unmarshal(*head.Items, &items); err != nil {
			return objErr(join(path, "items"), "expected a list")
		}
		for i, item := range items {
			if err := flatten(item, index(join(path, "items"), i), itemKind, out); err != nil {
				return err
			}
		}
		return nil
	}
	if kind == "" {
		return objErr(join(path, "kind"), "missing kind")
	}
	item := Item{Kind: kind, Path: path}
	if mk, ok := newObject[kind]; ok {
		item.Object = mk()
		if err := json.Unmarshal(raw, item.Object); err != nil {
			return objErr(path, "not a %s: %v", kind, err)
		}
	}
	*out = append(*out, item)
	return nil
}

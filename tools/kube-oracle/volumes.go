package main

import (
	"fmt"
	"reflect"
	"sort"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
)

// The per-claim bindings VolumeBinding's Reserve assumes for the chosen node. Kube keeps them
// in its unexported cycle-state data (stateData.podVolumesByNode) and in its assume caches; the
// oracle runs the profile's Reserve point on each top-scoring node, reads the decision Reserve
// assumed from the cycle state (by reflection: the field is unexported, its type is not), then
// runs Unreserve so the next node starts from the same caches.

// unexportedField returns the value of a struct's unexported field as a normal value.
func unexportedField(v reflect.Value, name string) reflect.Value {
	f := v.FieldByName(name)
	if !f.IsValid() {
		return f
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// podVolumesFor reads VolumeBinding's decision for node from the cycle state, or nil when the
// plugin holds none (the pod has no claims to bind, or VolumeBinding is not in the profile).
func podVolumesFor(state fwk.CycleState, node string) (*volumebinding.PodVolumes, error) {
	data, err := state.Read(fwk.StateKey(volumebinding.Name))
	if err != nil {
		return nil, nil //nolint:nilerr // no state: the plugin did not run PreFilter
	}
	rv := reflect.ValueOf(data)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("VolumeBinding state is a %T", data)
	}
	byNode := unexportedField(rv.Elem(), "podVolumesByNode")
	if !byNode.IsValid() {
		return nil, fmt.Errorf("VolumeBinding state %T has no podVolumesByNode", data)
	}
	m, ok := byNode.Interface().(map[string]*volumebinding.PodVolumes)
	if !ok {
		return nil, fmt.Errorf("VolumeBinding podVolumesByNode is a %s", byNode.Type())
	}
	return m[node], nil
}

// bindingsOut lists a node's decision, sorted by claim.
func bindingsOut(pv *volumebinding.PodVolumes, node string) ([]VolumeBindingOut, error) {
	var out []VolumeBindingOut
	for _, b := range pv.StaticBindings {
		bv := reflect.ValueOf(b).Elem()
		pvc, ok1 := unexportedField(bv, "pvc").Interface().(*v1.PersistentVolumeClaim)
		vol, ok2 := unexportedField(bv, "pv").Interface().(*v1.PersistentVolume)
		if !ok1 || !ok2 || pvc == nil || vol == nil {
			return nil, fmt.Errorf("VolumeBinding BindingInfo without pvc/pv")
		}
		out = append(out, VolumeBindingOut{Claim: pvc.Namespace + "/" + pvc.Name, VolumeName: vol.Name})
	}
	for _, d := range pv.DynamicProvisions {
		out = append(out, VolumeBindingOut{Claim: d.PVC.Namespace + "/" + d.PVC.Name, Provisioned: true, SelectedNode: node})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Claim < out[j].Claim })
	return out, nil
}

// reserveVolumes runs the Reserve point on each of exp.MaxNodes and records the bindings;
// a Reserve failure is kube's cycle error on that node (recorded, first one in node order).
func (e *caseEnv) reserveVolumes(state *framework.CycleState, pod *v1.Pod, exp *Expected) error {
	for _, node := range exp.MaxNodes {
		st := e.fw.RunReservePluginsReserve(e.ctx, state, pod, node)
		if !st.IsSuccess() {
			if exp.Error == nil {
				exp.Error = &ErrorOut{Stage: "Reserve", Node: node, Plugin: st.Plugin(), Message: st.AsError().Error()}
			}
			e.fw.RunReservePluginsUnreserve(e.ctx, state, pod, node)
			continue
		}
		pv, err := podVolumesFor(state, node)
		if err == nil && pv != nil {
			var b []VolumeBindingOut
			if b, err = bindingsOut(pv, node); err == nil && len(b) > 0 {
				if exp.VolumeBindingsByNode == nil {
					exp.VolumeBindingsByNode = map[string][]VolumeBindingOut{}
				}
				exp.VolumeBindingsByNode[node] = b
			}
		}
		e.fw.RunReservePluginsUnreserve(e.ctx, state, pod, node)
		if err != nil {
			return err
		}
	}
	if len(exp.MaxNodes) == 1 {
		exp.VolumeBindings = exp.VolumeBindingsByNode[exp.MaxNodes[0]]
	}
	return nil
}

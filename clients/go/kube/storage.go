package kube

// Storage objects (clients/schedsvc_client/kube_storage.py): the fields kube's volume plugins
// read, metadata and spec side by side as the contract has them.

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// pvSpecKeys are a PersistentVolume's spec keys that are not its source.
var pvSpecKeys = setOf("capacity", "accessModes", "claimRef", "persistentVolumeReclaimPolicy",
	"storageClassName", "mountOptions", "volumeMode", "nodeAffinity", "volumeAttributesClassName")

// pvOtherSources are PersistentVolumeSource members no plugin reads beyond "not CSI".
var pvOtherSources = setOf("hostPath", "glusterfs", "nfs", "cephfs", "fc", "flocker",
	"flexVolume", "quobyte", "photonPersistentDisk", "scaleIO", "local", "storageos")

func named(name, path, kind string) error {
	if name == "" {
		return objErr(join(path, "metadata.name"), "a %s needs a name", kind)
	}
	return nil
}

func pvSource(out *pb.PersistentVolume, spec *corev1.PersistentVolumeSpec, path string) error {
	sources, values := setSources(spec.PersistentVolumeSource, pvSpecKeys)
	if len(sources) != 1 {
		return objErr(join(path, "spec"), "a PersistentVolume has exactly one source, not %s", pyList(sources))
	}
	kind := sources[0]
	field, modelled := modelledSources[kind]
	if field == "persistent_volume_claim" || field == "ephemeral" || (!modelled && !pvOtherSources[kind]) {
		return objErr(join(path, "spec."+kind), "unknown volume source %s", pyRepr(kind))
	}
	if !modelled {
		out.Source = &pb.PersistentVolume_Other{Other: kind}
		return nil
	}
	if err := parseInto(out, map[string]any{kind: values[kind]}, join(path, "spec")); err != nil {
		return err
	}
	setEmptySource(out, field)
	return nil
}

// PVFromKube converts a v1.PersistentVolume.
func PVFromKube(pv *corev1.PersistentVolume, path string) (*pb.PersistentVolume, error) {
	if err := named(pv.Name, path, "PersistentVolume"); err != nil {
		return nil, err
	}
	capacity, err := quantities(pv.Spec.Capacity, join(path, "spec.capacity"))
	if err != nil {
		return nil, err
	}
	out := &pb.PersistentVolume{Name: pv.Name, Labels: copyMap(pv.Labels),
		Annotations: copyMap(pv.Annotations), StorageClassName: pv.Spec.StorageClassName,
		Capacity: capacity, VolumeMode: string(deref(pv.Spec.VolumeMode)),
		Phase: string(pv.Status.Phase), Deleting: pv.DeletionTimestamp != nil}
	passed := map[string]any{}
	if pv.Spec.AccessModes != nil {
		passed["accessModes"] = pv.Spec.AccessModes
	}
	if pv.Spec.NodeAffinity != nil {
		passed["nodeAffinity"] = pv.Spec.NodeAffinity
	}
	if pv.Spec.ClaimRef != nil {
		passed["claimRef"] = pv.Spec.ClaimRef
	}
	if len(passed) > 0 {
		if err := parseInto(out, passed, join(path, "spec")); err != nil {
			return nil, err
		}
	}
	out.VolumeAttributesClassName = pv.Spec.VolumeAttributesClassName
	if err := pvSource(out, &pv.Spec, path); err != nil {
		return nil, err
	}
	return out, nil
}

// PVCFromKube converts a v1.PersistentVolumeClaim.
func PVCFromKube(pvc *corev1.PersistentVolumeClaim, path string) (*pb.PersistentVolumeClaim, error) {
	if err := named(pvc.Name, path, "PersistentVolumeClaim"); err != nil {
		return nil, err
	}
	out := &pb.PersistentVolumeClaim{Name: pvc.Name, Namespace: pvc.Namespace, Uid: string(pvc.UID),
		Annotations: copyMap(pvc.Annotations), Phase: string(pvc.Status.Phase),
		Deleting: pvc.DeletionTimestamp != nil, ControllerUid: controllerField(&pvc.ObjectMeta, "uid")}
	if err := claimSpecInto(out, &pvc.Spec, join(path, "spec")); err != nil {
		return nil, err
	}
	return out, nil
}

// StorageClassFromKube converts a storage.k8s.io/v1 StorageClass.
func StorageClassFromKube(sc *storagev1.StorageClass, path string) (*pb.StorageClass, error) {
	if err := named(sc.Name, path, "StorageClass"); err != nil {
		return nil, err
	}
	out := &pb.StorageClass{Name: sc.Name, Provisioner: sc.Provisioner,
		VolumeBindingMode: string(deref(sc.VolumeBindingMode))}
	if sc.AllowedTopologies != nil {
		if err := parseInto(out, map[string]any{"allowedTopologies": sc.AllowedTopologies}, path); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CSINodeFromKube converts a storage.k8s.io/v1 CSINode.
func CSINodeFromKube(n *storagev1.CSINode, path string) (*pb.CSINode, error) {
	if err := named(n.Name, path, "CSINode"); err != nil {
		return nil, err
	}
	out := &pb.CSINode{Name: n.Name, Annotations: copyMap(n.Annotations)}
	if n.Spec.Drivers != nil {
		if err := parseInto(out, map[string]any{"drivers": n.Spec.Drivers}, join(path, "spec")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CSIDriverFromKube converts a storage.k8s.io/v1 CSIDriver.
func CSIDriverFromKube(d *storagev1.CSIDriver, path string) (*pb.CSIDriver, error) {
	if err := named(d.Name, path, "CSIDriver"); err != nil {
		return nil, err
	}
	return &pb.CSIDriver{Name: d.Name, StorageCapacity: deref(d.Spec.StorageCapacity),
		PreventPodSchedulingIfMissing: deref(d.Spec.PreventPodSchedulingIfMissing)}, nil
}

// CSIStorageCapacityFromKube converts a storage.k8s.io/v1 CSIStorageCapacity.
func CSIStorageCapacityFromKube(c *storagev1.CSIStorageCapacity, path string) (*pb.CSIStorageCapacity, error) {
	if err := named(c.Name, path, "CSIStorageCapacity"); err != nil {
		return nil, err
	}
	out := &pb.CSIStorageCapacity{Name: c.Name, Namespace: c.Namespace, StorageClassName: c.StorageClassName}
	var err error
	if c.Capacity != nil {
		if out.Capacity, err = quantityText(*c.Capacity, join(path, "capacity")); err != nil {
			return nil, err
		}
	}
	if c.MaximumVolumeSize != nil {
		if out.MaximumVolumeSize, err = quantityText(*c.MaximumVolumeSize, join(path, "maximumVolumeSize")); err != nil {
			return nil, err
		}
	}
	if c.NodeTopology != nil {
		if err := parseInto(out, map[string]any{"nodeTopology": c.NodeTopology}, path); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// VolumeAttachmentFromKube converts a storage.k8s.io/v1 VolumeAttachment.
func VolumeAttachmentFromKube(a *storagev1.VolumeAttachment, path string) (*pb.VolumeAttachment, error) {
	if err := named(a.Name, path, "VolumeAttachment"); err != nil {
		return nil, err
	}
	return &pb.VolumeAttachment{Name: a.Name, Attacher: a.Spec.Attacher, NodeName: a.Spec.NodeName,
		PersistentVolumeName: deref(a.Spec.Source.PersistentVolumeName)}, nil
}

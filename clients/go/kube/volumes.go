package kube

// A pod's spec.volumes (clients/schedsvc_client/kube_volumes.py): the sources kube's volume
// plugins read become their own fields, any other known source is sent as `other` by its name,
// a source we do not know is refused by name.

import (
	"reflect"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	corev1 "k8s.io/api/core/v1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// modelledSources maps spec.volumes[].<source> to its field on pb.Volume.
var modelledSources = map[string]string{
	"persistentVolumeClaim": "persistent_volume_claim", "ephemeral": "ephemeral", "csi": "csi",
	"gcePersistentDisk": "gce_persistent_disk", "awsElasticBlockStore": "aws_elastic_block_store",
	"iscsi": "iscsi", "rbd": "rbd", "azureDisk": "azure_disk", "cinder": "cinder",
	"portworxVolume": "portworx_volume", "azureFile": "azure_file", "vsphereVolume": "vsphere_volume",
}

// otherSources are core/v1 VolumeSource's other members: read by no scheduler plugin.
var otherSources = setOf("hostPath", "emptyDir", "gitRepo", "secret", "nfs", "glusterfs",
	"flexVolume", "cephfs", "flocker", "downwardAPI", "fc", "configMap", "quobyte",
	"photonPersistentDisk", "projected", "scaleIO", "storageos", "image")

func setOf(items ...string) map[string]bool {
	out := make(map[string]bool, len(items))
	for _, s := range items {
		out[s] = true
	}
	return out
}

// setSources is the JSON names of a source struct's set (non-nil) members, and their values.
func setSources(src any, skip map[string]bool) ([]string, map[string]any) {
	v := reflect.ValueOf(src)
	t := v.Type()
	var names []string
	values := map[string]any{}
	for i := 0; i < t.NumField(); i++ {
		f := v.Field(i)
		name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		if name == "" || name == "-" || skip[name] || f.Kind() != reflect.Pointer || f.IsNil() {
			continue
		}
		names = append(names, name)
		values[name] = f.Interface()
	}
	return names, values
}

// claimSpecInto reads a claim's spec (a PersistentVolumeClaim's, an ephemeral template's) into
// out, a pb.PersistentVolumeClaim or pb.PersistentVolumeClaimSpec (their fields share names):
// access modes, selector, requests.storage only, volume name and mode, the classes (set when
// the spec sets them: unset differs from "").
func claimSpecInto(out proto.Message, spec *corev1.PersistentVolumeClaimSpec, path string) error {
	m := out.ProtoReflect()
	fields := m.Descriptor().Fields()
	modes := m.Mutable(fields.ByName("access_modes")).List()
	for _, mode := range spec.AccessModes {
		modes.Append(protoreflect.ValueOfString(string(mode)))
	}
	if spec.Selector != nil {
		if err := parseInto(out, map[string]any{"selector": spec.Selector}, path); err != nil {
			return err
		}
	}
	requests, err := quantities(spec.Resources.Requests, join(path, "resources.requests"))
	if err != nil {
		return err
	}
	if s, ok := requests["storage"]; ok {
		m.Mutable(fields.ByName("requests")).Map().Set(
			protoreflect.ValueOfString("storage").MapKey(), protoreflect.ValueOfString(s))
	}
	m.Set(fields.ByName("volume_name"), protoreflect.ValueOfString(spec.VolumeName))
	m.Set(fields.ByName("volume_mode"), protoreflect.ValueOfString(string(deref(spec.VolumeMode))))
	for name, v := range map[protoreflect.Name]*string{"storage_class_name": spec.StorageClassName,
		"volume_attributes_class_name": spec.VolumeAttributesClassName} {
		if v != nil {
			m.Set(fields.ByName(name), protoreflect.ValueOfString(*v))
		}
	}
	return nil
}

func ephemeralFromKube(src *corev1.EphemeralVolumeSource, path string) (*pb.EphemeralVolumeSource, error) {
	out := &pb.EphemeralVolumeSource{}
	tpl := src.VolumeClaimTemplate
	if tpl == nil {
		return out, nil // the server refuses it, naming the field
	}
	tplPath := join(path, "volumeClaimTemplate")
	t := &pb.PersistentVolumeClaimTemplate{Labels: copyMap(tpl.Labels),
		Annotations: copyMap(tpl.Annotations), Spec: &pb.PersistentVolumeClaimSpec{}}
	if err := claimSpecInto(t.Spec, &tpl.Spec, join(tplPath, "spec")); err != nil {
		return nil, err
	}
	out.VolumeClaimTemplate = t
	return out, nil
}

func volumeFromKube(vol *corev1.Volume, path string) (*pb.Volume, error) {
	out := &pb.Volume{Name: vol.Name}
	sources, values := setSources(vol.VolumeSource, nil)
	if len(sources) != 1 {
		return nil, objErr(path, "a volume has exactly one source, not %s", pyList(sources))
	}
	kind := sources[0]
	srcPath := join(path, kind)
	field, modelled := modelledSources[kind]
	switch {
	case field == "ephemeral":
		eph, err := ephemeralFromKube(vol.Ephemeral, srcPath)
		if err != nil {
			return nil, err
		}
		out.Source = &pb.Volume_Ephemeral{Ephemeral: eph}
	case modelled:
		if err := parseInto(out, map[string]any{kind: values[kind]}, path); err != nil {
			return nil, err
		}
		setEmptySource(out, field)
	case otherSources[kind]:
		out.Source = &pb.Volume_Other{Other: kind}
	default:
		return nil, objErr(srcPath, "unknown volume source %s", pyRepr(kind))
	}
	return out, nil
}

func volumesFromKube(vols []corev1.Volume, listPath string) ([]*pb.Volume, error) {
	var out []*pb.Volume
	for i := range vols {
		v, err := volumeFromKube(&vols[i], index(listPath, i))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// setEmptySource sets the oneof member `field` when the source parsed to an empty message
// (SetInParent in the Python client: a source with no field set is still that source).
func setEmptySource(msg proto.Message, field string) {
	m := msg.ProtoReflect()
	m.Mutable(m.Descriptor().Fields().ByName(protoreflect.Name(field)))
}

package kube

// What a simulated drain reads of a v1.Pod (clients/schedsvc_client/kube_disruption.py): the
// controller's kind and the annotations the cluster-autoscaler's drainability rules read, read
// as it reads them.

import (
	"regexp"
	"strings"

	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

const (
	annotationMirror             = "kubernetes.io/config.mirror"
	annotationSafeToEvict        = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	annotationSafeToEvictVolumes = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
)

var volumeName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func controllerField(meta *metav1.ObjectMeta, field string) string {
	owner := controllerOf(meta)
	if owner == nil {
		return ""
	}
	if field == "kind" {
		return owner.Kind
	}
	return string(owner.UID)
}

// setDisruption fills Pod.disruption, left unset when nothing in it is set. safe-to-evict is
// compared with "true" and "false" literally; the local-volumes list is split at commas
// without trimming, an entry that is no volume name dropped.
func setDisruption(out *pb.Pod, meta *metav1.ObjectMeta) {
	notes := meta.Annotations
	safe := notes[annotationSafeToEvict]
	if safe != "true" && safe != "false" {
		safe = ""
	}
	var volumes []string
	for _, v := range strings.Split(notes[annotationSafeToEvictVolumes], ",") {
		if volumeName.MatchString(v) {
			volumes = append(volumes, v)
		}
	}
	_, mirror := notes[annotationMirror]
	d := &pb.PodDisruption{ControllerKind: controllerField(meta, "kind"), Mirror: mirror,
		SafeToEvict: safe, SafeToEvictLocalVolumes: volumes}
	if proto.Size(d) > 0 {
		out.Disruption = d
	}
}

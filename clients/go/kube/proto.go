package kube

import (
	"encoding/json"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// parseInto reads the parts of a Kubernetes object our proto mirrors field for field
// (affinity, tolerations, spreading constraints, taints, images, selectors, volume sources)
// into msg through protobuf's JSON mapping, as the Python client's parse_into does: the object
// is written as Kubernetes JSON, unknown fields are dropped, and the result is merged into msg.
func parseInto(msg proto.Message, fields map[string]any, path string) error {
	data, err := json.Marshal(fields)
	if err != nil {
		return objErr(path, "%v", err)
	}
	part := msg.ProtoReflect().New().Interface()
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, part); err != nil {
		return objErr(path, "%s", strings.TrimSpace(err.Error()))
	}
	proto.Merge(msg, part)
	return nil
}

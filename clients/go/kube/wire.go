package kube

import (
	"fmt"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MarshalCanonical serializes m deterministically in one canonical order, the one the
// shared vectors hold: every message's fields in field-number order, repeated elements in
// their order, map entries ordered by key. Python's deterministic serialization writes
// exactly that; Go's writes the same bytes except that it puts a oneof's member after all
// other fields ("historic wire output"), so the fields are put back in number order here.
// The server reads either; this is for comparing bytes.
func MarshalCanonical(m proto.Message) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	return reorder(b, m.ProtoReflect().Descriptor())
}

type wireField struct {
	num protowire.Number
	raw []byte
}

// reorder rewrites one message's encoding with its fields in number order, recursing into
// message-typed fields (map entries included: their value may be a message).
func reorder(b []byte, md protoreflect.MessageDescriptor) ([]byte, error) {
	var fields []wireField
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		raw := b[:n+m]
		fd := md.Fields().ByNumber(num)
		if typ == protowire.BytesType && fd != nil && fd.Message() != nil {
			inner, _ := protowire.ConsumeBytes(b[n:])
			sub, err := reorder(inner, fd.Message())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fd.Name(), err)
			}
			raw = protowire.AppendBytes(protowire.AppendTag(nil, num, typ), sub)
		}
		fields = append(fields, wireField{num, raw})
		b = b[n+m:]
	}
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].num < fields[j].num })
	var out []byte
	for _, f := range fields {
		out = append(out, f.raw...)
	}
	return out, nil
}

package kube

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	pb "github.com/schedsvc/schedsvc/clients/go/schedsvcv1"
)

// vectorsDir is tests/data/vectors of the repository (tools/client_vectors.py writes the
// expected files from the Python client; this test holds the Go client to the same bytes).
const vectorsDir = "../../../tests/data/vectors"

func readOptional(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(data), "\n")
}

func TestVectors(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join(vectorsDir, "*.input.json"))
	if err != nil || len(inputs) < 30 {
		t.Fatalf("expected the shared vectors under %s, found %d (%v)", vectorsDir, len(inputs), err)
	}
	for _, input := range inputs {
		stem := strings.TrimSuffix(filepath.Base(input), ".input.json")
		t.Run(stem, func(t *testing.T) {
			base := filepath.Join(vectorsDir, stem)
			mode := ""
			if i := strings.LastIndex(stem, "."); i >= 0 {
				mode = stem[i+1:]
			}
			data, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			items, err := DecodeList(data)
			if err != nil {
				t.Fatal(err)
			}
			cluster, err := Convert(items, Options{IgnoreUnmodelled: mode == "lenient", RescheduleAll: mode == "reschedule"})
			wantErr := readOptional(t, base+".error.txt")
			if wantErr != "" {
				if err == nil || err.Error() != wantErr {
					t.Fatalf("error\n got: %v\nwant: %s", err, wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := cluster.Report.Render(), readOptional(t, base+".report.txt"); got != want {
				t.Errorf("report\n got: %s\nwant: %s", got, want)
			}
			req := cluster.UpdateSnapshotRequest()
			got, err := MarshalCanonical(req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(base + ".binpb")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				text, _ := prototext.MarshalOptions{Multiline: true}.Marshal(req)
				t.Fatalf("binary form differs from the Python client's (%d vs %d bytes); Go's:\n%s", len(got), len(want), text)
			}
			text, err := os.ReadFile(base + ".txtpb")
			if err != nil {
				t.Fatal(err)
			}
			fromText := &pb.UpdateSnapshotRequest{}
			if err := prototext.Unmarshal(text, fromText); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(fromText, req) {
				t.Fatal("text form differs from the conversion")
			}
		})
	}
}

// Command schedsvc-kubeconvert converts Kubernetes JSON (`kubectl get ... -o json`) into a
// schedsvc.v1 UpdateSnapshotRequest with the Go client's converter, as the shared vectors
// and the conformance cross-check need it.
//
//	schedsvc-kubeconvert [-text] [-lenient] [-reschedule-all] [FILE]   # request on stdout
//	schedsvc-kubeconvert -normalize [FILE]   # the objects as client-go writes them back
//	schedsvc-kubeconvert -cases FILE.jsonl   # one length-prefixed request per case line
//
// Binary output is deterministic (map entries ordered by key); errors go to stderr, exit 1.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/schedsvc/schedsvc/clients/go/kube"
)

func main() {
	text := flag.Bool("text", false, "write the protobuf text form")
	lenient := flag.Bool("lenient", false, "drop unmodelled fields, report them on stderr")
	reschedule := flag.Bool("reschedule-all", false, "read every pod as a new one")
	normalize := flag.Bool("normalize", false, "write the objects back as client-go encodes them")
	cases := flag.Bool("cases", false, "input is JSONL, one kind: List per line")
	flag.Parse()
	in := io.Reader(os.Stdin)
	if flag.NArg() > 0 {
		f, err := os.Open(flag.Arg(0))
		if err != nil {
			fail(err)
		}
		defer f.Close()
		in = f
	}
	opts := kube.Options{IgnoreUnmodelled: *lenient, RescheduleAll: *reschedule}
	if *cases {
		fail(convertCases(in, opts))
		return
	}
	data, err := io.ReadAll(in)
	if err != nil {
		fail(err)
	}
	items, err := kube.DecodeList(data)
	if err != nil {
		fail(err)
	}
	if *normalize {
		fail(writeNormalized(items))
		return
	}
	cluster, err := kube.Convert(items, opts)
	if err != nil {
		fail(err)
	}
	if !cluster.Report.Empty() {
		fmt.Fprintln(os.Stderr, cluster.Report.Render())
	}
	req := cluster.UpdateSnapshotRequest()
	var out []byte
	if *text {
		out, err = prototext.MarshalOptions{Multiline: true}.Marshal(req)
	} else {
		out, err = kube.MarshalCanonical(req)
	}
	if err != nil {
		fail(err)
	}
	_, err = os.Stdout.Write(out)
	fail(err)
}

// convertCases writes, per input line, a 4-byte big-endian length and the request ("" when
// the line could not be converted, its error on stderr).
func convertCases(in io.Reader, opts kube.Options) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), 1<<30)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for n := 1; scanner.Scan(); n++ {
		var out []byte
		items, err := kube.DecodeList(scanner.Bytes())
		var cluster *kube.Cluster
		if err == nil {
			cluster, err = kube.Convert(items, opts)
		}
		if err == nil {
			out, err = kube.MarshalCanonical(cluster.UpdateSnapshotRequest())
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "line %d: %v\n", n, err)
			out = nil
		}
		if err := binary.Write(w, binary.BigEndian, uint32(len(out))); err != nil {
			return err
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return scanner.Err()
}

func writeNormalized(items []kube.Item) error {
	objs := make([]any, 0, len(items))
	for _, it := range items {
		if it.Object == nil {
			objs = append(objs, map[string]string{"kind": it.Kind})
			continue
		}
		raw, err := json.Marshal(it.Object)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		m["kind"] = it.Kind
		objs = append(objs, m)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Package kube converts client-go objects (corev1.Node, corev1.Pod, ...) into schedsvc.v1
// messages exactly as the Python client (clients/schedsvc_client/kube*.py) converts the same
// objects' JSON: the same fields, the same API-server defaults, the same refusal of the fields
// kube-scheduler acts on and schedsvc does not model, with the same JSON paths and messages.
// The shared vectors (tests/data/vectors) hold both converters to byte-identical output.
//
// One difference is in the types, not the conversion: a resource.Quantity does not keep the
// text it was parsed from, so a quantity comes out in kube's canonical form ("0.1" -> "100m"),
// as the API server stores it and `kubectl get -o json` prints it; the Python client keeps the
// text as written. The value, and so every answer, is the same.
package kube

import (
	"fmt"
	"sort"
	"strings"
)

// ObjectError is an object we cannot convert; Path is the JSON path of the bad field
// (`items[3].spec.containers[0].resources.requests.cpu`), as the Python client's
// KubeObjectError names it.
type ObjectError struct {
	Path        string
	Description string
}

func (e *ObjectError) Error() string {
	if e.Path == "" {
		return e.Description
	}
	return e.Path + ": " + e.Description
}

func objErr(path, format string, args ...any) *ObjectError {
	return &ObjectError{Path: path, Description: fmt.Sprintf(format, args...)}
}

// join is `path.key`; a path naming only a file (`pods.json:`) takes the key directly.
func join(path, key string) string {
	if path != "" && !strings.HasSuffix(path, ":") {
		return path + "." + key
	}
	return path + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// pyRepr spells a string as Python's repr() does, so messages match the Python client's.
func pyRepr(s string) string {
	quote := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		quote = `"`
	}
	var b strings.Builder
	b.WriteString(quote)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case string(r) == quote:
			b.WriteString(`\` + quote)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(quote)
	return b.String()
}

// pyList spells a sorted list of strings as Python's repr() of a list does.
func pyList(items []string) string {
	sorted := append([]string(nil), items...)
	sort.Strings(sorted)
	parts := make([]string, len(sorted))
	for i, s := range sorted {
		parts[i] = pyRepr(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func sortedKeys[K ~string, V any](m map[K]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	return keys
}

func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

package render

import (
	"bufio"
	"errors"
	"io"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/istioctl-installer/istioctl/operator/render/internal/fastyaml"
)

// kindRank orders output as upstream's manifest generate does: CRDs first, Services last,
// every kind not named here with Deployment.
var kindRank = map[string]int{
	"CustomResourceDefinition":       0,
	"ServiceAccount":                 1,
	"ClusterRole":                    1,
	"ClusterRoleBinding":             2,
	"ValidatingWebhookConfiguration": 3,
	"ConfigMap":                      4,
	"Deployment":                     5,
	"HorizontalPodAutoscaler":        6,
	"Service":                        7,
}

func rank(kind string) int {
	if r, ok := kindRank[kind]; ok {
		return r
	}
	return kindRank["Deployment"]
}

// Sort orders objects by kind rank, then group, kind, namespace and name.
func Sort(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool { return less(objs[i], objs[j]) })
}

func less(a, b *unstructured.Unstructured) bool {
	if ra, rb := rank(a.GetKind()), rank(b.GetKind()); ra != rb {
		return ra < rb
	}
	ga, gb := a.GroupVersionKind().Group, b.GroupVersionKind().Group
	if ga != gb {
		return ga < gb
	}
	if a.GetKind() != b.GetKind() {
		return a.GetKind() < b.GetKind()
	}
	if a.GetNamespace() != b.GetNamespace() {
		return a.GetNamespace() < b.GetNamespace()
	}
	return a.GetName() < b.GetName()
}

// YAML prints objects as one stream, keys sorted, separated by ---.
func YAML(objs []*unstructured.Unstructured) ([]byte, error) {
	texts, err := printAll(objs)
	if err != nil {
		return nil, err
	}
	return join(texts), nil
}

// Text is a printed stream: objects' YAML texts, separated by --- when written. Written
// as it is, the texts are not copied into one buffer (most of a MiB, on top of them).
type Text [][]byte

// WriteTo writes the stream to w, through a small buffer: a write per text would be a
// system call per object.
func (t Text) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	var n int64
	for i, b := range t {
		if i > 0 {
			k, _ := bw.WriteString("---\n")
			n += int64(k)
		}
		k, _ := bw.Write(b)
		n += int64(k)
	}
	return n, bw.Flush()
}

// Bytes is the stream in one slice.
func (t Text) Bytes() []byte { return join(t) }

// Print prints manifests as YAML prints All(ms), using the texts a Renderer with
// Printed set made ahead.
func Print(ms []Manifest) (Text, error) {
	type printed struct {
		obj  *unstructured.Unstructured
		text []byte
	}
	var all []printed
	for _, m := range ms {
		for i, o := range m.Objects {
			p := printed{obj: o}
			if i < len(m.texts) {
				p.text = m.texts[i]
			}
			all = append(all, p)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return less(all[i].obj, all[j].obj) })
	texts := make([][]byte, len(all))
	var missing []*unstructured.Unstructured
	var at []int
	for i, p := range all {
		if texts[i] = p.text; texts[i] == nil {
			missing, at = append(missing, p.obj), append(at, i)
		}
	}
	late, err := printAll(missing)
	if err != nil {
		return nil, err
	}
	for k, i := range at {
		texts[i] = late[k]
	}
	return texts, nil
}

// printAll prints each object, in parallel: an object read from a pre-rendered file and
// left untouched prints as its text.
func printAll(objs []*unstructured.Unstructured) ([][]byte, error) {
	texts := make([][]byte, len(objs))
	errs := make([]error, len(objs))
	each(len(objs), func(i int) {
		if raw, ok := pristine.Load(objs[i]); ok {
			texts[i] = raw.([]byte)
			return
		}
		texts[i], errs[i] = fastyaml.Marshal(objs[i].Object)
	})
	return texts, errors.Join(errs...)
}

// join separates texts by ---, in one allocation.
func join(texts [][]byte) []byte {
	size := 0
	for _, t := range texts {
		size += len(t) + len("---\n")
	}
	buf := make([]byte, 0, size)
	for i, t := range texts {
		if i > 0 {
			buf = append(buf, "---\n"...)
		}
		buf = append(buf, t...)
	}
	return buf
}

// All flattens manifests into one sorted list.
func All(ms []Manifest) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, m := range ms {
		out = append(out, m.Objects...)
	}
	Sort(out)
	return out
}

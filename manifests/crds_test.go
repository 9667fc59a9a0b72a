package manifests_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/manifests"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

func TestMain(m *testing.M) { cluster.Main(m) }

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// readDocs splits a YAML stream into objects.
func readDocs(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decoding YAML: %v", err)
		}
		if m == nil {
			continue
		}
		// Round-trip through JSON so numbers have the types the client expects.
		b, err := sigsyaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal(b, &u.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
}

// TestCRDsOnCluster applies the generated CRDs to the real apiserver, waits until each is
// Established, then checks that valid resources of every kind are accepted and invalid
// ones are rejected with the offending field's path.
func TestCRDsOnCluster(t *testing.T) {
	c := cluster.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	data, err := manifests.Charts.ReadFile("charts/base/crds/crd-all.gen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crds := readDocs(t, data)
	if len(crds) != 15 {
		t.Fatalf("%d CRDs, want 15", len(crds))
	}
	plural := map[schema.GroupKind]string{}
	// The CRDs go again at the end: they carry no install's labels, and an istioctl install
	// in a later test refuses to take over objects it did not create.
	t.Cleanup(func() {
		ctx := context.Background()
		for _, crd := range crds {
			_ = c.Dynamic.Resource(crdGVR).Delete(ctx, crd.GetName(), metav1.DeleteOptions{})
		}
		for _, crd := range crds {
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
				_, err := c.Dynamic.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			})
			if err != nil {
				t.Errorf("CRD %s not gone: %v", crd.GetName(), err)
			}
		}
	})
	for _, crd := range crds {
		b, err := crd.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		force := true
		if _, err := c.Dynamic.Resource(crdGVR).Patch(ctx, crd.GetName(), types.ApplyPatchType, b,
			metav1.PatchOptions{FieldManager: "istioctl-e2e", Force: &force}); err != nil {
			t.Fatalf("applying CRD %s: %v", crd.GetName(), err)
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		p, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		plural[schema.GroupKind{Group: group, Kind: kind}] = p
	}
	for _, crd := range crds {
		name := crd.GetName()
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			got, err := c.Dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
				if m["type"] == "NamesAccepted" && m["status"] == "False" {
					return false, fmt.Errorf("names not accepted: %v", m["message"])
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not Established: %v", name, err)
		}
	}

	ns := c.Namespace(t)
	create := func(u *unstructured.Unstructured) error {
		gvk := u.GroupVersionKind()
		p, ok := plural[gvk.GroupKind()]
		if !ok {
			return fmt.Errorf("no CRD for %s", gvk)
		}
		gvr := gvk.GroupVersion().WithResource(p)
		// The API takes a moment after Established to serve every version.
		var err error
		for i := 0; i < 50; i++ {
			_, err = c.Dynamic.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{FieldValidation: "Strict"})
			if !apierrors.IsNotFound(err) {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return err
	}

	t.Run("valid", func(t *testing.T) {
		files, _ := filepath.Glob("../testdata/crds/valid/*.yaml")
		seen := map[string]bool{}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range readDocs(t, data) {
				if err := create(u); err != nil {
					t.Errorf("%s: %s %s rejected: %v", f, u.GetKind(), u.GetName(), err)
				}
				seen[u.GetKind()] = true
			}
		}
		for gk := range plural {
			if !seen[gk.Kind] {
				t.Errorf("no valid %s in testdata/crds/valid", gk.Kind)
			}
		}
	})

	t.Run("invalid", func(t *testing.T) {
		files, _ := filepath.Glob("../testdata/crds/invalid/*.yaml")
		if len(files) < 15 {
			t.Errorf("only %d invalid resources", len(files))
		}
		for _, f := range files {
			t.Run(filepath.Base(f), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				first, _, _ := strings.Cut(string(data), "\n")
				want, ok := strings.CutPrefix(first, "# want: ")
				if !ok {
					t.Fatalf("%s: first line must be '# want: <field path>'", f)
				}
				docs := readDocs(t, data)
				if len(docs) != 1 {
					t.Fatalf("%s: want one object, got %d", f, len(docs))
				}
				err = create(docs[0])
				if err == nil {
					t.Fatalf("accepted, want a rejection naming %s", want)
				}
				if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
					t.Errorf("want Invalid or BadRequest, got %v", err)
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not name %s: %v", want, err)
				}
			})
		}
	})
}
